"""The app's start-up path refuses a broken model folder in seconds, before vLLM is ever launched."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path

import pytest

from chainlit_app.engine.status import EngineState
from chainlit_app.runtime import Runtime
from tests.conftest import MODELS_DIR, need_engine, settings_for_tests
from tests.timing import assert_within

pytestmark = pytest.mark.integration

REFUSE_LIMIT_S = 60.0  # loading vLLM alone takes longer: a refusal in time was made before any launch


async def test_broken_model_is_refused_before_spawning(tiny_ernie: Path, tmp_path: Path) -> None:
    need_engine()
    broken = tmp_path / "foobar-model"
    shutil.copytree(tiny_ernie, broken)
    config = json.loads((broken / "config.json").read_text())
    config["architectures"] = ["FooBarForCausalLM"]
    (broken / "config.json").write_text(json.dumps(config))
    runtime = Runtime(settings_for_tests(model=str(broken), data_dir=tmp_path, log_dir=tmp_path / "logs",
                                         models_dir=MODELS_DIR))
    started = time.monotonic()
    runtime.start_background()
    try:
        while not runtime.has_given_up() and time.monotonic() - started < 120:
            await asyncio.sleep(0.2)
        elapsed = time.monotonic() - started
        assert runtime.status.state == EngineState.FAILED
        assert runtime.engine.process is None, "vLLM must not be launched for a blocked deployment"
        assert "FooBarForCausalLM" in (runtime.status.error or "")
        kinds = {(f["kind"], f["evidence"][0]["source"]) for f in runtime.monitor.store.snapshot()}
        assert ("startup_failure", "preflight") in kinds
        assert_within(elapsed, REFUSE_LIMIT_S, "refusing the broken model")
    finally:
        await runtime.stop()
