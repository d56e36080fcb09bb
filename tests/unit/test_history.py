"""The chat history schema on a real SQLite file: created from nothing, upgraded in place, usable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import chainlit as cl
import pytest

from chainlit_app.history import conversation_turns, database_url, make_data_layer, prepare_schema


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
