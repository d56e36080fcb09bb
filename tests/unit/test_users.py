"""Login accounts: generated admin password, extra users, rate limit."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from chainlit_app.settings import Settings
from chainlit_app.users import ADMIN, UserDirectory, parse_users


def test_admin_password_is_generated_once_and_owner_only(tmp_path: Path) -> None:
    users = UserDirectory(Settings(data_dir=tmp_path, admin_password=None))
    assert users.generated
    stored = users.password_file.read_text().strip()
    assert len(stored) >= 12
    assert stat.S_IMODE(users.password_file.stat().st_mode) == 0o600
    again = UserDirectory(Settings(data_dir=tmp_path, admin_password=None))
    assert not again.generated
    assert again.check("admin", stored) is not None


def test_configured_users_and_roles(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, admin_password=SecretStr("adm"), users="alice:pw1,bob:pw:2:admin")
    users = UserDirectory(settings)
    admin = users.check("admin", "adm")
    assert admin is not None and admin.role == ADMIN
    alice = users.check("alice", "pw1")
    assert alice is not None and alice.role == "user"
    bob = users.check("bob", "pw:2")
    assert bob is not None and bob.role == "admin"
    assert users.check("alice", "wrong") is None
    assert users.check("nobody", "pw1") is None


def test_repeated_failures_lock_the_account_for_a_minute(tmp_path: Path) -> None:
    users = UserDirectory(Settings(data_dir=tmp_path, admin_password=SecretStr("right")))
    for _ in range(5):
        assert users.check("admin", "wrong") is None
    assert users.check("admin", "right") is None


def test_malformed_user_entry_is_refused() -> None:
    with pytest.raises(ValueError, match="name:password"):
        parse_users("justaname")
