"""One child process in its own process group: spawn, signal the whole group, reap.

The split follows honcho: this module knows processes, the supervisor knows policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
from pathlib import Path
from typing import IO

import psutil

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Runs in the child before exec: a SIGKILL of the app must not orphan the server."""
    os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class GroupProcess:
    """A child that leads its own process group, so stopping it stops every process it made."""

    def __init__(self, argv: list[str], env: dict[str, str], log: IO[bytes], cwd: Path | None = None):
        self.argv = argv
        self.env = env
        self.log = log
        self.cwd = cwd
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode if self.proc else None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=self.log,
            stderr=asyncio.subprocess.STDOUT,
            env=self.env,
            cwd=str(self.cwd) if self.cwd else None,
            preexec_fn=_die_with_parent,
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def wait(self) -> int:
        assert self.proc is not None
        return await self.proc.wait()

    def group_members(self) -> list[psutil.Process]:
        """Every live process of the group (the server, its engine core and workers)."""
        if self.proc is None:
            return []
        pgid = self.proc.pid
        members = []
        for proc in psutil.process_iter(["pid"]):
            with contextlib.suppress(psutil.Error, ProcessLookupError):
                if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                    members.append(proc)
        return members

    def signal_group(self, sig: signal.Signals) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    async def stop(self, grace: float) -> int | None:
        """SIGTERM to the group, SIGKILL to the group after `grace` seconds (vLLM can hang on SIGTERM)."""
        if self.proc is None:
            return None
        self.signal_group(signal.SIGTERM)
        deadline = asyncio.get_running_loop().time() + grace
        while asyncio.get_running_loop().time() < deadline:
            if self.proc.returncode is not None and not self.group_members():
                return self.proc.returncode
            await asyncio.sleep(0.2)
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            await asyncio.wait_for(self.proc.wait(), timeout=10)
        return self.proc.returncode

    def rss_bytes(self) -> int:
        """Resident memory of the whole group."""
        total = 0
        for proc in self.group_members():
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
        return total
