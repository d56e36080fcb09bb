"""vLLM's own figures, read from a finding's evidence line: what fits in the KV cache, what the GPU has free.

A remedy computes its new value from these numbers rather than guessing: vLLM has already measured the
memory, and the doctor's messages (chainlit_app/doctor/checks_resources.py) carry the same figures.
Each reader returns None when the line does not carry its figure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from chainlit_app.i18n import Msg

# vLLM >= 0.6 (V1): "... (4.38 GiB KV cache is needed, which is larger than the available KV cache memory
# (4.00 GiB). Based on the available memory, the estimated maximum model length is 37376."
_ESTIMATED = re.compile(r"estimated maximum model length is (\d+)")
_NEEDED = re.compile(r"max seq len \((\d+)\), \(([\d.]+) GiB KV cache is needed, which is larger than the "
                     r"available KV cache memory \(([\d.]+) GiB\)")
# Older vLLM: "The model's max seq len (32768) is larger than the maximum number of tokens that can be stored
# in KV cache (16816)."
_STORED = re.compile(r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored "
                     r"in KV cache \((\d+)\)")
# The doctor: "the KV cache of 1 GiB holds 23,301 tokens (...), fewer than CHAT_MAX_MODEL_LEN=65536"
_DOCTOR_HOLDS = re.compile(r"KV cache of (\d+) GiB holds ([\d,]+) tokens .*fewer than CHAT_MAX_MODEL_LEN=(\d+)")
_DOCTOR_RAISE = re.compile(r"Raise CHAT_KV_CACHE_GIB to (\d+)")
# "Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization (0.9, 3.6 GiB)"
_FREE_ON_DEVICE = re.compile(r"Free memory on device \(([\d.]+)/([\d.]+) GiB\)")
# The doctor: "GPU 0 has 3.2 GiB free of 4.0 GiB; CHAT_GPU_MEMORY_UTILIZATION=0.9 asks for ..."
_DOCTOR_FREE = re.compile(r"has ([\d.]+) GiB free of ([\d.]+) GiB")
BLOCK = 16  # vLLM's KV block size on the CPU and most GPUs: a proportional estimate is rounded down to it


@dataclass(frozen=True)
class KvFit:
    """How many tokens the cache holds (`fits`), how the number was read, and the memory figures if given."""

    fits: int
    asked: int | None
    how: str
    needed_gib: float | None = None
    available_gib: float | None = None


def kv_fit(text: str) -> KvFit | None:
    """The longest sequence the KV cache holds, by vLLM's figure where it prints one."""
    needed = _NEEDED.search(text)
    asked = int(needed.group(1)) if needed else None
    need_gib = float(needed.group(2)) if needed else None
    have_gib = float(needed.group(3)) if needed else None
    if match := _ESTIMATED.search(text):
        return KvFit(int(match.group(1)), asked, Msg("remedy_how.estimated"), need_gib, have_gib)
    if match := _STORED.search(text):
        return KvFit(int(match.group(2)), int(match.group(1)), Msg("remedy_how.kv_tokens"))
    if match := _DOCTOR_HOLDS.search(text):
        raise_to = _DOCTOR_RAISE.search(text)
        return KvFit(int(match.group(2).replace(",", "")), int(match.group(3)), Msg("remedy_how.doctor"),
                     float(raise_to.group(1)) if raise_to else None, float(match.group(1)))
    if needed and need_gib and have_gib and asked:
        # No estimate printed: the cache grows linearly with the length, so scale and round down to a block.
        fits = int(asked * have_gib / need_gib) // BLOCK * BLOCK
        return KvFit(fits, asked, Msg("remedy_how.scaled"), need_gib, have_gib)
    return None


def gpu_free_fraction(text: str) -> tuple[float, float, float] | None:
    """(free GiB, total GiB, the largest gpu_memory_utilization that fits) from vLLM's or the doctor's line.

    The free figure is rounded where it is printed (vLLM's 3.22 may be 3.215, the doctor's 4.9 may be 4.85), so
    half a unit of its last digit is taken off before the fraction is rounded down to a hundredth."""
    match = _FREE_ON_DEVICE.search(text) or _DOCTOR_FREE.search(text)
    if not match:
        return None
    printed = match.group(1)
    free, total = float(printed), float(match.group(2))
    if total <= 0:
        return None
    decimals = len(printed.partition(".")[2])
    lowest_free = free - 0.5 * 10**-decimals
    return free, total, math.floor(lowest_free / total * 100) / 100
