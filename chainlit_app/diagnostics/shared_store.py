"""The findings of a cluster's processes in one PostgreSQL table, so every process's panel shows them all.

Behind a sticky balancer an admin's browser stays on one process, while the context-length refusal or the
empty answer a user met was seen by another (chainlit_app.cluster). Each process therefore publishes what
it found itself (chat, probe, preflight; shared_rows.SHARED_SOURCES) into `shared_findings`, one row per
cause and process, and reads the others' rows back for its panel. A cause is stored as the store's entry id
(a hash of kind and cause key): the key is made of evidence text, which must not reach the table unredacted.

All of it runs in one background task every `interval` seconds, never on an answer's path: the store only
bumps a version when it changes, and a round sends the entries changed since the last one in one
statement. A resolution made by one process (the engine answered again, a remedy was verified) resolves
the other processes' rows of that cause seen before it, and each process applies those to its own store.
The table keeps at most the store's bound of causes (resolved ones, then the oldest, go first). A failing
database is logged once, and the panel keeps showing this process's own findings meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    Integer,
    MetaData,
    Table,
    Text,
    and_,
    bindparam,
    case,
    delete,
    not_,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from .redact import SecretSource, redact, redact_tree, secrets_of
from .shared_rows import SHARED_SOURCES, causes_to_drop, merged, text_from_json, text_to_json
from .store import FindingsStore

log = logging.getLogger(__name__)

POSTGRES_PREFIX = "postgresql"  # history.database_url gives postgresql+asyncpg://
ROUND_TIMEOUT_S = 10.0
READ_UNWATCHED_S = 30.0  # how often the others' rows are read while no panel is open (resolutions)
_CREATE_LOCK = 0x5F1D1  # an advisory lock: two processes starting together create the table once

METADATA = MetaData()
FINDINGS = Table(
    "shared_findings", METADATA,
    Column("kind", Text, primary_key=True), Column("cause_id", Text, primary_key=True),
    Column("process", Text, primary_key=True),
    Column("severity", Text, nullable=False), Column("hint", Text, nullable=False),
    Column("count", Integer, nullable=False), Column("first_seen", Float, nullable=False),
    Column("last_seen", Float, nullable=False), Column("evidence", Text, nullable=False),
    Column("resolved", Boolean, nullable=False), Column("resolved_at", Float),
    Column("resolved_reason", Text, nullable=False), Column("basis", Text, nullable=False),
    Column("rule", Text, nullable=False), Column("source", Text, nullable=False),
)


def _upsert() -> Any:
    """One process's row of a cause, written whole; but an open row never reopens what another process
    resolved after this one last saw the problem (their rounds may cross)."""
    statement = insert(FINDINGS)
    new, old = statement.excluded, FINDINGS.c
    kept = and_(old.resolved, not_(new.resolved), old.resolved_at >= new.last_seen)
    updated = {name: getattr(new, name) for name in ("severity", "hint", "count", "first_seen", "last_seen",
                                                      "evidence", "basis", "rule", "source")}
    for name in ("resolved", "resolved_at", "resolved_reason"):
        updated[name] = case((kept, getattr(old, name)), else_=getattr(new, name))
    return statement.on_conflict_do_update(index_elements=[old.kind, old.cause_id, old.process], set_=updated)


def _spread() -> Any:
    """A resolution reaches the other processes' rows of the cause that they last saw before it."""
    c = FINDINGS.c
    return (FINDINGS.update()
            .where(c.kind == bindparam("b_kind"), c.cause_id == bindparam("b_cause"),
                   c.process != bindparam("b_process"), not_(c.resolved), c.last_seen <= bindparam("b_at"))
            .values(resolved=True, resolved_at=bindparam("b_at"), resolved_reason=bindparam("b_reason")))


