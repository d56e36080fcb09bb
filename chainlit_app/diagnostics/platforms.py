"""What hardware a log shows its server running on: an accelerator (GPU, NPU, TPU, …) or a CPU.

A rate is slow only against the hardware that produced it. vLLM's stats lines cannot tell: V0 prints
`GPU KV cache usage` beside `CPU KV cache usage` on a CPU server too, and V1 prints `GPU KV cache usage` on
every platform (an IBM Z CPU server decoding its normal 1.2 tokens/s printed it). So a per-request rate names
slow decoding only when the log shows an accelerator positively and no CPU platform anywhere
(`stats.py`, `stats_slow_decode`). A CPU shown anywhere wins: an accelerator's words (a CUDA version in a
banner, `nvidia-smi` absent) can be printed by a CPU build, a CPU platform's words are not printed on a GPU.
"""

from __future__ import annotations

import re

# Every evidence line holds one of these (lower-case): most lines of a busy log are passed by with this look alone
_NEEDLES = re.compile(r"cpu|cuda|nccl|gpu|platform|s390x|ppc64|sdpa|flash|nvidia|xformers|rocm|ascend|npu|tpu|gaudi|"
                      r"h100|a100|l40|rtx|device|intel_extension")
# A CPU server's own words: vLLM's platform detection, the CPU backend's classes and settings, the
# architectures vLLM serves on CPU only, a device set to cpu, a KV cache or block count for the CPU alone
# (the patterns read the lower-cased line)
_CPU = re.compile(
    r"detected platform:? cpu\b|platform is cpu|\bs390x\b|\bppc64(?:le)?\b|\bcpu ?backend\b|cpu_worker|"
    r"\bcpu(?:worker|executor|modelrunner|platform)\b|\bvllm_cpu_\w+|\bvllm[-_]cpu\b|torch[ _]sdpa|"
    r"device(?:_config)?(?:=|: ?)['\"]?cpu\b|--device[= ]cpu\b|(?:not|only) supported on cpu|"
    r"no cuda gpus are available|cuda is not available|found no nvidia driver|intel_extension_for_pytorch"
)
_CPU_ONLY_CACHE = re.compile(r"cpu kv cache usage|# cpu blocks: \d")
_GPU_CACHE = re.compile(r"gpu kv cache usage|gpu blocks: \d")
# An accelerator's own words: the platform vLLM detected, CUDA devices and graphs, NCCL, the GPU attention
# backends, the vendors' names and runtimes, V0's count of GPU blocks beside the CPU's swap blocks
_ACCELERATOR = re.compile(
    r"detected platform:? (?:cuda|rocm|tpu|xpu|hpu|neuron|npu)\b|platform plugin \w+ is activated|"
    r"\bcuda:\d|device(?:_config)?=['\"]?cuda\b|cuda ?graphs?\b|cudagraph|\bnccl\b|flash[_ ]?attn|"
    r"flash ?attention|flashinfer|\bxformers\b|\bnvidia\b|\bh100\b|\ba100\b|\bl40s?\b|\brtx ?\d{4}|"
    r"\brocm\b|\bascend\b|\bnpu:\d|\bgaudi\b|\btpu v\d|# gpu blocks: [1-9]"
)


class PlatformWatch:
    """Follows a log's lines for the hardware they show; `accelerator` is True only with positive evidence of
    one and none of a CPU platform."""

    def __init__(self) -> None:
        self.cpu = False
        self.gpu = False

    def observe(self, low: str) -> None:
        """Read one lower-cased line (cheap: a look for the needles first; once a CPU is seen nothing can change
        the verdict)."""
        if self.cpu or _NEEDLES.search(low) is None:
            return
        if "throughput" in low:  # a stats report: only its KV cache tells
            self.cpu = "cpu kv cache usage" in low and "gpu kv cache" not in low
            return
        if _CPU.search(low) or (_CPU_ONLY_CACHE.search(low) and not _GPU_CACHE.search(low)):
            self.cpu = True
        elif not self.gpu and _ACCELERATOR.search(low):
            self.gpu = True

    @property
    def accelerator(self) -> bool:
        return self.gpu and not self.cpu
