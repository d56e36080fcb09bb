"""The process-group mechanism with real processes: a child that ignores SIGTERM still goes."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import psutil

from chainlit_app.engine.process import GroupProcess
from tests.timing import assert_within

STUBBORN = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "code = 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'\n"
    "subprocess.Popen([sys.executable, '-c', code])\n"
    "print('started', flush=True)\n"
    "time.sleep(600)\n"
)


async def test_sigterm_ignoring_group_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    log = (tmp_path / "out.log").open("wb")
    proc = GroupProcess([sys.executable, "-c", STUBBORN], env={"PATH": "/usr/bin:/bin"}, log=log)
    proc.spawn()
    for _ in range(100):
        if len(proc.group_members()) == 2:
            break
        await asyncio.sleep(0.05)
    members = [p.pid for p in proc.group_members()]
    assert len(members) == 2, "parent and grandchild share the group"
    started = time.monotonic()
    await proc.stop(grace=1.0)
    elapsed = time.monotonic() - started
    await asyncio.sleep(0.2)
    alive = [p for p in members if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not alive, "SIGKILL of the group must take the grandchild too"
    assert elapsed >= 0.9, f"stop took {elapsed:.2f} s: it did not wait the 1 s grace (at least 0.9 s)"
    assert_within(elapsed, 5.0, "stop with a 1 s grace")
    log.close()


async def test_wait_returns_the_exit_code_as_soon_as_the_child_exits(tmp_path: Path) -> None:
    log = (tmp_path / "out.log").open("wb")
    proc = GroupProcess([sys.executable, "-c", "import time; time.sleep(0.3); raise SystemExit(3)"],
                        env={"PATH": "/usr/bin:/bin"}, log=log)
    proc.spawn()  # synchronous: usable before an event loop runs
    assert proc.alive()
    started = time.monotonic()
    assert await asyncio.wait_for(proc.wait(), 10) == 3
    assert_within(time.monotonic() - started, 2.0, "noticing a child that exits after 0.3 s")
    assert not proc.alive() and proc.returncode == 3
    assert await proc.wait() == 3, "waiting again returns at once"


async def test_twenty_spawn_and_kill_cycles_leave_nothing_behind(tmp_path: Path) -> None:
    """What a crash-looping engine does to the app: no file descriptor, thread or process may pile up."""
    me = psutil.Process()
    log = (tmp_path / "out.log").open("wb")

    async def cycle() -> None:
        proc = GroupProcess([sys.executable, "-c", "import time; time.sleep(600)"], env={"PATH": "/usr/bin:/bin"},
                            log=log)
        proc.spawn()
        waiter = asyncio.create_task(proc.wait())
        await asyncio.sleep(0.05)
        assert proc.pid is not None
        psutil.Process(proc.pid).kill()  # kill -9, as in a crash
        assert await asyncio.wait_for(waiter, 10) == -9
        await proc.stop(grace=1.0)
        proc.stop_reaper()

    await cycle()  # the first cycle may create lazily made resources (the event loop's self-pipe, ...)
    fds, threads = me.num_fds(), me.num_threads()
    before = {c.pid for c in me.children(recursive=True)}  # earlier tests' leftovers are not this test's
    for _ in range(20):
        await cycle()
    assert me.num_fds() <= fds, "a pidfd, pipe or log handle leaked"
    assert me.num_threads() <= threads
    left = [c for c in me.children(recursive=True) if c.pid not in before]
    assert not left, f"processes left (alive or unreaped): {left}"
