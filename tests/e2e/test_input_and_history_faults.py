"""Bad input and a locked history, made for real against a running app (attach mode on a dead URL: the
engine is irrelevant here, so no vLLM is started). The app's own paths find them: the socket, the
action endpoint, the data layer, and the admin's /api/diagnostics."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.apps import AppServer, start_app
from bench.chainlit_client import ChainlitSession, login
from chainlit_app.cleaning import MAX_INPUT_CHARS, MAX_MESSAGE_BYTES
from chainlit_app.engine.supervisor import free_port
from tests.e2e.conftest import run_in_thread

pytestmark = pytest.mark.e2e

PASSWORD = "faults-test-password"


@pytest.fixture(scope="module")
def attached_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    server = start_app(tmp_path_factory.mktemp("faults-app"), admin_password=PASSWORD, chat_user="alice",
                       user_password=PASSWORD, CHAT_MODE="attach", CHAT_VLLM_URL=dead, CHAT_STARTUP_TIMEOUT="3")
    try:
        run_in_thread(server.wait_http(timeout=120))
        yield server
    finally:
        server.stop()


def _notices(session: ChainlitSession) -> list[str]:
    return [str(e.data.get("output")) for e in session.events
            if e.name == "new_message" and isinstance(e.data, dict) and e.data.get("name") == "Console"]


async def _notice_containing(session: ChainlitSession, needle: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [n for n in _notices(session) if needle in n]
        if found:
            return found[-1]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no message containing {needle!r}; got {_notices(session)}")


def test_input_over_the_limits_gets_clear_answers(attached_app: AppServer) -> None:
    run_in_thread(_over_the_limits(attached_app))


async def _over_the_limits(app: AppServer) -> None:
    async with ChainlitSession(app.url, "alice", PASSWORD) as session:
        size = 1_000_000  # under the 1 MiB frame (JSON escapes a control character in 6 bytes: plain text)
        result = await session.ask("x" * size, timeout=60)
        assert result.completed, result.error
        refusal = await _notice_containing(session, "the limit is")
        print(f"\n{refusal}")
        assert f"{size:,} characters" in refusal and f"{MAX_INPUT_CHARS:,}" in refusal

        # A forged Retry: the payload is the client's, sent straight to Chainlit's action endpoint.
        cookies = await login(app.url, "alice", PASSWORD)
        async with httpx.AsyncClient(base_url=app.url, cookies=cookies, timeout=30) as http:
            for payload in ({"question": ["not", "text"]}, {"question": "y" * (MAX_INPUT_CHARS + 1)}):
                response = await http.post("/project/action", json={
                    "sessionId": session.session_id,
                    "action": {"id": "forged", "name": "retry_question", "payload": payload, "forId": "x"}})
                assert response.status_code == 200, response.text[:300]
        await _notice_containing(session, "The question to retry is not text")
        await _notice_containing(session, f"The question to retry has {MAX_INPUT_CHARS + 1:,} characters")

    # Over the frame limit, the transport closes the socket: the app lives on and serves the next session.
    async with ChainlitSession(app.url, "alice", PASSWORD) as session:
        dropped = await session.ask("z" * (MAX_MESSAGE_BYTES + 1), timeout=30)
        assert not dropped.completed and dropped.error == "disconnected"
    async with ChainlitSession(app.url, "alice", PASSWORD) as session:
        await session.ask("   ", timeout=30)
        await _notice_containing(session, "type a question")


def test_a_locked_history_becomes_a_finding_for_the_admin(attached_app: AppServer) -> None:
    run_in_thread(_locked_history(attached_app))


async def _locked_history(app: AppServer) -> None:
    await app.admin_cookies()  # logins write the users table: log in before the lock
    cookies = await login(app.url, "alice", PASSWORD)
    holder = sqlite3.connect(app.data_dir / "chat.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's transaction holds the write lock
    try:
        async with ChainlitSession(app.url, "alice", cookies=cookies) as session:
            await session.ask("A question the history cannot store while the lock is held", timeout=60)
        finding = await _open_finding(app, "history_write_failed", timeout=90)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    evidence = " ".join(str(e) for e in finding["evidence"])
    print(f"\n{finding['title']}: {evidence}")
    assert "database is locked" in evidence
    assert "cannot store" not in evidence, "users' text stays out of the panel"

    # The lock is gone: the next question is stored, and the admin's finding closes, saying the gap stays.
    async with ChainlitSession(app.url, "alice", cookies=cookies) as session:
        await session.ask("A question asked after the lock was released", timeout=60)
    closed = await _finding_resolved(app, finding["id"], timeout=60)
    print(f"closed: {closed['resolved_reason']}")
    assert "stay missing" in closed["resolved_reason"]


async def _finding_resolved(app: AppServer, finding_id: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in (await app.diagnostics())["findings"]:
            if entry["id"] == finding_id and entry["resolved"]:
                return dict(entry)
        await asyncio.sleep(0.5)
    raise AssertionError(f"finding {finding_id} still open after the lock was released")


async def _open_finding(app: AppServer, kind: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        body = await app.diagnostics()
        for entry in body["findings"]:
            if entry["kind"] == kind and not entry["resolved"]:
                return dict(entry)
        seen = [str(e["kind"]) for e in body["findings"]]
        await asyncio.sleep(0.5)
    raise AssertionError(f"no open {kind} finding; found {seen}")
