"""Chat history on a real PostgreSQL server (DATABASE_URL), as several app instances would share it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import chainlit as cl
import pytest
from chainlit.context import init_http_context

from chainlit_app.history import ChatHistoryLayer, conversation_turns, database_url, prepare_schema
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
    failures: list[tuple[str, str]] = []
    layer = ChatHistoryLayer(url, on_failure=lambda what, error: failures.append((what, error)))
    user = await layer.create_user(cl.User(identifier="alice", metadata={"role": "user"}))
    assert user is not None
    thread = str(uuid.uuid4())
    question, answer = str(uuid.uuid4()), str(uuid.uuid4())
    # NUL in text or JSON is refused by PostgreSQL; Chainlit's layer would log it and store nothing
    await layer.create_step(
        {"id": question, "threadId": thread, "name": "alice", "type": "user_message", "streaming": False,
         "output": "What is the capital\x00 of France?", "createdAt": "2026-11-30T10:00:00Z",
         "metadata": {"note": "nul\x00 and \udc80 lone"}})
    await layer.update_thread(thread, name="Capital of France\x00", user_id=user.id)
    await layer.create_step(
        {"id": answer, "threadId": thread, "name": "Assistant", "type": "assistant_message", "streaming": False,
         "output": "Paris.\n\n_(Cut at the max-tokens limit.)_", "createdAt": "2026-11-30T10:00:01Z"})

    # Another app instance (a fresh data layer on the same database) sees and resumes the thread.
    other = ChatHistoryLayer(url)
    stored = await other.get_thread(thread)
    assert failures == []
    assert stored is not None and stored["name"] == "Capital of France"
    metadata = stored["steps"][0]["metadata"]
    assert (json.loads(metadata) if isinstance(metadata, str) else metadata) == {"note": "nul and  lone"}
    assert stored["userIdentifier"] == "alice"
    assert conversation_turns(stored["steps"], "Assistant") == [  # type: ignore[arg-type]
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
    ]
    threads = await other.list_threads(cl.types.Pagination(first=10), cl.types.ThreadFilter(userId=user.id))
    assert [t["id"] for t in threads.data] == [thread]
