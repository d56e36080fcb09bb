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

# A CPU server's own words: vLLM's platform detection, the CPU backend's classes and settings, the
# architectures vLLM serves on CPU only, a device set to cpu, a KV cache or block count for the CPU alone
_CPU = re.compile(
    r"detected platform:? cpu\b|platform is cpu|\bs390x\b|\bppc64(?:le)?\b|\bCPU ?backend\b|cpu_worker|"
    r"\bCPU(?:Worker|Executor|ModelRunner|Platform)\b|\bVLLM_CPU_\w+|\bvllm[-_]cpu\b|torch[ _]sdpa|"
    r"device(?:_config)?(?:=|: ?)['\"]?cpu\b|--device[= ]cpu\b|(?:not|only) supported on CPU|"
    r"no CUDA GPUs are available|CUDA is not available|Found no NVIDIA driver|intel_extension_for_pytorch",
    re.IGNORECASE,
)
_CPU_ONLY_CACHE = re.compile(r"CPU KV cache usage|# CPU blocks: \d")
_GPU_CACHE = re.compile(r"GPU KV cache usage|GPU blocks: \d")
# An accelerator's own words: the platform vLLM detected, CUDA devices and graphs, NCCL, the GPU attention
# backends, the vendors' names and runtimes, V0's count of GPU blocks beside the CPU's swap blocks
_ACCELERATOR = re.compile(
    r"detected platform:? (?:cuda|rocm|tpu|xpu|hpu|neuron|npu)\b|platform plugin \w+ is activated|"
    r"\bcuda:\d|device(?:_config)?=['\"]?cuda\b|cuda ?graphs?\b|cudagraph|\bnccl\b|flash[_ ]?attn|"
    r"flash ?attention|flashinfer|\bxformers\b|\bNVIDIA\b|\bH100\b|\bA100\b|\bL40S?\b|\bRTX ?\d{4}|"
    r"\bROCm\b|\bAscend\b|\bnpu:\d|\bGaudi\b|\bTPU v\d|# GPU blocks: [1-9]",
    re.IGNORECASE,
)


class PlatformWatch:
    """Follows a log's lines for the hardware they show; `accelerator` is True only with positive evidence of
    one and none of a CPU platform."""

    def __init__(self) -> None:
        self.cpu = False
        self.gpu = False

    def observe(self, line: str) -> None:
        """Read one raw line (cheap: once a CPU is seen nothing can change the verdict)."""
        if self.cpu:
            return
        if _CPU.search(line) or (_CPU_ONLY_CACHE.search(line) and not _GPU_CACHE.search(line)):
            self.cpu = True
        elif not self.gpu and _ACCELERATOR.search(line):
            self.gpu = True

    @property
    def accelerator(self) -> bool:
        return self.gpu and not self.cpu
