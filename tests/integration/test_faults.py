"""Each fault made for real against a real vLLM, seen by the live Monitor as the right named finding.

The Monitor follows the server's log (as in the app) and takes the client's observations; a test passes
when the store holds a finding of the expected kind with evidence.
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

from chainlit_app.engine.supervisor import EngineState, Supervisor
from chainlit_app.monitor import Endpoint, Monitor
from tests.conftest import DEMO_SERVED, build_tiny_ernie, make_supervisor, need_engine

pytestmark = pytest.mark.integration


def watch(supervisor: Supervisor) -> Monitor:
    monitor = Monitor(lambda: supervisor.config.log_file,
                      lambda: Endpoint(supervisor.base_url, supervisor.api_key) if supervisor.spec.port else None)
    supervisor.add_listener(monitor.on_engine_status)
    monitor.start()
    return monitor


async def finding_of(monitor: Monitor, kind: str, timeout: float = 10.0) -> dict[str, Any]:
    """The first open finding of `kind`, waiting for the tail to catch up."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for entry in monitor.store.snapshot():
            if entry["kind"] == kind and not entry["resolved"]:
                return entry
        await asyncio.sleep(0.1)
    kinds = [(e["kind"], e["evidence"][0]["text"][:120]) for e in monitor.store.snapshot()]
    raise AssertionError(f"no {kind} finding; found {kinds}")


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
    monitor = watch(odd_ernie)
    try:
        async with _client(odd_ernie) as client:
            with pytest.raises(openai.BadRequestError) as caught:
                await client.chat.completions.create(model="odd", messages=[{"role": "user", "content": "hi"}])
        finding = monitor.observe_exception(caught.value)
        assert finding is not None and finding.kind == "chat_template"
        entry = await finding_of(monitor, "chat_template")
        assert "chat template" in json.dumps(entry).lower()
        assert any("--chat-template" in step for step in entry["fix"])
    finally:
        await monitor.stop()


async def test_eos_as_first_token_is_empty_output(odd_ernie: Supervisor) -> None:
    monitor = watch(odd_ernie)
    try:
        async with _client(odd_ernie) as client:
            reply = await client.completions.create(model="odd", prompt="Tell me about rivers.", max_tokens=32,
                                                    temperature=0.0)
        text = reply.choices[0].text
        assert text == ""
        tokens = reply.usage.completion_tokens if reply.usage else None
        findings = monitor.observe_answer(text, reply.choices[0].finish_reason, tokens)
        assert [f.kind for f in findings] == ["empty_output"]
        entry = await finding_of(monitor, "empty_output")
        assert "finish" in entry["evidence"][0]["text"]
    finally:
        await monitor.stop()


async def test_garbage_bytes_are_decode_error(odd_ernie: Supervisor) -> None:
    """Uniformly random tokens of a byte-level tokenizer decode to U+FFFD and control characters."""
    monitor = watch(odd_ernie)
    try:
        async with _client(odd_ernie) as client:
            reply = await client.completions.create(model="odd", prompt="Hello", max_tokens=200, temperature=1.0,
                                                    seed=7)
        text = reply.choices[0].text
        assert "\ufffd" in text or any(ord(c) < 32 and c not in "\n\t\r" for c in text)
        findings = monitor.observe_answer(text, reply.choices[0].finish_reason, None)
        assert "decode_error" in [f.kind for f in findings]
        await finding_of(monitor, "decode_error")
    finally:
        await monitor.stop()


# -- faults of the request ------------------------------------------------------------------------------
async def test_prompt_longer_than_context_is_context_length(demo_server: Supervisor) -> None:
    monitor = watch(demo_server)
    try:
        async with _client(demo_server) as client:
            with pytest.raises(openai.BadRequestError) as caught:
                await client.chat.completions.create(
                    model=DEMO_SERVED, messages=[{"role": "user", "content": "word " * 5000}], max_tokens=16)
        finding = monitor.observe_exception(caught.value)
        assert finding is not None and finding.kind == "context_length"
        entry = await finding_of(monitor, "context_length")
        assert "maximum context length" in entry["evidence"][0]["text"]
        assert any("max-model-len" in step or "MAX_MODEL_LEN" in step for step in entry["fix"])
    finally:
        await monitor.stop()


async def test_wrong_key_is_auth(demo_server: Supervisor) -> None:
    monitor = watch(demo_server)
    try:
        client = openai.AsyncOpenAI(base_url=demo_server.base_url + "/v1", api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as caught:
            await client.models.list()
        await client.close()
        finding = monitor.observe_exception(caught.value)
        assert finding is not None and finding.kind == "auth"
        await finding_of(monitor, "auth")
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
