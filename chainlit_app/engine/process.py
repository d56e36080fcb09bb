"""One child process in its own process group: spawn, signal the whole group, reap.

The split follows honcho: this module knows processes, the supervisor knows policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

import psutil

_PR_SET_PDEATHSIG = 1

# The reaper: a tiny process outside the group that gets SIGTERM when the app dies (even by SIGKILL,
# through PR_SET_PDEATHSIG) and then SIGKILLs the whole group. The server itself dies with the app the
# same way, but vLLM's engine core and resource tracker would otherwise outlive it. It exits by itself
# once the group is gone.
_REAPER = """
import os, signal, sys, time
pgid = int(sys.argv[1])
def reap(*_):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    os._exit(0)
signal.signal(signal.SIGTERM, reap)
if os.getppid() != int(sys.argv[2]):
    reap()
while True:
    time.sleep(0.5)
    try:
        os.killpg(pgid, 0)
    except OSError:
        os._exit(0)
"""


def _set_parent_death_signal(sig: signal.Signals) -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, sig)


def _die_with_parent() -> None:
    """Runs in the child before exec: its own process group, and death when the app dies."""
    os.setsid()
    _set_parent_death_signal(signal.SIGKILL)


def _reaper_setup() -> None:
    os.setsid()
    _set_parent_death_signal(signal.SIGTERM)


class GroupProcess:
    """A child that leads its own process group, so stopping it stops every process it made.

    Spawning is synchronous (`spawn`), so the app can launch vLLM while it is still importing, before
    any event loop runs; waiting is asynchronous (`wait`, through a pidfd the event loop watches).
    Spawn from a thread that lives as long as the app: the parent-death signal is tied to the thread."""

    def __init__(self, argv: list[str], env: dict[str, str], log: IO[bytes], cwd: Path | None = None):
        self.argv = argv
        self.env = env
        self.log = log
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self.reaper: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll() if self.proc else None

    def spawn(self) -> None:
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=str(self.cwd) if self.cwd else None,
            preexec_fn=_die_with_parent,
            close_fds=True,
        )
        self.reaper = subprocess.Popen(
            [sys.executable, "-c", _REAPER, str(self.proc.pid), str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=_reaper_setup, close_fds=True,
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    async def wait(self) -> int:
        """The exit code, once the process has exited (reaped here)."""
        proc = self.proc
        assert proc is not None
        code = proc.poll()
        if code is not None:
            return code
        try:
            pidfd = os.pidfd_open(proc.pid)
        except (OSError, AttributeError):  # no pidfd (old kernel): poll
            while (code := proc.poll()) is None:
                await asyncio.sleep(0.1)
            return code
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[None] = loop.create_future()

        def on_exit() -> None:
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(pidfd, on_exit)
        try:
            await exited
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        return proc.wait()

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
            if self.proc.poll() is not None and not self.group_members():
                return self.proc.returncode
            await asyncio.sleep(0.2)
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            async with asyncio.timeout(10):
                await self.wait()
        return self.proc.poll()

    def stop_reaper(self) -> None:
        """The group is gone: the reaper would exit by itself within half a second; do it now."""
        if self.reaper is not None and self.reaper.poll() is None:
            self.reaper.kill()
            self.reaper.wait()

    def rss_bytes(self) -> int:
        """Resident memory of the whole group."""
        total = 0
        for proc in self.group_members():
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
        return total
