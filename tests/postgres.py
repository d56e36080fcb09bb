"""A throwaway PostgreSQL server for tests (Debian's server programs, installed by `make postgres`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from chainlit_app.engine.supervisor import free_port
from tests.conftest import REQUIRE_ALL


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


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """initdb + pg_ctl start on a free port (trust auth, user `chat`); yields its URL, then stops it and
    deletes its files. Skips (fails under `make test`) when the server programs are missing."""
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
