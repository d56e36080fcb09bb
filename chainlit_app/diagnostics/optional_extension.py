"""vLLM's compiled CUDA extension (`vllm._C`) is missing by design on a server that is not CUDA's or ROCm's.

vLLM imports `vllm._C` as it starts and logs `WARNING … Failed to import from vllm._C with
ModuleNotFoundError("No module named 'vllm._C'")` when the install has none. A build for the CPU, AWS Neuron,
TPU, IBM Spyre (vLLM 0.5 shows `device_config=cpu` for it) or a platform plugin (vllm-ascend) has none, and
serves. On a CUDA server the same warning is a build without its kernels (`vllm_c_import`, weak). The engine
names its device after the warning, so the whole log settles it: a file's reading, not the live tail's (the app
knows the device of the engine it runs). An extension that is there but does not load (`ImportError(
'libcudart.so.12: cannot open shared object file')`) is a broken build on any device, and stays.
"""

from __future__ import annotations

import re

from .findings import Finding

# The engine's own words for its device (its config line, its arguments, its platform detection, a TPU's info
# line), never a tensor's repr (`device='cpu'` in a traceback) or an offload setting
_DEVICE_NAMED = re.compile(
    r"\bdevice_config=['\"]?(?P<config>\w+)|\bNamespace\(.*?\bdevice=['\"](?P<arg>\w+)|"
    r"[Dd]etected platform:? (?P<platform>\w+)|(?P<plugin>[Pp]latform plugin \w+ is activated)|"
    r"(?P<tpu>\bTPU info: |\btpu_platform\.py)"
)
_WITHOUT_EXTENSION = {"cpu", "neuron", "tpu", "xpu", "hpu", "openvino"}


class DeviceWatch:
    """Follows a log's lines for the device the engine names: `not_cuda` is true once it has named one built
    without the CUDA extension and never CUDA or ROCm (a CUDA naming wins)."""

    def __init__(self) -> None:
        self._other = False
        self._cuda = False

    @property
    def not_cuda(self) -> bool:
        return self._other and not self._cuda

    def feed(self, text: str) -> None:
        if "device" not in text and "latform" not in text and "TPU" not in text and "tpu" not in text:
            return
        for m in _DEVICE_NAMED.finditer(text):
            named = (m["config"] or m["arg"] or m["platform"] or "").lower()
            if named in ("cuda", "rocm"):
                self._cuda = True
            elif named in _WITHOUT_EXTENSION or m["plugin"] or m["tpu"]:
                self._other = True


def without_absent_extension(findings: list[Finding]) -> list[Finding]:
    """The findings less vLLM's warning that it has no compiled CUDA extension at all."""
    return [f for f in findings if not (f.rule == "vllm_c_import" and "WARNING" in f.text
                                        and "ModuleNotFoundError" in f.text)]
