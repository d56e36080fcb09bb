"""The engine's child process with real processes: what it may see, how it dies, what a failed start leaves.

The "engine" here is a shell script put where the engine's Python would be (CHAT_ENGINE_VENV): the
supervisor launches it exactly as it launches vLLM (same argv, same environment, same process group).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from chainlit_app.engine.command import LaunchSpec
from chainlit_app.engine.process import GroupProcess
from chainlit_app.engine.status import EngineState
from chainlit_app.engine.supervisor import Supervisor, SupervisorConfig

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {
    "CHAT_ADMIN_PASSWORD": "admin-pw-must-stay-home",
    "CHAINLIT_AUTH_SECRET": "auth-secret-must-stay-home",
    "CHAT_USERS": "bob:bob-pw-must-stay-home:user",
    "DATABASE_URL": "postgresql://chat:db-pw-must-stay-home@db/chat",
    "CHAT_API_KEY": "attach-key-must-stay-home",
}


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _spec(**changes: object) -> LaunchSpec:
    values: dict[str, object] = dict(model="m", served_model_name="m", host="127.0.0.1", port=0, api_key="",
                                     max_model_len=256)
    values.update(changes)
    return LaunchSpec(**values)  # type: ignore[arg-type]


def _supervisor(tmp_path: Path, python: Path, **config: object) -> Supervisor:
    return Supervisor(SupervisorConfig(python=python, spec=_spec(), log_file=tmp_path / "vllm.log",
                                       **config))  # type: ignore[arg-type]


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie is dead; only its exit status waits to be collected)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_gone(pids: list[int], seconds: float = 15.0) -> list[int]:
    """The pids still running after up to `seconds` (a deadline, not a measurement)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_running(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _running(p)]


# -- item 4: the engine sees an allowlist of the app's environment, no secret -----------------------------
async def test_the_engine_process_sees_no_app_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HF_TOKEN", "hf_gated_models_need_it")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setenv("MY_SITE_SETTING", "asked-for")
    monkeypatch.setenv("MY_OTHER_SETTING", "not-asked-for")
    engine = _script(tmp_path / "python", "exec sleep 600\n")
    supervisor = Supervisor(SupervisorConfig(python=engine, spec=_spec(env_pass=("MY_SITE_*",)),
                                             log_file=tmp_path / "vllm.log"))
    supervisor.launch_early()
    try:
        assert supervisor.process is not None and supervisor.process.pid is not None
        pid = supervisor.process.pid
        for _ in range(200):  # until the exec wrapper has exec'd the engine (same pid)
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep"):
                break
            await asyncio.sleep(0.02)
        seen = _environ(pid)
        leaked = sorted(name for name in SECRETS if name in seen)
        assert not leaked, f"the engine process sees {leaked}"
        assert not any(secret in Path(f"/proc/{pid}/environ").read_text(errors="replace")
                       for secret in SECRETS.values())
        assert seen["VLLM_API_KEY"] == supervisor.api_key, "its own per-launch key is the one key it gets"
        assert seen["HF_TOKEN"] == "hf_gated_models_need_it" and seen["CUDA_VISIBLE_DEVICES"] == "0"
        assert seen["MY_SITE_SETTING"] == "asked-for", "CHAT_ENGINE_ENV passes more names"
        assert "MY_OTHER_SETTING" not in seen and "PATH" in seen
    finally:
        await supervisor.stop()


# -- item 10: a start that fails leaves nothing of its group before the next start ------------------------
# The server exits before it is ready, but its "engine core" (a child in the same group that ignores
# SIGTERM, as a hung vLLM engine core does) keeps running. Each launch records whether the previous
# launch's engine core still runs when it starts.
CRASHING_ENGINE = """\
dir="$(dirname "$0")"
if [ -f "$dir/core.pid" ]; then
  core=$(cat "$dir/core.pid")
  if [ -d /proc/$core ] && ! grep -q '^State:.*Z' /proc/$core/status 2>/dev/null; then
    echo "running $core" >> "$dir/seen"
  else
    echo "gone $core" >> "$dir/seen"
  fi
fi
trap '' TERM
sleep 600 &
echo $! > "$dir/core.pid"
echo "RuntimeError: Engine core initialization failed"
exit 1
"""


