"""Chat history on a real PostgreSQL server (DATABASE_URL), as several app instances would share it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import chainlit as cl
import pytest
from chainlit.context import init_http_context

from chainlit_app.engine.supervisor import free_port
from chainlit_app.history import ChatHistoryLayer, conversation_turns, database_url, prepare_schema
from tests.conftest import REQUIRE_ALL

pytestmark = pytest.mark.integration

def _pg_bin() -> Path:
    """Debian's PostgreSQL server programs (any version), or CHAT_TEST_PG_BIN."""
    if os.environ.get("CHAT_TEST_PG_BIN"):
        return Path(os.environ["CHAT_TEST_PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else Path("/usr/lib/postgresql/missing/bin")


PG_BIN = _pg_bin()


def _as_postgres_user() -> list[str]:
    """PostgreSQL refuses to run as root: tests run as root here, so the server runs as `postgres`."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    if not (PG_BIN / "initdb").exists():
        if REQUIRE_ALL:
            pytest.fail(f"PostgreSQL missing at {PG_BIN} (make postgres)")
        pytest.skip(f"PostgreSQL missing at {PG_BIN}")
    root = Path(tempfile.mkdtemp(prefix="chat-pg-"))  # not under pytest's folder: the server user must reach it
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    prefix = _as_postgres_user()
    port = free_port()
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    try:
        start = [str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "pg.log"), "-w", "start"]
        for argv in ([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "chat"], start):
            done = subprocess.run([*prefix, *argv], capture_output=True, text=True, check=False)
            assert done.returncode == 0, f"{argv[0]} failed:\n{done.stdout}\n{done.stderr}"
        yield f"postgres://chat@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                       check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


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
