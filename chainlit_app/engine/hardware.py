"""What the machine offers (GPUs and their memory, CPU features), so the engine gets the right build and flags."""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def has_nvidia_gpu() -> bool:
    """True when `nvidia-smi` runs and lists a GPU."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return False
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


@lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of the first core (empty where /proc/cpuinfo is missing)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def cpu_supports_bf16() -> bool:
    """bf16 compute on CPU needs AVX512-BF16 or AMX (what was measured without them: command.effective_dtype)."""
    return bool({"avx512_bf16", "amx_bf16"} & cpu_flags())


def parse_nvidia_smi(text: str) -> list[tuple[int, int]]:
    """`nvidia-smi --query-gpu=memory.total,memory.free --format=csv,noheader,nounits` -> [(total, free)] MiB."""
    rows: list[tuple[int, int]] = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            rows.append((int(parts[0]), int(parts[1])))
    return rows


def query_gpus() -> list[tuple[int, int]] | None:
    """(total, free) MiB per GPU; None without nvidia-smi or when it fails."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        done = subprocess.run([exe, "--query-gpu=memory.total,memory.free", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_nvidia_smi(done.stdout) if done.returncode == 0 else None
