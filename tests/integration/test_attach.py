"""Attach mode against a real vLLM started by the test, not by the app: chat works, and a wrong key,
model name or port each become their named finding with the fix."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from chainlit_app.chat import engine_line
from chainlit_app.engine.status import EngineState
from chainlit_app.engine.supervisor import Supervisor, free_port
from chainlit_app.runtime import Runtime
from tests.conftest import DEMO_SERVED, settings_for_tests

pytestmark = pytest.mark.integration


@asynccontextmanager
async def attached(tmp_path: Path, **settings: Any) -> AsyncIterator[Runtime]:
    runtime = Runtime(settings_for_tests(mode="attach", data_dir=tmp_path, **settings))
    runtime.start_background()
    try:
        yield runtime
    finally:
        await runtime.stop()


async def _wait(condition: Any, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition() and loop.time() < deadline:
        await asyncio.sleep(0.1)


def _kinds(runtime: Runtime) -> dict[str, dict[str, Any]]:
    return {f["kind"]: f for f in runtime.monitor.store.snapshot() if not f["resolved"]}


async def test_attach_chats_with_a_server_it_did_not_start(demo_server: Supervisor, tmp_path: Path) -> None:
    async with attached(tmp_path, vllm_url=demo_server.base_url + "/v1/", api_key=demo_server.api_key) as runtime:
        assert await runtime.wait_ready(15)
        assert runtime.status.state == EngineState.ATTACHED
        assert runtime.served_model_name == DEMO_SERVED, "the model name is discovered from /v1/models"
        reply = await runtime.client().chat.completions.create(
            model=runtime.served_model_name, messages=[{"role": "user", "content": "What is the capital of France?"}],
            max_tokens=32, temperature=0.0)
        assert "Paris" in (reply.choices[0].message.content or "")
        assert runtime.engine.process is None and not runtime.engine.process_control, "attach mode never spawns"


async def test_wrong_key_is_auth(demo_server: Supervisor, tmp_path: Path) -> None:
    async with attached(tmp_path, vllm_url=demo_server.base_url, api_key="not-the-key") as runtime:
        await _wait(lambda: "auth" in _kinds(runtime))
        assert not runtime.is_ready()
        assert "CHAT_API_KEY" in _kinds(runtime)["auth"]["hint"]


async def test_wrong_model_is_model_not_found(demo_server: Supervisor, tmp_path: Path) -> None:
    async with attached(tmp_path, vllm_url=demo_server.base_url, api_key=demo_server.api_key,
                        served_model_name="gpt-4") as runtime:
        await _wait(lambda: "model_not_found" in _kinds(runtime))
        finding = _kinds(runtime)["model_not_found"]
        assert DEMO_SERVED in finding["evidence"][0]["text"], "the finding lists the names that are served"
        assert "CHAT_SERVED_MODEL_NAME" in finding["hint"]


async def test_wrong_port_is_connection_with_the_container_hint(tmp_path: Path) -> None:
    url = f"http://localhost:{free_port()}/v1"
    async with attached(tmp_path, vllm_url=url, api_key="k") as runtime:
        await _wait(lambda: "connection" in _kinds(runtime))
        hint = _kinds(runtime)["connection"]["hint"]
        assert "CHAT_VLLM_URL" in hint
        assert "container" in hint and "localhost" in hint
        assert "Waiting for the vLLM server" in engine_line(runtime)
