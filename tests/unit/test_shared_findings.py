"""Issue 16: a cluster's processes share their findings through one table on a real (throwaway) PostgreSQL.

Two SharedFindings on one database stand for two app processes: what one finds in its chat reaches the
other's panel with the process that saw it, counts add up by cause, a resolution made by one resolves the
other's, the table keeps the store's bound, log findings stay local, and a dead database leaves the panel
with the local findings (logged once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import create_async_engine

from chainlit_app.diagnostics import Finding, FindingsStore, from_answer
from chainlit_app.diagnostics.shared_store import FINDINGS, SharedFindings
from chainlit_app.engine.supervisor import free_port
from chainlit_app.i18n import Msg
from tests.postgres import throwaway_postgres

ONE, TWO = "127.0.0.1:8001", "127.0.0.1:8002"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with throwaway_postgres() as url:
        yield url.replace("postgres://", "postgresql+asyncpg://", 1)


@pytest_asyncio.fixture
async def url(server: str) -> AsyncIterator[str]:
    """The server with an empty table for each test."""
    yield server
    engine = create_async_engine(server)
    async with engine.begin() as connection:
        await connection.run_sync(FINDINGS.drop, checkfirst=True)
    await engine.dispose()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def empty_answer() -> Finding:
    """What the chat finds in an answer with no text (from_answer, source chat)."""
    [finding] = from_answer("", "stop", 0)
    return finding


def log_finding(text: str = "ERROR engine crashed: CUDA out of memory") -> Finding:
    return Finding(kind="out_of_memory", line=7, text=text, hint="", source="log", rule="log_oom")


def numbered_cause(i: int, source: str) -> Finding:
    return Finding(kind="connection", line=0, text=f"cause {i}", hint="", source=source, rule=f"{source}_{i}")


def process(url: str, name: str, clock: Clock, max_entries: int = 200) -> SharedFindings:
    shared = SharedFindings(url, name, FindingsStore(max_entries=max_entries, clock=clock), secrets=("s3cret-key",))
    shared.viewed()  # a panel is open: every round reads the others' rows
    return shared


def by_kind(shared: SharedFindings) -> dict[str, dict[str, Any]]:
    return {entry["kind"]: entry for entry in shared.findings(shared.store.snapshot())}


async def rows(url: str) -> int:
    engine = create_async_engine(url)
    async with engine.connect() as connection:
        count = (await connection.execute(select(func.count()).select_from(FINDINGS))).scalar_one()
    await engine.dispose()
    return int(count)


async def open_rows(url: str) -> set[str]:
    """The processes whose row is open, as a third process would read them."""
    engine = create_async_engine(url)
    async with engine.connect() as connection:
        result = await connection.execute(select(FINDINGS.c.process).where(FINDINGS.c.resolved.is_(False)))
        processes = {str(name) for name in result.scalars()}
    await engine.dispose()
    return processes


async def test_a_chat_finding_of_one_process_is_in_the_others_panel_with_its_process(url: str) -> None:
    clock = Clock()
    one, two = process(url, ONE, clock), process(url, TWO, clock)
    try:
        one.store.add(empty_answer())
        clock.now += 5
        one.store.add(empty_answer())
        one.store.add(log_finding())  # every process tails the same log: not published
        clock.now += 5
        two.store.add(empty_answer())
        assert await one.sync() and await two.sync() and await one.sync()

        seen = by_kind(two)
        assert set(seen) == {"empty_output"}, "the log finding stays with the process that tailed it"
        entry = seen["empty_output"]
        assert entry["count"] == 3 and entry["source"] == "chat" and not entry["resolved"]
        assert entry["first_seen"] == 1000.0 and entry["last_seen"] == 1010.0
        assert [(s["process"], s["count"]) for s in entry["seen_by"]] == [(TWO, 1), (ONE, 2)]
        assert {e["process"] for e in entry["evidence"]} == {ONE, TWO}
        assert entry["hint"] and entry["title"] != "empty_output", "texts rendered, not raw keys"
        assert set(by_kind(one)) == {"empty_output", "out_of_memory"}
        assert by_kind(one)["empty_output"]["count"] == 3
        assert await rows(url) == 2, "one row per cause and process"
        assert two.status()["processes"] == [ONE, TWO] and two.status()["error"] is None
    finally:
        await one.stop()
        await two.stop()


async def test_secrets_are_masked_before_they_reach_the_table(url: str) -> None:
    clock = Clock()
    one, two = process(url, ONE, clock), process(url, TWO, clock)
    try:
        # no rule: the cause key is made of this text, and it must not reach the table either
        one.store.add(Finding(kind="auth", line=0, text="401 from http://u:pw@h/v1 with key s3cret-key",
                              hint="", source="probe", rule=""))
        assert await one.sync() and await two.sync()
        evidence = by_kind(two)["auth"]["evidence"][0]["text"]
        assert "s3cret-key" not in evidence and ":pw@" not in evidence and "***" in evidence
        engine = create_async_engine(url)
        async with engine.connect() as connection:
            table = str([tuple(row) for row in await connection.execute(select(FINDINGS))])
        await engine.dispose()
        assert "s3cret-key" in one.store.snapshot()[0]["evidence"][0]["text"], "the local store holds it raw"
        assert "s3cret-key" not in table and ":pw@" not in table
    finally:
        await one.stop()
        await two.stop()


async def test_a_resolution_in_one_process_resolves_the_cause_in_the_others(url: str) -> None:
    clock = Clock()
    one, two = process(url, ONE, clock), process(url, TWO, clock)
    try:
        one.store.add(empty_answer())
        two.store.add(empty_answer())
        assert await one.sync() and await two.sync()
        clock.now += 2
        two.store.add(empty_answer())  # seen again in two, not yet published when one resolves
        clock.now += 8
        assert one.store.resolve_all(Msg("resolved.attached_again")) == 1
        assert await one.sync()
        assert await open_rows(url) == set(), "one's resolution reached two's row"
        assert await two.sync()
        assert await open_rows(url) == set(), "two's open row, last seen before the resolution, does not reopen it"
        assert two.store.snapshot()[0]["resolved"], "two's own store took the resolution"
        entry = by_kind(two)["empty_output"]
        assert entry["resolved"] and entry["resolved_at"] == 1010.0 and entry["count"] == 3
        assert entry["resolved_reason"] == Msg("resolved.attached_again").render()

        clock.now += 5
        two.store.add(empty_answer())  # seen after the resolution: open again everywhere
        assert await two.sync() and await one.sync()
        assert not by_kind(one)["empty_output"]["resolved"]
        assert await open_rows(url) == {TWO}
        assert one.store.snapshot()[0]["resolved"], "one itself did not see it again"
    finally:
        await one.stop()
        await two.stop()


async def test_the_table_keeps_the_stores_bound_dropping_resolved_then_oldest(url: str) -> None:
    clock = Clock()
    one, two = process(url, ONE, clock, max_entries=3), process(url, TWO, clock, max_entries=3)
    try:
        for i in range(3):
            clock.now += 1
            one.store.add(numbered_cause(i, "probe"))
        one.store.resolve_all("fixed", seen_before=1002.5)  # causes 0 and 1: resolved
        assert await one.sync()
        for i in range(3, 5):
            clock.now += 1
            two.store.add(numbered_cause(i, "chat"))
        assert await two.sync()
        assert await rows(url) == 3, "five causes published, the bound is three"
        rules = [entry["rule"] for entry in two.findings([])]
        assert rules == ["chat_4", "chat_3", "probe_2"], "the resolved causes went first"
    finally:
        await one.stop()
        await two.stop()


async def test_a_dead_database_is_logged_once_and_the_panel_keeps_the_local_findings(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    dead = process(f"postgresql+asyncpg://chat:s3cret-key@127.0.0.1:{free_port()}/postgres", ONE, clock)
    try:
        dead.store.add(empty_answer())
        with caplog.at_level(logging.WARNING, logger="chainlit_app.diagnostics.shared_store"):
            assert not await dead.sync()
            assert not await dead.sync()
        warnings = [r for r in caplog.records if r.name == "chainlit_app.diagnostics.shared_store"]
        assert len(warnings) == 1 and "s3cret-key" not in warnings[0].getMessage()
        assert [e["kind"] for e in dead.findings(dead.store.snapshot())] == ["empty_output"]
        assert dead.status()["error"] and "s3cret-key" not in dead.status()["error"]
    finally:
        await dead.stop()


async def test_a_full_stores_round_and_a_quiet_round(url: str) -> None:
    """Figures for docs/SCALING.md (printed, not asserted): one round publishing a full store's 200 causes,
    and one that only reads them back."""
    clock = Clock()
    one, two = process(url, ONE, clock), process(url, TWO, clock)
    try:
        assert await one.sync() and await two.sync()  # the table and the connections exist
        for i in range(one.store.max_entries):
            clock.now += 1
            one.store.add(numbered_cause(i, "chat"))
        started = time.perf_counter()
        assert await one.sync()
        publishing = time.perf_counter() - started
        started = time.perf_counter()
        assert await two.sync()
        reading = time.perf_counter() - started
        assert await rows(url) == 200 and len(two.findings([])) == 200
        print(f"\nround publishing 200 changed causes: {publishing * 1000:.1f} ms (and reading them back); "
              f"a quiet round reading 200 rows: {reading * 1000:.1f} ms")
    finally:
        await one.stop()
        await two.stop()
