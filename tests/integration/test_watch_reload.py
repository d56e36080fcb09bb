"""`chainlit run app.py -w`: a reload runs app.py again in the same process; it must not launch a second
engine. The engine is a script in place of the engine's Python that notes each launch and sleeps (no
vLLM needed: what counts is how many times the app launches it)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import httpx

from bench.apps import AppServer, start_app_with_flags

ENGINE = 'echo $$ >> "$(dirname "$0")/launches"\nexec sleep 600\n'


def _launches(venv: Path) -> list[int]:
    path = venv / "bin" / "launches"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


async def _wait_for(condition: object, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


async def _reload_and_count(app: AppServer, venv: Path, root: Path) -> tuple[list[int], str]:
    await app.wait_http()
    await _wait_for(lambda: len(_launches(venv)) == 1, "the first launch")
    first = _launches(venv)[0]
    (root / "touched.py").write_text("# a change the watcher reloads the app for\n")
    await _wait_for(lambda: "Reloading app" in app.log_text(), "Chainlit's reload")
    await asyncio.sleep(5.0)  # a second launch, if any, happens while app.py is executed again
    async with httpx.AsyncClient(timeout=5.0) as http:
        state = (await http.get(app.url + "/healthz")).json()["engine"]
    assert os.path.exists(f"/proc/{first}"), "the first engine is still the running one"
    return _launches(venv), state


def test_a_watch_reload_keeps_the_running_engine(tmp_path: Path) -> None:
    venv = tmp_path / "engine-venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text("#!/bin/sh\n" + ENGINE)
    python.chmod(0o755)
    model = tmp_path / "model"
    model.mkdir()
    root = tmp_path / "root"  # what Chainlit watches (CHAINLIT_APP_ROOT)
    root.mkdir()
    app = start_app_with_flags(tmp_path / "data", ("-w",), env_overrides={
        "CHAT_MODEL": str(model), "CHAT_ENGINE_VENV": str(venv), "CHAT_PREFLIGHT": "0",
        "CHAINLIT_APP_ROOT": str(root)})
    try:
        launches, state = asyncio.run(_reload_and_count(app, venv, root))
        assert len(launches) == 1, f"the reload launched another engine: {launches}"
        assert state == "starting", "the reloaded app reports the running engine's launch"
    finally:
        app.stop()
