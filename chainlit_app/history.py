"""Chat history: Chainlit's SQLAlchemy data layer on SQLite by default (PostgreSQL by DATABASE_URL),
with the schema created and upgraded by the app itself (Chainlit creates no tables)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from sqlalchemy import Boolean, Column, Integer, MetaData, Table, Text, inspect
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.schema import CreateColumn

log = logging.getLogger(__name__)

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
    data_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite+aiosqlite:///{data_dir / 'chat.db'}"


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


def make_data_layer(url: str) -> SQLAlchemyDataLayer:
    return SQLAlchemyDataLayer(conninfo=url)


def conversation_turns(steps: list[dict[str, Any]], assistant_author: str) -> list[dict[str, str]]:
    """A stored thread's user and assistant messages, in order, for the model to see again on resume."""
    turns = []
    for step in sorted(steps, key=lambda s: s.get("createdAt") or ""):
        text = step.get("output") or ""
        if step.get("type") == "user_message" and text.strip():
            turns.append({"role": "user", "content": text})
        elif step.get("type") == "assistant_message" and step.get("name") == assistant_author and text.strip():
            turns.append({"role": "assistant", "content": text})
    return turns
