"""History writes that used to fail silently, made to happen for real on a SQLite file: text the drivers
refuse, and a write lock held by another connection (briefly, then for good)."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from pathlib import Path

import pytest
from chainlit.context import init_http_context

from chainlit_app.cleaning import clean_text
from chainlit_app.history import ChatHistoryLayer, database_url, prepare_schema
from chainlit_app.history_writes import RetryPolicy
from chainlit_app.monitor import Monitor

QUICK = RetryPolicy(attempts=3, first_wait=0.05, max_wait=0.2, sqlite_busy_timeout=0.2)


def _step(step_id: str, text: str) -> dict[str, object]:
    return {"id": step_id, "threadId": "t1", "name": "alice", "type": "user_message", "output": text,
            "streaming": False, "createdAt": step_id, "metadata": {"typed": text}}


def _outputs(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT output FROM steps ORDER BY id")]


async def _layer(tmp_path: Path, failures: list[tuple[str, str]], retry: RetryPolicy = QUICK) -> ChatHistoryLayer:
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    return ChatHistoryLayer(url, on_failure=lambda what, error: failures.append((what, error)), retry=retry)


async def test_lone_surrogates_and_control_characters_are_stored_cleaned(tmp_path: Path) -> None:
    """Chainlit's layer logged "surrogates not allowed" and stored nothing; now the cleaned text is stored."""
    failures: list[tuple[str, str]] = []
    layer = await _layer(tmp_path, failures)
    raw = "half an emoji \ud83d, a NUL \x00, an escape \x1b[31m, a tab\tand\nnewline"
    await layer.create_step(_step("1", raw))
    assert failures == []
    assert _outputs(tmp_path / "chat.db") == [clean_text(raw)]
    assert clean_text(raw) == "half an emoji , a NUL , an escape [31m, a tab\tand\nnewline"
    thread = await layer.get_thread("t1")
    assert thread is not None
    metadata = thread["steps"][0]["metadata"]  # SQLite gives JSON back as text
    assert (json.loads(metadata) if isinstance(metadata, str) else metadata) == {"typed": clean_text(raw)}


async def test_a_briefly_locked_database_is_retried_until_the_write_lands(tmp_path: Path,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    failures: list[tuple[str, str]] = []
    layer = await _layer(tmp_path, failures, RetryPolicy(attempts=50, first_wait=0.05, max_wait=0.2,
                                                         sqlite_busy_timeout=0.2))
    await layer.create_step(_step("0", "before"))
    holder = sqlite3.connect(tmp_path / "chat.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another connection holds the write lock
    caplog.set_level(logging.INFO, logger="chainlit_app.history_writes")
    write = asyncio.create_task(layer.create_step(_step("1", "during the lock")))
    for _ in range(600):  # until the layer has met the lock at least once
        if any("locked" in r.getMessage() for r in caplog.records) or write.done():
            break
        await asyncio.sleep(0.05)
    assert not write.done(), "the write must be waiting for the lock"
    holder.execute("COMMIT")
    holder.close()
    await asyncio.wait_for(write, 30)
    assert failures == []
    assert _outputs(tmp_path / "chat.db") == ["before", "during the lock"]


async def test_a_lock_that_stays_becomes_an_admin_finding(tmp_path: Path) -> None:
    monitor = Monitor(lambda: None, lambda: None)
    failures: list[tuple[str, str]] = []

    def report(what: str, error: str) -> None:
        failures.append((what, error))
        monitor.observe_history_failure(what, error)

    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    layer = ChatHistoryLayer(url, on_failure=report, retry=QUICK, on_recovered=monitor.observe_history_recovered)
    await layer.create_step(_step("0", "before"))
    holder = sqlite3.connect(tmp_path / "chat.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        await layer.create_step(_step("1", "secret question text"))  # returns: the chat goes on
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert failures == [("INSERT INTO steps", "OperationalError: database is locked")]
    findings = [f for f in monitor.store.snapshot() if f["kind"] == "history_write_failed"]
    assert len(findings) == 1, monitor.store.snapshot()
    evidence = " ".join(str(e) for e in findings[0]["evidence"])
    assert "database is locked" in evidence and "INSERT INTO steps" in evidence, findings[0]
    assert findings[0]["title"] == "Chat history could not be stored" and not findings[0]["resolved"]
    assert "secret question text" not in str(findings), "users' text stays out of the panel"
    assert findings[0]["hint"]

    # The lock is gone: a read does not close the finding, the next write that lands does, and says the gap stays.
    await layer.get_thread("t1")
    assert not monitor.store.snapshot()[0]["resolved"]
    await layer.create_step(_step("2", "after"))
    [closed] = [f for f in monitor.store.snapshot() if f["kind"] == "history_write_failed"]
    assert closed["resolved"] and "stay missing" in closed["resolved_reason"], closed
    assert _outputs(tmp_path / "chat.db") == ["before", "after"]