async def test_a_failed_start_leaves_no_process_of_its_group(tmp_path: Path) -> None:
    engine = _script(tmp_path / "python", CRASHING_ENGINE)
    before = {c.pid for c in psutil.Process().children(recursive=True)}
    supervisor = _supervisor(tmp_path, engine, max_restarts=2, stop_grace=1.0, backoff_max=1.0)
    await supervisor.start()
    assert supervisor.status.state == EngineState.FAILED, supervisor.status
    seen = (tmp_path / "seen").read_text().split("\n")[:-1]
    assert len(seen) == 2, "three launches: the 2nd and 3rd looked for the one before"
    assert all(line.startswith("gone ") for line in seen), f"a leftover engine core ran at the next start: {seen}"
    last_core = int((tmp_path / "core.pid").read_text())
    assert not _running(last_core), "the last failed start's engine core was left running"
    left = [c for c in psutil.Process().children(recursive=True) if c.pid not in before and _running(c.pid)]
    assert not left, f"processes left (a group member or its reaper): {left}"
    await supervisor.stop()


# -- item 11: no preexec_fn; the server still dies with the app, and the reaper takes its group ------------
PARENT = """
import json, sys, threading, time
from chainlit_app.engine.process import GroupProcess
threads = [threading.Thread(target=time.sleep, args=(600,), daemon=True) for _ in range(4)]
for t in threads:
    t.start()  # a threaded parent, as the app is
proc = GroupProcess(["/bin/sh", "-c", "trap '' TERM; sleep 600 & echo $!; wait"], {"PATH": "/usr/bin:/bin"},
                    open(sys.argv[1], "wb"))
proc.spawn()
print(json.dumps({"server": proc.pid, "reaper": proc.reaper.pid}), flush=True)
time.sleep(600)
"""


def _start_parent(tmp_path: Path) -> tuple[subprocess.Popen[str], int, int, int]:
    """An app stand-in (its own interpreter) that spawns a group; returns it, server, core, reaper pids."""
    log = tmp_path / "group.log"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(log)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert parent.stdout is not None
    pids = json.loads(parent.stdout.readline())
    deadline = time.monotonic() + 15
    while not log.read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.05)
    core = int(log.read_text().split()[0])
    return parent, pids["server"], core, pids["reaper"]


def test_no_preexec_fn_and_the_server_dies_with_the_app_by_its_own_parent_death_signal(tmp_path: Path) -> None:
    parent, server, core, reaper = _start_parent(tmp_path)
    try:
        assert Path(f"/proc/{server}/cmdline").read_bytes().startswith(b"/bin/sh\0-c"), "exec'd in place"
        assert os.getpgid(server) == server and os.getsid(server) == server, "a session and group of its own"
        os.kill(reaper, signal.SIGKILL)  # without the reaper, only the parent-death signal can end the server
        assert not _wait_gone([reaper])
        parent.kill()
        parent.wait()
        assert not _wait_gone([server]), "the server outlived the app: no parent-death signal"
    finally:
        parent.kill()
        parent.wait()
        for pid in (server, core):
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_when_the_app_is_killed_the_reaper_takes_the_whole_group(tmp_path: Path) -> None:
    parent, server, core, reaper = _start_parent(tmp_path)
    try:
        assert os.getpgid(core) == server, "the engine core is in the server's group"
        parent.kill()
        parent.wait()
        assert not _wait_gone([server, core, reaper]), "a process of the group, or the reaper, outlived the app"
    finally:
        parent.kill()
        parent.wait()
        for pid in (server, core, reaper):
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_missing_engine_program_is_the_error_popen_would_give(tmp_path: Path) -> None:
    with (tmp_path / "out.log").open("wb") as log:
        proc = GroupProcess([str(tmp_path / "no-such-python"), "-m", "vllm"], {"PATH": "/usr/bin:/bin"}, log)
        with pytest.raises(FileNotFoundError):
            proc.spawn()
