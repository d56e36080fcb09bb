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

_NOT_CUDA = re.compile(
    r"\bdevice(?:_config)?=['\"]?(?:cpu|neuron|tpu|xpu|hpu|openvino)\b|"
    r"[Dd]etected platform:? (?:cpu|neuron|tpu|xpu|hpu)\b|[Pp]latform plugin \w+ is activated"
)


class DeviceWatch:
    """Follows a log's lines for a device that is not CUDA's: `not_cuda` turns true once one is named."""

    def __init__(self) -> None:
        self.not_cuda = False

    def feed(self, text: str) -> None:
        if not self.not_cuda and ("device" in text or "latform" in text):
            self.not_cuda = _NOT_CUDA.search(text) is not None


def without_absent_extension(findings: list[Finding]) -> list[Finding]:
    """The findings less vLLM's warning that it has no compiled CUDA extension at all."""
    return [f for f in findings if not (f.rule == "vllm_c_import" and "WARNING" in f.text
                                        and "ModuleNotFoundError" in f.text)]
