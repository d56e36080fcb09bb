"""A thread created and named without reading it first stores what Chainlit's own read-then-upsert stores
(real SQLite file, Chainlit's `update_thread` beside ours), and a new chat's thread costs no read."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import chainlit as cl
from chainlit.context import init_http_context
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer

from chainlit_app.history import ChatHistoryLayer, database_url, prepare_schema

COLUMNS = ("name", "userId", "userIdentifier", "metadata", "tags")


def _row(db: Path, thread_id: str) -> dict[str, Any]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute('SELECT * FROM threads WHERE "id" = ?', (thread_id,)).fetchone()
    return dict(row) if row is not None else {}


async def _layer(tmp_path: Path) -> tuple[ChatHistoryLayer, list[str]]:
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    layer = ChatHistoryLayer(url)
    statements: list[str] = []
    real_execute = layer.execute_sql

    async def counting(query: str, parameters: dict[Any, Any]) -> Any:
        statements.append(" ".join(query.split()).split(" ", 1)[0].upper())
        return await real_execute(query=query, parameters=parameters)

    layer.execute_sql = counting  # type: ignore[method-assign]
    return layer, statements


async def test_a_new_chat_is_created_and_named_as_chainlit_would_without_a_read(tmp_path: Path) -> None:
    layer, statements = await _layer(tmp_path)
    user = await layer.create_user(cl.User(identifier="alice", metadata={"role": "user"}))
    assert user is not None
    statements.clear()
    await layer.update_thread("ours")  # the question's create_step: the thread exists afterwards
    await layer.update_thread("ours", name="Capital of France?", user_id=user.id)  # the first interaction
    assert statements == ["INSERT", "INSERT"], "no read of the thread or of its user"
    await SQLAlchemyDataLayer.update_thread(layer, "theirs")
    await SQLAlchemyDataLayer.update_thread(layer, "theirs", name="Capital of France?", user_id=user.id)
    ours, theirs = _row(tmp_path / "chat.db", "ours"), _row(tmp_path / "chat.db", "theirs")
    assert {k: ours[k] for k in COLUMNS} == {k: theirs[k] for k in COLUMNS}
    assert ours["userIdentifier"] == "alice" and ours["name"] == "Capital of France?" and ours["createdAt"]
    threads = await layer.get_all_user_threads(user_id=user.id)
    assert threads is not None and {t["id"] for t in threads} == {"ours", "theirs"}


async def test_renaming_a_thread_keeps_its_metadata_and_creation_time(tmp_path: Path) -> None:
    layer, _ = await _layer(tmp_path)
    user = await layer.create_user(cl.User(identifier="bob", metadata={}))
    assert user is not None
    for thread_id in ("ours", "theirs"):  # metadata given: Chainlit's own read-and-merge path
        await layer.update_thread(thread_id, metadata={"chat_profile": "x", "kept": 1})
    created = _row(tmp_path / "chat.db", "ours")["createdAt"]
    await layer.update_thread("ours", name="renamed", user_id=user.id)
    await SQLAlchemyDataLayer.update_thread(layer, "theirs", name="renamed", user_id=user.id)
    ours, theirs = _row(tmp_path / "chat.db", "ours"), _row(tmp_path / "chat.db", "theirs")
    assert {k: ours[k] for k in COLUMNS} == {k: theirs[k] for k in COLUMNS}
    assert ours["createdAt"] == created and '"kept": 1' in ours["metadata"]


async def test_making_sure_an_existing_thread_exists_changes_nothing(tmp_path: Path) -> None:
    layer, _ = await _layer(tmp_path)
    await layer.update_thread("t1", name="first", metadata={"a": 1})
    before = _row(tmp_path / "chat.db", "t1")
    fresh = ChatHistoryLayer(database_url(tmp_path))  # another process: it has not written t1 itself
    await fresh.update_thread("t1")
    assert _row(tmp_path / "chat.db", "t1") == before


async def test_a_users_identifier_is_read_once(tmp_path: Path) -> None:
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    writer = ChatHistoryLayer(url)
    user = await writer.create_user(cl.User(identifier="carol", metadata={}))
    assert user is not None
    layer, statements = await _layer(tmp_path)  # knows no user yet: the first naming reads the identifier
    await layer.update_thread("t1", name="one", user_id=user.id)
    await layer.update_thread("t2", name="two", user_id=user.id)
    assert statements == ["SELECT", "INSERT", "INSERT"]
    assert _row(tmp_path / "chat.db", "t2")["userIdentifier"] == "carol"
