"""The chat history schema on a real SQLite file: created from nothing, upgraded in place, usable."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import chainlit as cl
import pytest
from chainlit.context import init_http_context

from chainlit_app.history import (
    ChatHistoryLayer,
    conversation_turns,
    database_url,
    make_data_layer,
    prepare_schema,
)
from chainlit_app.i18n import use_language


def _columns(db: Path, table: str) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


async def test_schema_is_created_and_users_are_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    url = database_url(tmp_path)
    assert url == f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"
    await prepare_schema(url)
    for table in ("users", "threads", "steps", "elements", "feedbacks"):
        assert _columns(tmp_path / "chat.db", table)
    layer = make_data_layer(url)
    created = await layer.create_user(cl.User(identifier="alice", metadata={"role": "user"}))
    assert created is not None
    again = await layer.get_user("alice")
    assert again is not None and again.metadata["role"] == "user"


async def test_an_older_schema_is_upgraded_without_losing_rows(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    with sqlite3.connect(db) as conn:
        conn.execute('CREATE TABLE steps ("id" TEXT PRIMARY KEY, "name" TEXT NOT NULL, "type" TEXT NOT NULL, '
                     '"threadId" TEXT NOT NULL, "streaming" BOOLEAN NOT NULL, "output" TEXT)')
        conn.execute("INSERT INTO steps VALUES ('s1', 'Assistant', 'assistant_message', 't1', 0, 'kept')")
    added = await prepare_schema(f"sqlite+aiosqlite:///{db}")
    assert "steps.modes" in added and "steps.defaultOpen" in added
    assert {"modes", "command", "autoCollapse"} <= _columns(db, "steps")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT output FROM steps WHERE id = 's1'").fetchone() == ("kept",)
    assert await prepare_schema(f"sqlite+aiosqlite:///{db}") == [], "a second run changes nothing"


def test_database_url_prefers_postgres_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db:5432/chat")
    assert database_url(tmp_path) == "postgresql+asyncpg://u:p@db:5432/chat"


def test_resumed_conversation_keeps_user_and_model_turns_only() -> None:
    steps = [
        {"type": "assistant_message", "name": "Console", "output": "Welcome!", "createdAt": "1"},
        {"type": "user_message", "name": "alice", "output": "What is the capital of France?", "createdAt": "2"},
        {"type": "assistant_message", "name": "Assistant", "output": "Paris.", "createdAt": "3"},
        {"type": "user_message", "name": "alice", "output": "  ", "createdAt": "4"},
    ]
    assert conversation_turns(steps, "Assistant") == [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
    ]


def test_resumed_conversation_drops_the_chats_notes_from_answers() -> None:
    """Notes like "(Cut at the max-tokens limit.)" are for the reader; the model never wrote them."""
    steps = [
        {"type": "user_message", "name": "alice", "output": "Tell me a story.", "createdAt": "1"},
        {"type": "assistant_message", "name": "Assistant", "createdAt": "2",
         "output": "Once upon a time\n\nthere was\n\n_(Cut at the max-tokens limit.)_"},
        {"type": "user_message", "name": "alice", "output": "Go on.", "createdAt": "3"},
        {"type": "assistant_message", "name": "Assistant", "createdAt": "4",
         "output": "a fox\n\n_⚠ Interrupted: The model server cannot be reached._"},
        {"type": "user_message", "name": "alice", "output": "Again?", "createdAt": "5"},
        {"type": "assistant_message", "name": "Assistant", "createdAt": "6", "output": "_(Stopped by the user.)_"},
        {"type": "assistant_message", "name": "Assistant", "createdAt": "7", "output":
         "_(The model returned an empty answer: finish reason stop, 0 tokens.)_\n\n"
         "_Open the diagnostics panel for the likely cause and the fix._"},
    ]
    assert conversation_turns(steps, "Assistant") == [
        {"role": "user", "content": "Tell me a story."},
        {"role": "assistant", "content": "Once upon a time\n\nthere was"},
        {"role": "user", "content": "Go on."},
        {"role": "assistant", "content": "a fox"},
        {"role": "user", "content": "Again?"},
    ]


def _step(step_id: str, thread_id: str, kind: str, text: str) -> dict[str, object]:
    return {"id": step_id, "threadId": thread_id, "name": "alice" if kind == "user_message" else "Assistant",
            "type": kind, "output": text, "streaming": False, "createdAt": step_id}


def _stored(db: Path, thread_id: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute('SELECT output FROM steps WHERE "threadId" = ? ORDER BY id', (thread_id,))]


async def test_a_question_is_stored_at_once(tmp_path: Path) -> None:
    """A crash before the answer's first token must not lose the question: its write waits for nothing."""
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    layer = ChatHistoryLayer(url)
    await asyncio.wait_for(layer.create_step(_step("1", "t1", "user_message", "Capital of France?")), 5)
    assert _stored(tmp_path / "chat.db", "t1") == ["Capital of France?"]