class SharedFindings:
    """This process's side of the shared table: publishes its store's changes, keeps the others' rows."""

    def __init__(self, url: str, process: str, store: FindingsStore, secrets: SecretSource = (),
                 interval: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.process = process
        self.store = store
        self.interval = interval
        self._url = url
        self._secrets = secrets
        self._clock = clock
        self._engine: AsyncEngine | None = None
        self._created = False
        self._published = 0  # the store's version sent last
        self._rows: list[dict[str, Any]] = []
        self._read_at: float | None = None
        self._watched_until = 0.0
        self._error: str | None = None
        self._synced_at: float | None = None
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="shared-findings")

    async def stop(self) -> None:
        """The last changes go out (briefly: a stopping cluster must not wait on a dead database)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._publish_round(), timeout=2.0)
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None

    async def _loop(self) -> None:
        while True:
            await self.sync()
            await asyncio.sleep(self.interval)

    # -- one round --------------------------------------------------------------------------------
    async def sync(self) -> bool:
        """Publish what changed, and read the others' rows when due; False (logged once) when it failed."""
        try:
            await asyncio.wait_for(self._round(), timeout=ROUND_TIMEOUT_S)
        except Exception as exc:  # any database trouble: the panel keeps the local findings
            error = redact(f"{type(exc).__name__}: {exc}", secrets_of(self._secrets))[:300]
            if self._error is None:
                log.warning("shared findings: the table in DATABASE_URL failed (%s); this process's panel shows "
                            "its own findings until it answers again", error)
            self._error = error
            return False
        if self._error is not None:
            log.warning("shared findings: the table answers again")
            self._error = None
        self._synced_at = time.time()
        return True

    async def _round(self) -> None:
        await self._publish_round()
        now = self._clock()
        if self._read_at is None or now < self._watched_until or now - self._read_at >= READ_UNWATCHED_S:
            async with self._connection() as connection:
                self._rows = await self._read(connection)
            self._read_at = now
            self._apply_resolutions()

    async def _publish_round(self) -> None:
        changed, version = self.store.changed_since(self._published)
        records = [r for r in changed if r["source"] in SHARED_SOURCES]
        if records:
            async with self._connection() as connection:
                await self._publish(connection, records)
        self._published = version

    @contextlib.asynccontextmanager
    async def _connection(self) -> Any:
        if self._engine is None:
            self._engine = create_async_engine(self._url, pool_size=1, max_overflow=1, pool_pre_ping=True,
                                               connect_args={"timeout": 5})
        async with self._engine.begin() as connection:
            if not self._created:
                await connection.execute(text(f"SELECT pg_advisory_xact_lock({_CREATE_LOCK})"))
                await connection.run_sync(METADATA.create_all, checkfirst=True)
                self._created = True
            yield connection

    async def _publish(self, connection: AsyncConnection, records: list[dict[str, Any]]) -> None:
        secrets = secrets_of(self._secrets)
        rows = [{
            "kind": r["kind"], "cause_id": r["id"], "process": self.process, "severity": r["severity"],
            "hint": json.dumps(redact_tree(text_to_json(r["hint"]), secrets)), "count": r["count"],
            "first_seen": r["first_seen"], "last_seen": r["last_seen"],
            "evidence": json.dumps(redact_tree(r["evidence"], secrets)), "resolved": r["resolved"],
            "resolved_at": r["resolved_at"],
            "resolved_reason": json.dumps(redact_tree(text_to_json(r["resolved_reason"]), secrets)),
            "basis": r["basis"], "rule": r["rule"], "source": r["source"],
        } for r in records]
        await connection.execute(_upsert(), rows)
        resolutions = [{"b_kind": row["kind"], "b_cause": row["cause_id"], "b_process": self.process,
                        "b_at": row["resolved_at"], "b_reason": row["resolved_reason"]}
                       for row in rows if row["resolved"] and row["resolved_at"] is not None]
        if resolutions:
            await connection.execute(_spread(), resolutions)

    async def _read(self, connection: AsyncConnection) -> list[dict[str, Any]]:
        """Every row (the table is bounded), after dropping the causes beyond the store's bound."""
        limit = self.store.max_entries
        result = await connection.execute(select(FINDINGS).order_by(FINDINGS.c.last_seen.desc()))
        rows = [dict(row) for row in result.mappings()]
        dropped = causes_to_drop(rows, limit)
        if dropped:
            c = FINDINGS.c
            statement = delete(FINDINGS).where(c.kind == bindparam("b_kind"), c.cause_id == bindparam("b_cause"))
            await connection.execute(statement, [{"b_kind": kind, "b_cause": cause} for kind, cause in dropped])
            gone = set(dropped)
            rows = [row for row in rows if (row["kind"], row["cause_id"]) not in gone]
        for row in rows:
            for name in ("hint", "evidence", "resolved_reason"):
                row[name] = json.loads(row[name])
        return rows

    def _apply_resolutions(self) -> None:
        """Another process resolved a cause this one has open (seen before then): it is resolved here too."""
        for row in self._rows:
            if row["process"] != self.process and row["resolved"] and row["resolved_at"] is not None:
                self.store.resolve_entry(row["cause_id"], text_from_json(row["resolved_reason"]), row["resolved_at"])

    # -- the panel's view -------------------------------------------------------------------------
    def viewed(self) -> None:
        """A panel reads: keep the others' rows fresh (read every round) for a while."""
        self._watched_until = self._clock() + 10.0

    def findings(self, local: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """This process's snapshot merged with the others' rows last read (the local ones alone before)."""
        return merged(local, self._rows, self.process, self.store.max_entries)

    def status(self) -> dict[str, Any]:
        """For the panel: which process this is, when the table was last reached, its error if failing."""
        return {"process": self.process, "synced_at": self._synced_at, "error": self._error,
                "processes": sorted({row["process"] for row in self._rows} | {self.process})}


def shared_findings_for(enabled: bool, url: str, process: str, store: FindingsStore,
                        secrets: SecretSource = ()) -> SharedFindings | None:
    """The shared table when CHAT_SHARED_FINDINGS is on and the history is on PostgreSQL; else None (each
    process keeps its own findings, as a single process always does)."""
    if not enabled:
        return None
    if not url.startswith(POSTGRES_PREFIX):
        log.warning("CHAT_SHARED_FINDINGS is on but DATABASE_URL is not PostgreSQL: findings stay per process")
        return None
    return SharedFindings(url, process, store, secrets)
