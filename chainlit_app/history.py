"""Chat history: Chainlit's SQLAlchemy data layer on SQLite by default (PostgreSQL by DATABASE_URL),
with the schema created and upgraded by the app itself (Chainlit creates no tables)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.user import PersistedUser
from sqlalchemy import Boolean, Column, Integer, MetaData, Table, Text, event, inspect, text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.schema import CreateColumn

from chainlit_app import i18n
from chainlit_app.cleaning import clean_value
from chainlit_app.conversation import without_notes
from chainlit_app.history_batch import Result, Statement, WriteBatcher, is_write
from chainlit_app.history_threads import ensure_thread, name_thread
from chainlit_app.history_writes import (
    DEFAULT_RETRY,
    OnFailure,
    OnRecovered,
    RetryPolicy,
    call_quietly,
    report_failure,
    with_retry,
)
from chainlit_app.notices import OPEN_DIAGNOSTICS_ACTION, RETRY_ACTION
from chainlit_app.private_files import open_private, private_dir

log = logging.getLogger(__name__)
# Chainlit names a thread after its first interaction, and a button's is the action's id: a thread the admin
# began with the Diagnostics button was listed as "open_diagnostics". The button's label is shown instead.
BUTTON_THREAD_NAMES = {OPEN_DIAGNOSTICS_ACTION: "panel.action", RETRY_ACTION: "chat.retry_label"}

_ID = Text().with_variant(UUID(as_uuid=False), "postgresql")
_JSON = Text().with_variant(JSONB(), "postgresql")
_TAGS = Text().with_variant(ARRAY(Text()), "postgresql")

METADATA = MetaData()
# The columns Chainlit 2.12's SQLAlchemyDataLayer reads and writes (its StepDict/ElementDict keys).
USERS = Table(
    "users", METADATA,
    Column("id", _ID, primary_key=True), Column("identifier", Text, nullable=False, unique=True),
    Column("metadata", _JSON, nullable=False), Column("createdAt", Text),
)
THREADS = Table(
    "threads", METADATA,
    Column("id", _ID, primary_key=True), Column("createdAt", Text), Column("name", Text),
    Column("userId", _ID), Column("userIdentifier", Text), Column("tags", _TAGS), Column("metadata", _JSON),
)
STEPS = Table(
    "steps", METADATA,
    Column("id", _ID, primary_key=True), Column("name", Text, nullable=False), Column("type", Text, nullable=False),
    Column("threadId", _ID, nullable=False), Column("parentId", _ID), Column("streaming", Boolean, nullable=False),
    Column("waitForAnswer", Boolean), Column("isError", Boolean), Column("metadata", _JSON), Column("tags", _TAGS),
    Column("input", Text), Column("output", Text), Column("createdAt", Text), Column("command", Text),
    Column("modes", _JSON), Column("start", Text), Column("end", Text), Column("generation", _JSON),
    Column("showInput", Text), Column("language", Text), Column("indent", Integer), Column("defaultOpen", Boolean),
    Column("autoCollapse", Boolean), Column("icon", Text),
)
ELEMENTS = Table(
    "elements", METADATA,
    Column("id", _ID, primary_key=True), Column("threadId", _ID), Column("type", Text), Column("url", Text),
    Column("chainlitKey", Text), Column("name", Text, nullable=False), Column("display", Text),
    Column("objectKey", Text), Column("size", Text), Column("page", Integer), Column("language", Text),
    Column("forId", _ID), Column("mime", Text), Column("props", _JSON), Column("autoPlay", Boolean),
    Column("playerConfig", _JSON),
)
FEEDBACKS = Table(
    "feedbacks", METADATA,
    Column("id", _ID, primary_key=True), Column("forId", _ID, nullable=False), Column("threadId", _ID, nullable=False),
    Column("value", Integer, nullable=False), Column("comment", Text),
)


def database_url(data_dir: Path) -> str:
    """DATABASE_URL (PostgreSQL for several app instances) or a SQLite file in the data folder."""
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        if url.startswith("postgres://"):
            url = "postgresql://" + url[len("postgres://"):]
        if url.startswith("postgresql://"):
            url = "postgresql+asyncpg://" + url[len("postgresql://"):]
        return url
    private_dir(data_dir)
    database = data_dir / "chat.db"
    # Created empty and 0600 before SQLite opens it (an empty file is a new database to SQLite), because
    # SQLite gives its -journal and -wal files the database file's mode: all of them stay owner-only.
    os.close(open_private(database))
    return f"sqlite+aiosqlite:///{database}"


def _upgrade(connection: Any) -> list[str]:
    """Create missing tables, then add columns a newer Chainlit expects to existing tables."""
    METADATA.create_all(connection, checkfirst=True)
    inspector = inspect(connection)
    added = []
    for table in METADATA.sorted_tables:
        present = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in present and not column.primary_key:
                ddl = CreateColumn(column).compile(dialect=connection.dialect)
                connection.exec_driver_sql(f'ALTER TABLE "{table.name}" ADD COLUMN {ddl}')
                added.append(f"{table.name}.{column.name}")
    return added


async def prepare_schema(url: str) -> list[str]:
    """Make the database match what the data layer needs; returns the columns added by an upgrade."""
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            conn: AsyncConnection = connection
            added: list[str] = await conn.run_sync(_upgrade)
    finally:
        await engine.dispose()
    if added:
        log.info("chat history schema upgraded: added %s", ", ".join(added))
    return added


_MAX_RUN_STEPS = 10_000
READ_WAITS_FOR_WRITES = 2.0  # seconds; writes normally commit within the 20 ms batch window


def _sqlite_write_ahead_log(dbapi_connection: Any, _record: Any) -> None:
    """WAL with synchronous=NORMAL: a commit is an append to the log, not several fsyncs of the database
    (two per answer while it streams). Still safe when the app crashes; only a power cut can lose the
    last commits."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class ChatHistoryLayer(SQLAlchemyDataLayer):
    """Chainlit's SQLAlchemy data layer that loses nothing quietly and saves writes on an answer's path.

    Every value is cleaned before it is stored (`cleaning.clean_value`: lone surrogates break SQLite's
    driver, NUL breaks PostgreSQL), a locked database is retried with backoff and a failure that stays is
    reported (`history_writes`), and so is the first write that succeeds after it (`on_recovered`: the admin's
    finding can then say the gap is behind us); Chainlit's run steps are not stored, and a new thread is
    created and named without reading it or its user first (`history_threads`; a user's identifier is
    remembered)."""

    def __init__(self, conninfo: str, on_failure: OnFailure | None = None,
                 retry: RetryPolicy = DEFAULT_RETRY, on_recovered: OnRecovered | None = None,
                 language: Callable[[], i18n.Language] | None = None) -> None:
        sqlite = conninfo.startswith("sqlite")
        super().__init__(conninfo=conninfo, connect_args={"timeout": retry.sqlite_busy_timeout} if sqlite else None)
        self.on_failure = on_failure
        self.on_recovered = on_recovered
        self.language = language  # the session's, for a thread's name (Chainlit names it in a task of its own)
        self._failing = False  # a failure was reported and no write has succeeded since
        self.retry = retry
        self._written_threads: set[str] = set()
        self._user_identifiers: dict[str, str] = {}  # user id -> identifier (a user row's never change)
        self._run_steps: dict[str, None] = {}  # ids of the run steps not stored, oldest first
        self.writes = WriteBatcher(self._run_many, self._run_one)
        if sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_write_ahead_log)

    async def execute_sql(self, query: str, parameters: dict[Any, Any]) -> list[dict[str, Any]] | int | None:
        """Chainlit's statement runner, with cleaned values, retries while locked, and failures reported;
        writes made together share a transaction (`history_batch`), a read sees the writes before it."""
        values = {key: clean_value(value) for key, value in parameters.items()}
        if is_write(query):
            return await self.writes.submit(query, values)
        # Read your writes: queued writes commit within the batch window. While another process holds the
        # database, they retry for seconds; a read (every request's login check is one) does not wait for
        # them then, or the admin's panel would hang exactly when it has a failure to show.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.writes.idle(), READ_WAITS_FOR_WRITES)
        return await self._run_one((query, values))

    async def _run_one(self, statement: Statement) -> Result:
        query, values = statement
        try:
            result = await with_retry(lambda: self._execute(query, values), self.retry)
        except Exception as exc:
            self._failing = True
            report_failure(query, exc, self.on_failure)
            return None
        if is_write(query):
            self._written()
        return result

    def _written(self) -> None:
        if self._failing:
            self._failing = False
            log.info("chat history writes succeed again")
            call_quietly(self.on_recovered)

    async def _run_many(self, statements: list[Statement]) -> list[Result]:
        """One attempt (SQLite's own busy wait included): a batch that fails is run again one statement at a
        time, each with the retries, so a held lock is reported as soon as without batching."""
        results = await self._execute_many(statements)
        self._written()
        return results

    async def _execute_many(self, statements: list[Statement]) -> list[Result]:
        async with self.async_session() as session:
            results: list[Result] = []
            try:
                await session.begin()
                for query, values in statements:
                    result = await session.execute(text(query), values)
                    results.append(self.clean_result([dict(row._mapping) for row in result.fetchall()])
                                   if result.returns_rows else int(result.rowcount))
                await session.commit()
            except BaseException:
                await session.rollback()
                raise
            return results

    async def _execute(self, query: str, values: dict[Any, Any]) -> list[dict[str, Any]] | int:
        async with self.async_session() as session:
            try:
                await session.begin()
                result = await session.execute(text(query), values)
                await session.commit()
            except BaseException:
                await session.rollback()
                raise
            if result.returns_rows:
                rows: list[dict[str, Any]] = self.clean_result([dict(row._mapping) for row in result.fetchall()])
                return rows
            return int(result.rowcount)

    async def create_step(self, step_dict: Any) -> None:
        if step_dict.get("type") == "run":
            # Chainlit's own wrapper steps around on_chat_start, on_message and actions: no content, never
            # shown, but two writes (create and update) per question. Not stored; their children become
            # top-level messages, as the chat shows them.
            self._run_steps[step_dict.get("id")] = None
            while len(self._run_steps) > _MAX_RUN_STEPS:
                self._run_steps.pop(next(iter(self._run_steps)))
            return
        step_dict = clean_value(dict(step_dict))  # before Chainlit turns metadata into JSON text
        if step_dict.get("parentId") in self._run_steps:
            step_dict["parentId"] = None
        await super().create_step(step_dict)

    async def update_thread(
        self,
        thread_id: str,
        name: str | None = None,
        user_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        tags: list[str] | None = None,
    ) -> None:
        if name in BUTTON_THREAD_NAMES:
            with i18n.use_language(self.language() if self.language else i18n.current()):
                name = i18n.t(BUTTON_THREAD_NAMES[name])
        if metadata is None and tags is None and (name is not None or user_id is None):
            if name is None:  # create_step only makes sure the thread exists
                if thread_id not in self._written_threads:
                    await self.execute_sql(*ensure_thread(thread_id, await self.get_current_timestamp()))
                    self._written_threads.add(thread_id)
                return
            identifier = await self._get_user_identifer_by_id(user_id) if user_id else None
            await self.execute_sql(*name_thread(thread_id, await self.get_current_timestamp(), clean_value(name),
                                                user_id, identifier))
        else:
            await super().update_thread(thread_id, name=clean_value(name), user_id=user_id,
                                        metadata=clean_value(metadata), tags=clean_value(tags))
        self._written_threads.add(thread_id)

    async def get_user(self, identifier: str) -> PersistedUser | None:
        user = await super().get_user(identifier)
        if user is not None:
            self._user_identifiers[user.id] = user.identifier
        return user

    async def _get_user_identifer_by_id(self, user_id: str) -> str:  # Chainlit's spelling
        known = self._user_identifiers.get(user_id)
        if known is None:
            known = self._user_identifiers[user_id] = await super()._get_user_identifer_by_id(user_id)
        return known

    async def delete_thread(self, thread_id: str) -> None:
        self._written_threads.discard(thread_id)
        await super().delete_thread(thread_id)


def make_data_layer(url: str, on_failure: OnFailure | None = None, on_recovered: OnRecovered | None = None,
                    language: Callable[[], i18n.Language] | None = None) -> SQLAlchemyDataLayer:
    return ChatHistoryLayer(conninfo=url, on_failure=on_failure, on_recovered=on_recovered, language=language)


def conversation_turns(steps: list[dict[str, Any]], assistant_author: str) -> list[dict[str, str]]:
    """A stored thread's user and assistant messages, in order, for the model to see again on resume."""
    turns = []
    for step in sorted(steps, key=lambda s: s.get("createdAt") or ""):
        text = step.get("output") or ""
        if step.get("type") == "assistant_message":
            text = without_notes(text)  # the chat's notes to the reader were never the model's words
        if step.get("type") == "user_message" and text.strip():
            turns.append({"role": "user", "content": text})
        elif step.get("type") == "assistant_message" and step.get("name") == assistant_author and text.strip():
            turns.append({"role": "assistant", "content": text})
    return turns
