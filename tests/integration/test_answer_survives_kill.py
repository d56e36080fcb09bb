"""The app SIGKILLed in the middle of an answer (as the OOM killer or a hard redeploy does): after a restart
on the same data folder, the thread holds the question and the answer up to a few seconds before the kill,
marked as interrupted. Real vLLM (the session's demo server, attached), real app processes, real SQLite;
the thread is read back through the restarted app's own HTTP API."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.apps import AppServer, start_app
from bench.chainlit_client import ChainlitSession, login
from chainlit_app.conversation import note, without_notes
from chainlit_app.engine.supervisor import Supervisor
from tests.conftest import need_engine

pytestmark = pytest.mark.integration

PASSWORD = "kill-test-password"
QUESTION = "Write a very long story about a dragon who learns to cook. Make it at least 800 words."
STREAM_BEFORE_KILL = 8.0  # seconds of streaming before the kill: more than two save intervals


def _app(data_dir: Path, server: Supervisor) -> AppServer:
    return start_app(data_dir, admin_password=PASSWORD, chat_user="alice", user_password=PASSWORD,
                     CHAT_MODE="attach", CHAT_VLLM_URL=server.base_url + "/v1", CHAT_API_KEY=server.api_key,
                     CHAT_SERVED_MODEL_NAME="demo", CHAT_LOG_FILE=str(server.config.log_file))


async def _streamed(session: ChainlitSession) -> tuple[str, str | None, int]:
    """(the answer's text so far, its thread id, the length of its first chunk) from the socket events."""
    result = ChainlitSession._collect(QUESTION, 0.0, session.events)
    thread_id = next((str(e.data.get("threadId")) for e in session.events
                      if e.name == "stream_start" and isinstance(e.data, dict)), None)
    return result.text, thread_id, result.first_chunk_chars


async def test_a_killed_app_keeps_the_question_and_the_partial_answer(demo_server: Supervisor,
                                                                     tmp_path: Path) -> None:
    need_engine()
    data_dir = tmp_path / "data"
    first = _app(data_dir, demo_server)
    try:
        await first.wait_engine(("attached",), timeout=180)
        session = ChainlitSession(first.url, "alice", PASSWORD)
        await session.connect()
        assert await session.update_settings({"temperature": 0, "top_p": 1, "max_tokens": 1500,
                                              "system_prompt": "You are a helpful assistant."})
        asking = asyncio.create_task(session.ask(QUESTION, timeout=600))
        first_token_at = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            text, thread_id, _ = await _streamed(session)
            if text and first_token_at is None:
                first_token_at = time.monotonic()
            if first_token_at is not None and time.monotonic() - first_token_at >= STREAM_BEFORE_KILL:
                break
            assert not asking.done(), "the answer ended before the kill: ask for a longer one"
            await asyncio.sleep(0.1)
        assert first_token_at is not None, "no token within 300 s"
        os.kill(first.pid, signal.SIGKILL)
        first.process.wait(timeout=30)
        streamed, thread_id, first_chunk = await _streamed(session)
        await asyncio.wait_for(asking, 60)  # the client sees the disconnect
        await session.close()
    finally:
        first.stop()
    assert thread_id

    second = _app(data_dir, demo_server)
    try:
        await second.wait_engine(("attached",), timeout=180)
        cookies = await login(second.url, "alice", PASSWORD)
        async with httpx.AsyncClient(base_url=second.url, cookies=cookies, timeout=30) as http:
            response = await http.get(f"/project/thread/{thread_id}")
        assert response.status_code == 200, response.text[:500]
        thread: dict[str, Any] = response.json()
    finally:
        second.stop()

    steps = sorted(thread["steps"], key=lambda s: s.get("createdAt") or "")
    questions = [s["output"] for s in steps if s["type"] == "user_message"]
    answers = [s["output"] for s in steps if s["type"] == "assistant_message" and s["name"] == "Assistant"]
    assert questions == [QUESTION]
    assert len(answers) == 1, steps
    stored = answers[0]
    partial = without_notes(stored)
    print(f"\nstreamed {len(streamed)} chars in {STREAM_BEFORE_KILL:.0f} s before SIGKILL; the restarted app's "
          f"thread holds {len(partial)} chars of it (first chunk {first_chunk} chars), marked interrupted")
    assert stored.endswith(note("unfinished")), stored[-200:]
    assert partial and streamed.startswith(partial), (partial[:200], streamed[:200])
    assert len(partial) > first_chunk, "saved again while streaming, not only at the first token"
