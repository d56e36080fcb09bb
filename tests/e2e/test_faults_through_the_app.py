"""Faults made for real and found by the running app through its own paths, never fed in by the test.

A user asks through Chainlit's socket.io protocol (what the browser does); the app's chat requests its own
vLLM, judges the answer, and the admin reads `/api/diagnostics`. The engine's crash is made by sending a
real SIGSEGV to vLLM's engine process; the app finds it through its log tail and its supervisor.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from bench.chainlit_client import ChainlitSession
from tests.conftest import build_tiny_ernie, need_engine
from tests.e2e.conftest import USER_PASSWORD, AppServer, run_app, run_in_thread

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def eos_first_app(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The app serving a tiny random ERNIE-4.5 whose every logit ties: greedy decoding picks token 0, its
    declared EOS, so answers at temperature 0 are empty; sampled at temperature 1 it draws tokens uniformly
    and its byte-level tokens decode to broken bytes."""
    need_engine()
    folder = build_tiny_ernie("tiny-ernie-eos", demo_model, "--eos-first")
    with run_app(tmp_path_factory.mktemp("eos-app"), ("ready",), CHAT_MODEL=str(folder),
                 CHAT_MAX_MODEL_LEN="1024") as server:
        yield server


async def _ask(server: AppServer, question: str, settings: dict[str, Any] | None = None) -> tuple[str, str]:
    """Ask as the user alice in a fresh session: (the streamed text, the final message the app shows)."""
    async with ChainlitSession(server.url, "alice", USER_PASSWORD) as chat:
        if settings:
            assert await chat.update_settings(settings)
        result = await chat.ask(question, timeout=180)
    assert result.completed, result.error
    return result.text, result.final_text or ""


async def _open_finding(server: AppServer, kind: str, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    seen: list[tuple[str, str]] = []
    while time.monotonic() < deadline:
        body = await server.diagnostics()
        for entry in body["findings"]:
            if entry["kind"] == kind and not entry["resolved"]:
                return dict(entry)
        seen = [(e["kind"], e["source"]) for e in body["findings"]]
        await asyncio.sleep(0.5)
    raise AssertionError(f"no open {kind} finding in /api/diagnostics; found {seen}")


def test_empty_answer_is_found_by_the_chat_as_empty_output(eos_first_app: AppServer) -> None:
    text, shown = run_in_thread(_ask(eos_first_app, "Tell me about rivers.", {"temperature": 0}))
    assert text == ""
    assert "finish reason" in shown  # the user is told the answer came back empty, and why
    entry = run_in_thread(_open_finding(eos_first_app, "empty_output"))
    assert entry["source"] == "chat"
    assert entry["evidence"][0]["source"] == "chat"
    assert "finish_reason" in entry["evidence"][0]["text"]
    assert entry["basis"] in ("rule", "exception_type", "raised_in", "phase")


def test_garbled_answer_is_found_by_the_chat_as_decode_error(eos_first_app: AppServer) -> None:
    text, _shown = run_in_thread(_ask(eos_first_app, "Hello", {"temperature": 1.0, "max_tokens": 256}))
    assert "\ufffd" in text or any(ord(c) < 32 and c not in "\n\t\r" for c in text), text[:200]
    entry = run_in_thread(_open_finding(eos_first_app, "decode_error"))
    assert entry["source"] == "chat"
    assert "U+FFFD" in entry["evidence"][0]["text"] or "control" in entry["evidence"][0]["text"]


def test_prompt_longer_than_the_context_is_explained_before_it_reaches_vllm(app_server: AppServer) -> None:
    """One message longer than the model's context (2,048 tokens): nothing can be left out, so the app
    says so at once, with the figures and the setting to change, instead of sending a request vLLM refuses."""
    _text, shown = run_in_thread(_ask(app_server, "word " * 5000))
    assert "2048 tokens" in shown and "CHAT_MAX_MODEL_LEN" in shown, shown


def _engine_core(api_server_pid: int) -> psutil.Process:
    """vLLM's engine process: the API server's child that runs the engine core (not the worker)."""
    children = psutil.Process(api_server_pid).children(recursive=True)
    for child in children:
        with_title = " ".join(child.cmdline()) + " " + child.name()
        if "EngineCore" in with_title:
            return child
    raise AssertionError(f"no EngineCore among {[(c.pid, c.name(), c.cmdline()[:2]) for c in children]}")


def test_segfault_of_the_engine_is_named_not_healthy(app_server: AppServer) -> None:
    """A real SIGSEGV in vLLM's engine process while it serves: the panel names an engine error with the
    evidence, whatever else (the connection) it also reports; the supervisor brings the engine back."""
    engine = run_in_thread(app_server.diagnostics())["engine"]
    assert engine["state"] == "ready"
    core = _engine_core(int(engine["pid"]))
    os.kill(core.pid, signal.SIGSEGV)
    entry = run_in_thread(_open_finding(app_server, "engine_error", timeout=60))
    assert entry["source"] in ("log", "probe")
    evidence = " ".join(e["text"] for e in entry["evidence"])
    assert any(word in evidence for word in ("SIGSEGV", "Segfault", "Segmentation", "died", "EngineCore")), evidence
    # vLLM's API server notices a dead engine core only at the next request (seen here: it then answers 500
    # and exits); a user's question makes that happen, and the supervisor brings a new engine up.
    _text, shown = run_in_thread(_ask(app_server, "Are you there?"))
    assert shown, "the user is told something"
    run_in_thread(_restarted(app_server, int(engine["restarts"])))


async def _restarted(server: AppServer, restarts_before: int, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        engine = (await server.diagnostics())["engine"]
        if engine["state"] == "ready" and int(engine["restarts"]) > restarts_before:
            return
        await asyncio.sleep(1.0)
    raise AssertionError(f"the engine was not restarted within {timeout:.0f} s")
