"""Chat history on a real PostgreSQL server (DATABASE_URL), as several app instances would share it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import chainlit as cl
import pytest
from chainlit.context import init_http_context

from chainlit_app.history import ChatHistoryLayer, FirstTokenGate, conversation_turns, database_url, prepare_schema
from tests.postgres import throwaway_postgres

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with throwaway_postgres() as url:
        yield url


async def test_history_is_kept_in_postgres_and_resumes(postgres_url: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", postgres_url)
    url = database_url(tmp_path)
    assert url.startswith("postgresql+asyncpg://")
    await prepare_schema(url)
    assert await prepare_schema(url) == [], "a second start changes nothing"
    init_http_context()
    gate = FirstTokenGate(max_hold=30)
    layer = ChatHistoryLayer(url, gate=gate)
    user = await layer.create_user(cl.User(identifier="alice", metadata={"role": "user"}))
    assert user is not None
    thread = str(uuid.uuid4())
    question, answer = str(uuid.uuid4()), str(uuid.uuid4())
    write_question = asyncio.create_task(layer.create_step(
        {"id": question, "threadId": thread, "name": "alice", "type": "user_message", "streaming": False,
         "output": "What is the capital of France?", "createdAt": "2026-11-30T10:00:00Z"}))
    name_thread = asyncio.create_task(layer.update_thread(thread, name="Capital of France", user_id=user.id))
    await asyncio.sleep(0.3)
    assert not write_question.done(), "held until the answer's first token"
    gate.release(thread)
    await asyncio.gather(write_question, name_thread)
    await layer.create_step(
        {"id": answer, "threadId": thread, "name": "Assistant", "type": "assistant_message", "streaming": False,
         "output": "Paris.\n\n_(Cut at the max-tokens limit.)_", "createdAt": "2026-11-30T10:00:01Z"})

    # Another app instance (a fresh data layer on the same database) sees and resumes the thread.
    other = ChatHistoryLayer(url, gate=FirstTokenGate())
    stored = await other.get_thread(thread)
    assert stored is not None and stored["name"] == "Capital of France"
    assert stored["userIdentifier"] == "alice"
    assert conversation_turns(stored["steps"], "Assistant") == [  # type: ignore[arg-type]
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
    ]
    threads = await other.list_threads(cl.types.Pagination(first=10), cl.types.ThreadFilter(userId=user.id))
    assert [t["id"] for t in threads.data] == [thread]
