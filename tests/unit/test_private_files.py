"""Owner-only folders and files (issue 14, item 5): made so under a permissive umask, tightened when loose."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from chainlit_app.engine.logfiles import rotate
from chainlit_app.history import database_url
from chainlit_app.private_files import open_private, private_dir, secure_storage
from chainlit_app.secrets_store import read_or_create
from tests.conftest import settings_for_tests


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """The default umask of most systems: without care, folders are 0755 and files 0644."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def test_new_folders_and_their_missing_parents_are_owner_only(tmp_path: Path) -> None:
    folder = private_dir(tmp_path / "a" / "b" / "data")
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", folder)] == [0o700] * 3


def test_loose_folders_of_ours_are_tightened_with_a_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "chat.db").write_bytes(b"")
    os.chmod(data / "chat.db", 0o644)
    with caplog.at_level(logging.WARNING):
        secure_storage(settings_for_tests(data_dir=data, log_dir=tmp_path / "logs"))
    assert (mode(data), mode(data / "chat.db"), mode(data / "files"), mode(tmp_path / "logs")) == (
        0o700, 0o600, 0o700, 0o700)
    assert f"{data} was readable by other users (mode 755); now owner-only (700)" in caplog.text
    assert "chat.db was readable by other users (mode 644)" in caplog.text


def test_a_shared_folder_is_not_tightened_but_our_log_files_in_it_are_owner_only(tmp_path: Path) -> None:
    shared = tmp_path / "var-log"
    shared.mkdir(mode=0o755)
    log_file = shared / "vllm.log"
    log_file.write_text("old launch\n")
    os.chmod(log_file, 0o644)
    rotate(log_file, keep=3)
    os.close(open_private(log_file))
    assert mode(shared) == 0o755  # someone else's folder (CHAT_LOG_FILE=/var/log/...): left as it is
    assert mode(log_file) == 0o600
    assert mode(shared / "vllm.log.1") == 0o600  # the earlier launch's log, rotated: ours, so owner-only too


def test_secret_files_are_created_0600_in_a_0700_folder(tmp_path: Path) -> None:
    value, created = read_or_create(tmp_path / "data" / "auth_secret", 16)
    assert created and value
    assert (mode(tmp_path / "data"), mode(tmp_path / "data" / "auth_secret")) == (0o700, 0o600)


def test_sqlite_database_and_its_journal_and_wal_files_are_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    url = database_url(data)
    database = data / "chat.db"
    assert url.endswith(str(database)) and mode(data) == 0o700 and mode(database) == 0o600
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        connection.execute("BEGIN")
        connection.execute("CREATE TABLE t (x TEXT)")
        connection.execute("INSERT INTO t VALUES ('a conversation')")
        journal = data / "chat.db-journal"
        assert journal.exists() and mode(journal) == 0o600  # a rollback journal, while the write is open
        connection.execute("COMMIT")
        assert connection.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
        connection.execute("INSERT INTO t VALUES ('another')")
        assert {p.name: mode(p) for p in data.glob("chat.db*")} == {
            "chat.db": 0o600, "chat.db-wal": 0o600, "chat.db-shm": 0o600}
    finally:
        connection.close()
