"""Each fault made for real against a real vLLM, found by the live Monitor through the server's log (as in
the app) as the right named finding. Nothing is fed to the monitor by the test; the faults that only the
chat can see (empty, garbled answers, a prompt too long) are made through the running app in
tests/e2e/test_faults_through_the_app.py.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai
import pytest
import pytest_asyncio

from chainlit_app.engine.status import EngineState
from chainlit_app.engine.supervisor import Supervisor
from chainlit_app.monitor import Endpoint, Monitor
from tests.conftest import build_tiny_ernie, make_supervisor, need_engine
from tests.findings_wait import finding_of

pytestmark = pytest.mark.integration


def watch(supervisor: Supervisor) -> Monitor:
    monitor = Monitor(lambda: supervisor.config.log_file,
                      lambda: Endpoint(supervisor.base_url, supervisor.api_key) if supervisor.spec.port else None)
    supervisor.add_listener(monitor.on_engine_status)
    monitor.start()
    return monitor




async def failed_start(model: Path | str, tmp_path: Path, **spec: Any) -> Monitor:
    """Start a server that cannot start; return the monitor that watched it fail."""
    supervisor = make_supervisor(model, tmp_path, max_restarts=0, **spec)
    monitor = watch(supervisor)
    try:
        await supervisor.start()
        assert supervisor.status.state == EngineState.FAILED
        await asyncio.sleep(0.5)  # let the tail read the last lines
    finally:
        await supervisor.stop()
    return monitor


# -- a served model that is broken in three ways ---------------------------------------------------------
@pytest_asyncio.fixture(scope="module")
async def odd_ernie(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Supervisor]:
    """A tiny random ERNIE-4.5 with no chat template whose first greedy token is its EOS."""
    need_engine()
    folder = build_tiny_ernie("tiny-ernie-odd", demo_model, "--no-chat-template", "--eos-first")
    supervisor = make_supervisor(folder, tmp_path_factory.mktemp("odd-ernie"), served="odd", max_model_len=1024)
    await supervisor.start()
    assert supervisor.is_ready(), supervisor.status.error
    yield supervisor
    await supervisor.stop()


def _client(supervisor: Supervisor) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=supervisor.base_url + "/v1", api_key=supervisor.api_key, max_retries=0)


async def test_no_chat_template_is_chat_template(odd_ernie: Supervisor) -> None:
    """The request fails for real; the monitor names it from the server's log alone (its 400 access line
    on a server where no chat ever succeeded)."""
    monitor = watch(odd_ernie)
    try:
        async with _client(odd_ernie) as client:
            with pytest.raises(openai.BadRequestError):
                await client.chat.completions.create(model="odd", messages=[{"role": "user", "content": "hi"}])
        entry = await finding_of(monitor, "chat_template")
        assert entry["source"] == "log" and '" 400' in entry["evidence"][0]["text"]
        assert any("--chat-template" in step for step in entry["fix"])
    finally:
        await monitor.stop()


# -- faults of the request ------------------------------------------------------------------------------
async def test_wrong_key_is_auth(demo_server: Supervisor) -> None:
    """A client with the wrong key: the server's access log says 401, and the tail names it."""
    monitor = watch(demo_server)
    try:
        client = openai.AsyncOpenAI(base_url=demo_server.base_url + "/v1", api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            await client.models.list()
        await client.close()
        entry = await finding_of(monitor, "auth")
        assert entry["source"] == "log" and "401" in entry["evidence"][0]["text"]
    finally:
        await monitor.stop()


# -- faults at start-up -----------------------------------------------------------------------------------
async def test_port_taken_is_port_in_use(demo_model: Path, tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        supervisor = make_supervisor(demo_model, tmp_path, max_restarts=0, port=port)
        monitor = watch(supervisor)
        try:
            await supervisor.start()
            assert supervisor.status.state == EngineState.FAILED
            entry = await finding_of(monitor, "port_in_use")
        finally:
            await supervisor.stop()
            await monitor.stop()
    assert "Address already in use" in entry["evidence"][0]["text"]


async def test_unknown_architecture_is_startup_failure(tiny_ernie: Path, tmp_path: Path) -> None:
    broken = tmp_path / "foobar-model"
    shutil.copytree(tiny_ernie, broken)
    config = json.loads((broken / "config.json").read_text())
    config["architectures"] = ["FooBarForCausalLM"]
    (broken / "config.json").write_text(json.dumps(config))
    monitor = await failed_start(broken, tmp_path)
    try:
        entry = await finding_of(monitor, "startup_failure")
        assert "FooBarForCausalLM" in json.dumps(entry["evidence"])
    finally:
        await monitor.stop()


async def test_kv_cache_too_small_is_out_of_memory(demo_model: Path, tmp_path: Path) -> None:
    """A context longer than the KV cache can hold (65,536 tokens x 45 KiB > 1 GiB): vLLM refuses to start."""
    monitor = await failed_start(demo_model, tmp_path, max_model_len=65536,
                                 extra_env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})
    try:
        entry = await finding_of(monitor, "out_of_memory")
        assert "KV cache" in json.dumps(entry["evidence"])
        assert any("max-model-len" in step or "MAX_MODEL_LEN" in step for step in entry["fix"])
    finally:
        await monitor.stop()
