"""One child process in its own process group: spawn, signal the whole group, reap.

The split follows honcho: this module knows processes, the supervisor knows policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import psutil

# The parent-death signal is set by the child itself, after the fork, in a tiny exec wrapper: a
# `preexec_fn` (Python code between fork and exec) can deadlock in a threaded parent, which the app is
# (Python's subprocess documentation says so). The wrapper runs with -I -S (no site, no .pth hook, no
# PYTHON* variables), sets PR_SET_PDEATHSIG, checks that its parent did not die before that (the signal
# would never come), and execs the real command in the same process: same pid, same process group.
_EXEC_WRAPPER = """
import ctypes, os, sys
ctypes.CDLL(None, use_errno=True).prctl(1, int(sys.argv[2]))
if os.getppid() != int(sys.argv[1]):
    os._exit(1)
try:
    os.execvp(sys.argv[3], sys.argv[3:])
except OSError as exc:
    print("cannot run %s: %s" % (sys.argv[3], exc), file=sys.stderr)
    os._exit(127)
"""

# The reaper: a tiny process outside the group that gets SIGTERM when the app dies (even by SIGKILL,
# through PR_SET_PDEATHSIG, which it sets itself) and then SIGKILLs the whole group. The server itself
# dies with the app the same way, but vLLM's engine core and resource tracker would otherwise outlive
# it. It exits by itself once the group is gone.
_REAPER = """
import ctypes, os, signal, sys, time
pgid = int(sys.argv[1])
def reap(*_):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    os._exit(0)
signal.signal(signal.SIGTERM, reap)
ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))
if os.getppid() != int(sys.argv[2]):
    reap()
while True:
    time.sleep(0.5)
    try:
        os.killpg(pgid, 0)
    except OSError:
        os._exit(0)
"""


def _python_tiny(code: str, *args: str) -> list[str]:
    """argv that runs `code` in this interpreter without site (fast: no .pth hook, no user site)."""
    return [sys.executable, "-I", "-S", "-c", code, *args]


def _require_executable(program: str, env: dict[str, str]) -> None:
    """Popen's own error for a missing program, raised here because the wrapper execs it later."""
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


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
        self._gone = False  # the group was seen empty: its number may belong to someone else by now

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll() if self.proc else None

    def spawn(self) -> None:
        """The child leads a new session (so a new group), dies by SIGKILL with the app, and has a reaper."""
        _require_executable(self.argv[0], self.env)
        self.proc = subprocess.Popen(
            _python_tiny(_EXEC_WRAPPER, str(os.getpid()), str(int(signal.SIGKILL)), *self.argv),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=str(self.cwd) if self.cwd else None,
            start_new_session=True,
            close_fds=True,
        )
        self.reaper = subprocess.Popen(
            _python_tiny(_REAPER, str(self.proc.pid), str(os.getpid())),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
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

    async def has_members(self) -> bool:
        """Whether any process of the group lives, found in a thread (the walk covers every process of the
        host: about 70 ms at 5,000 processes, which the event loop must not wait for)."""
        return bool(await asyncio.to_thread(self.group_members))

    def signal_group(self, sig: signal.Signals) -> None:
        if self.proc is None or self._gone:
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
            # The walk over every process of the host runs in a thread: the event loop serves meanwhile.
            if self.proc.poll() is not None and not await self.has_members():
                self._gone = True
                return self.proc.returncode
            await asyncio.sleep(0.2)
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            async with asyncio.timeout(10):
                await self.wait()
                # SIGKILL is sent, not done: the next start must not meet a dying engine core.
                while await self.has_members():
                    await asyncio.sleep(0.05)
                self._gone = True
        return self.proc.poll()

    def kill_now(self) -> None:
        """SIGKILL the whole group and end the reaper, synchronously (before a new spawn: a leftover
        engine core would hold its memory, on a GPU failing every later start)."""
        if self.proc is None:
            return
        if not self._gone:
            self.signal_group(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
            deadline = time.monotonic() + 10
            while self.group_members() and time.monotonic() < deadline:
                time.sleep(0.05)
            self._gone = True
        self.stop_reaper()

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