async def test_steps_of_a_written_thread_skip_the_thread_lookup(tmp_path: Path) -> None:
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    layer = ChatHistoryLayer(url)
    statements: list[str] = []
    real_execute = layer.execute_sql

    async def counting(query: str, parameters: dict[Any, Any]) -> Any:
        statements.append(" ".join(query.split())[:30])
        return await real_execute(query=query, parameters=parameters)

    layer.execute_sql = counting  # type: ignore[method-assign]
    await layer.create_step(_step("1", "t1", "assistant_message", "first"))
    first = list(statements)
    statements.clear()
    await layer.create_step(_step("2", "t1", "assistant_message", "second"))
    assert len(statements) == 1 and statements[0].startswith("INSERT INTO steps"), statements
    # no lookup of the new thread (a read that could not join the batch): one upsert, then the step
    assert [s[:19] for s in first] == ["INSERT INTO threads", "INSERT INTO steps ("], first
    assert _stored(tmp_path / "chat.db", "t1") == ["first", "second"]
    with sqlite3.connect(tmp_path / "chat.db") as conn:  # commits append to a write-ahead log
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_chainlits_run_steps_are_not_stored_and_their_children_are_top_level(tmp_path: Path) -> None:
    """The wrapper steps around on_message & co. carry nothing a reader sees; storing them cost two writes."""
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    layer = ChatHistoryLayer(url)
    run = {"id": "r1", "threadId": "t1", "name": "on_message", "type": "run", "parentId": "q1", "output": "",
           "streaming": False, "createdAt": "2"}
    await layer.create_step(_step("q1", "t1", "assistant_message", "Welcome!"))
    await layer.create_step(run)
    await layer.update_step(run)
    await layer.create_step({**_step("a1", "t1", "assistant_message", "Paris."), "parentId": "r1"})
    with sqlite3.connect(tmp_path / "chat.db") as conn:
        rows = conn.execute('SELECT id, type, "parentId" FROM steps ORDER BY id').fetchall()
    assert rows == [("a1", "assistant_message", None), ("q1", "assistant_message", None)]
    thread = await layer.get_thread("t1")
    assert thread is not None and sorted(s["output"] for s in thread["steps"]) == ["Paris.", "Welcome!"]


async def test_a_thread_begun_with_a_button_is_named_by_its_label_not_its_action_id(tmp_path: Path) -> None:
    """Chainlit names the thread after the first interaction: for the Diagnostics button, "open_diagnostics"."""
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    layer = ChatHistoryLayer(url)
    await layer.update_thread("t1", name="open_diagnostics")
    with use_language("zh-CN"):
        await layer.update_thread("t2", name="open_diagnostics")
    await layer.update_thread("t3", name="What is the capital of France?")
    with sqlite3.connect(tmp_path / "chat.db") as conn:
        names = dict(conn.execute("SELECT id, name FROM threads").fetchall())
    assert names == {"t1": "Diagnostics", "t2": "诊断", "t3": "What is the capital of France?"}
