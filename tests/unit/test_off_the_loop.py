"""Slow host queries stay off the event loop: the process-group walk (panel poll, stop) and nvidia-smi.

The walks are real (psutil over /proc); a spy notes the thread each walk runs on. nvidia-smi is a real
program on PATH that answers only once the event loop has done something: if it ran on the loop, the
loop could not do it, and the program says so.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from chainlit_app import panel
from chainlit_app.engine import hardware, process
from chainlit_app.engine.status import EngineState
from chainlit_app.engine.supervisor import Supervisor, SupervisorConfig
from chainlit_app.handles import SpawnedEngine
from chainlit_app.runtime import Runtime
from tests.conftest import settings_for_tests
from tests.unit.test_engine_child import _script, _spec


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The thread ids of every walk over the host's processes made by the process module."""
    seen: list[int] = []
    real = psutil.process_iter

    def spying(*args: Any, **kwargs: Any) -> Iterator[psutil.Process]:
        seen.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(process.psutil, "process_iter", spying)
    return seen


async def test_panel_polls_and_stop_walk_the_processes_in_a_thread(tmp_path: Path, walks: list[int]) -> None:
    engine = _script(tmp_path / "python", "trap '' TERM\nsleep 600 &\nexec sleep 600\n")
    supervisor = Supervisor(SupervisorConfig(python=engine, spec=_spec(), log_file=tmp_path / "vllm.log",
                                             stop_grace=0.5))
    runtime = Runtime(settings_for_tests(data_dir=tmp_path, log_dir=tmp_path))
    assert isinstance(runtime.engine, SpawnedEngine)
    runtime.engine.supervisor = supervisor
    supervisor.launch_early()
    loop_thread = threading.get_ident()
    try:
        payload = await panel.diagnostics_payload(runtime)
        assert payload["engine"]["rss_mib"] >= 0 and walks, "the panel measured the engine's group"
        assert loop_thread not in walks, "the panel's poll walked every process on the event loop"
        walks.clear()
        await supervisor.stop()  # the core ignores SIGTERM: stop polls the group, then SIGKILLs it
        assert supervisor.status.state == EngineState.STOPPED and walks
        assert loop_thread not in walks, "stop() walked every process on the event loop"
    finally:
        await supervisor.stop()


FAKE_NVIDIA_SMI = """\
dir="$(dirname "$0")"
i=0
while [ $i -lt 80 ]; do
  if [ -f "$dir/released" ]; then echo released > "$dir/answer"; echo "GPU 0: Fake GPU (UUID: GPU-0)"; exit 0; fi
  sleep 0.1
  i=$((i + 1))
done
echo "never released: the event loop was blocked" > "$dir/answer"
exit 1
"""


async def test_nvidia_smi_runs_off_the_event_loop_when_the_preflight_is_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _script(bin_dir / "nvidia-smi", FAKE_NVIDIA_SMI)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    _script(venv / "bin" / "python", "exec sleep 600\n")
    model = tmp_path / "model"
    model.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    hardware.has_nvidia_gpu.cache_clear()
    runtime = Runtime(settings_for_tests(data_dir=tmp_path, log_dir=tmp_path, model=str(model), preflight=False,
                                         engine_venv=venv, device="auto"))

    async def release_when_asked() -> None:
        while not (bin_dir / "answer").exists():
            await asyncio.sleep(0.05)  # runs only while the loop is free

    async def release() -> None:
        await asyncio.sleep(0.2)
        (bin_dir / "released").touch()

    start = asyncio.create_task(runtime.engine.start())
    try:
        await asyncio.gather(release(), asyncio.wait_for(release_when_asked(), 60))
        assert (bin_dir / "answer").read_text().strip() == "released"
        while runtime.engine.process is None and not start.done():
            await asyncio.sleep(0.05)
        assert isinstance(runtime.engine, SpawnedEngine) and runtime.engine.supervisor is not None
        assert runtime.engine.supervisor.spec.on_gpu, "the fake GPU was seen (device auto)"
    finally:
        start.cancel()
        await asyncio.gather(start, return_exceptions=True)
        await runtime.engine.stop()
        hardware.has_nvidia_gpu.cache_clear()
