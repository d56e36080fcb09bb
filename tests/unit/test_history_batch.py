"""Writes made together share one transaction, on a real SQLite file; a bad statement among them is
reported alone and the others are still stored; a read sees the writes queued before it."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from chainlit.context import init_http_context

from chainlit_app.history import ChatHistoryLayer, database_url, prepare_schema
from chainlit_app.history_batch import is_write
from chainlit_app.history_writes import RetryPolicy

QUICK = RetryPolicy(attempts=3, first_wait=0.05, max_wait=0.2, sqlite_busy_timeout=0.2)


def _step(step_id: str, text: str) -> dict[str, object]:
    return {"id": step_id, "threadId": "t1", "name": "alice", "type": "user_message", "output": text,
            "streaming": False, "createdAt": step_id, "metadata": {}}


def _outputs(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT output FROM steps ORDER BY id")]


async def _layer(tmp_path: Path, failures: list[tuple[str, str]]) -> ChatHistoryLayer:
    init_http_context()
    url = database_url(tmp_path)
    await prepare_schema(url)
    return ChatHistoryLayer(url, on_failure=lambda what, error: failures.append((what, error)), retry=QUICK)


def test_statements_that_change_data_are_writes() -> None:
    assert is_write("\n  INSERT INTO steps ...") and is_write("update threads set") and is_write("DELETE FROM x")
    assert not is_write('SELECT "metadata" FROM threads') and not is_write("  ")


async def test_writes_made_together_share_one_transaction_and_are_all_stored(tmp_path: Path) -> None:
    failures: list[tuple[str, str]] = []
    layer = await _layer(tmp_path, failures)
    await layer.update_thread("t1", name="first")  # the thread exists: create_step then only writes the step
    batches_before = layer.writes.batches
    await asyncio.gather(*(layer.create_step(_step(f"{i:02d}", f"answer {i}")) for i in range(20)))
    assert failures == []
    assert _outputs(tmp_path / "chat.db") == [f"answer {i}" for i in range(20)]
    assert layer.writes.statements >= 20
    assert layer.writes.batches - batches_before < 20  # fewer transactions than statements


async def test_a_failing_statement_is_reported_alone_and_the_others_are_stored(tmp_path: Path) -> None:
    failures: list[tuple[str, str]] = []
    layer = await _layer(tmp_path, failures)
    await layer.update_thread("t1", name="first")
    good = [layer.create_step(_step(f"{i}", f"kept {i}")) for i in range(3)]
    bad = layer.execute_sql("INSERT INTO no_such_table (id) VALUES (:id)", {"id": "x"})
    results = await asyncio.gather(*good[:2], bad, good[2])
    assert results[2] is None
    assert [what for what, _ in failures] == ["INSERT INTO no_such_table"]
    assert "no such table" in failures[0][1]
    assert _outputs(tmp_path / "chat.db") == ["kept 0", "kept 1", "kept 2"]


async def test_a_read_sees_the_writes_queued_before_it(tmp_path: Path) -> None:
    failures: list[tuple[str, str]] = []
    layer = await _layer(tmp_path, failures)
    await layer.update_thread("t1", name="first")
    write = asyncio.ensure_future(layer.create_step(_step("1", "written first")))
    await asyncio.sleep(0)  # queued, not yet committed
    thread = await layer.get_thread("t1")
    await write
    assert thread is not None and [s["output"] for s in thread["steps"]] == ["written first"]
    assert failures == []
