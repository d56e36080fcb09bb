"""The app launches vLLM while it is still importing, and its start-up adopts that launch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chainlit_app.doctor import config_from_settings, run_preflight
from chainlit_app.runtime import Runtime
from tests.conftest import need_engine, settings_for_tests

pytestmark = pytest.mark.integration


def test_vllm_is_launched_before_the_event_loop_and_start_up_adopts_it(demo_model: Path, tmp_path: Path) -> None:
    """A sync test on purpose: launch_early runs at import time, before any event loop exists."""
    need_engine()
    settings = settings_for_tests(model="demo", data_dir=tmp_path, log_dir=tmp_path / "logs", max_model_len=2048,
                                  temperature=0.0)
    cold = Runtime(settings)
    assert cold.launch_early() is False, "a cold engine-facts cache means a vLLM import first: not early"
    assert cold.engine.process is None
    run_preflight(config_from_settings(settings, model=str(demo_model)))  # what an install's first start does

    runtime = Runtime(settings)
    assert runtime.launch_early() is True
    early = runtime.engine.process
    assert early is not None and early.alive()
    early_pid = early.pid

    async def start_and_ask() -> str:
        runtime.start_background()
        try:
            assert await runtime.wait_ready(300), runtime.status.error
            process = runtime.engine.process
            assert process is not None and process.pid == early_pid, "adopted, not relaunched"
            assert runtime.status.launches == 1
            answer = await runtime.client().chat.completions.create(
                model=runtime.served_model_name, temperature=0.0, max_tokens=12,
                messages=[{"role": "user", "content": "What is the capital of France?"}],
            )
            return answer.choices[0].message.content or ""
        finally:
            await runtime.stop()

    assert "Paris" in asyncio.run(start_and_ask())
    assert not early.alive()
