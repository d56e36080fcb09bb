"""A stack the excerpt cut inside a kernel launch, before its exception line (`cut_in_kernel_launch`).

The place a kernel fails at names a cause only with the exception's words (`no kernel image`, an illegal
memory access): without them it says where the engine was, not what went wrong. Start-up runs every kernel once
(profiling, warm-up, capture), and a kernel failing there is read by its place as a build that does not fit;
a stack cut inside a launch (`fused_experts_impl` → `invoke_fused_moe_kernel` → Triton's `jit.py run`,
DeepSeek-OCR #299) that shows no start-up function is read as native code is without its stack: it runs once the
model is loaded, so in an excerpt that shows no phase, a crash while serving (engine_error by the phase).
"""

from __future__ import annotations

import re

from .events import Traceback
from .phases import stack_shows_starting

MECHANISM_ID = "cut_in_kernel_launch"
# the innermost frame launches a kernel: Triton's JIT, torch's operator dispatch, vLLM's custom ops
_KERNEL_LAUNCH = re.compile(r"triton/runtime/(?:jit|autotuner)\.py|torch/_ops\.py|vllm/_custom_ops\.py")


def cut_in_kernel_launch(tb: Traceback) -> bool:
    """True for a stack with no exception line whose innermost frame launches a kernel, and no start-up
    function on it."""
    if tb.exception_type or tb.message or not tb.frames:
        return False
    return bool(_KERNEL_LAUNCH.search(tb.frames[-1][0])) and not stack_shows_starting(tb.functions)
