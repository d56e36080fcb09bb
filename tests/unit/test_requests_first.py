"""History writes wait for the questions still on their way to the server, never longer than the bound,
and are all stored (real SQLite file)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from chainlit.context import init_http_context

from chainlit_app.history import ChatHistoryLayer, database_url, prepare_schema
from chainlit_app.requests_first import RequestsFirst


def _step(step_id: str) -> dict[str, object]:
    return {"id": step_id, "threadId": "t1", "name": "alice", "type": "user_message", "output": f"q {step_id}",
            "streaming": False, "createdAt": step_id, "metadata": {}}


def _stored(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT id FROM steps ORDER BY id")]


async def _layer(tmp_path: Path, gate: RequestsFirst) -> ChatHistoryLayer:
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    return ChatHistoryLayer(url, hold_writes=gate.quiet)


async def test_writes_wait_until_the_requests_have_left(tmp_path: Path) -> None:
    gate = RequestsFirst(max_hold=30.0)
    layer = await _layer(tmp_path, gate)
    openings = [gate.begin() for _ in range(3)]
    writes = asyncio.gather(*(layer.create_step(_step(f"{i}")) for i in range(3)))
    await asyncio.sleep(0.3)  # well past the 20 ms batch window
    assert _stored(tmp_path / "chat.db") == [] and not writes.done()
    openings[0].done()
    openings[0].done()  # twice is once
    openings[1].done()
    await asyncio.sleep(0.2)
    assert _stored(tmp_path / "chat.db") == [] and gate.opening == 1
    openings[2].done()
    await asyncio.wait_for(writes, 10)
    assert _stored(tmp_path / "chat.db") == ["0", "1", "2"] and gate.holds >= 1


async def test_a_question_that_never_sends_holds_writes_only_for_the_bound(tmp_path: Path) -> None:
    gate = RequestsFirst(max_hold=0.2)
    layer = await _layer(tmp_path, gate)
    gate.begin()  # e.g. a question whose request hangs: the history is still written
    await asyncio.wait_for(layer.create_step(_step("1")), 10)
    assert _stored(tmp_path / "chat.db") == ["1"]


async def test_without_questions_in_flight_nothing_waits() -> None:
    gate = RequestsFirst(max_hold=30.0)
    await asyncio.wait_for(gate.quiet(), 1)
    gate.begin().done()
    await asyncio.wait_for(gate.quiet(), 1)
    assert gate.holds == 0
