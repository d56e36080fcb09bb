"""Login accounts: generated admin password, extra users, strict CHAT_USERS, hashes, session judgement."""

from __future__ import annotations

import io
import stat
from pathlib import Path

import bcrypt
import pytest
from argon2 import PasswordHasher
from pydantic import SecretStr, ValidationError

from chainlit_app import passwords
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
    settings = Settings(data_dir=tmp_path, admin_password=SecretStr("adm"), users="alice:pw1,bob:pw2:admin")
    users = UserDirectory(settings)
    admin = users.check("admin", "adm")
    assert admin is not None and admin.role == ADMIN
    alice = users.check("alice", "pw1")
    assert alice is not None and alice.role == "user"
    bob = users.check("bob", "pw2")
    assert bob is not None and bob.role == "admin"
    assert users.check("alice", "wrong") is None
    assert users.check("nobody", "pw1") is None


def test_hashed_passwords_argon2_and_bcrypt(tmp_path: Path) -> None:
    """An argon2 hash carries commas of its own: it must not split the CHAT_USERS list."""
    argon = PasswordHasher().hash("alice-secret")
    crypt = bcrypt.hashpw(b"bob-secret", bcrypt.gensalt(4)).decode()
    admin_hash = bcrypt.hashpw(b"admin-secret", bcrypt.gensalt(4)).decode()
    settings = Settings(data_dir=tmp_path, admin_password=SecretStr(admin_hash),
                        users=f"alice:{argon}:admin,bob:{crypt},carol:plain:user")
    users = UserDirectory(settings)
    assert sorted(users.accounts) == ["admin", "alice", "bob", "carol"]
    assert users.check("alice", "alice-secret") is not None and users.check("alice", argon) is None
    assert users.check("bob", "bob-secret") is not None and users.check("bob", "x") is None
    assert users.check("admin", "admin-secret") is not None
    assert users.check("carol", "plain") is not None
    assert [passwords.kind(v) for v in (argon, crypt, "plain")] == ["argon2", "bcrypt", "plain"]
    assert "alice-secret" not in repr(users.accounts["alice"]) and argon not in repr(users.accounts["alice"])


@pytest.mark.parametrize(("entry", "message"), [
    ("justaname", "entry 1 has no ':'"),
    ("alice:S3cr3t,bob:S3cr3t:2:admin", "entry 2 ('bob') has 3 ':'"),
    ("alice:S3cr3t:superuser", "unknown role 'superuser'"),
    ("alice::user", "the password is empty"),
    (":S3cr3t:user", "the name is empty"),
    ("alice:S3cr3t,alice:S3cr3t2", "names 'alice' a second time"),
    ("admin:S3cr3t:user", "names the admin user 'admin'"),
    ("alice:$2b$12$tooshortS3cr3t", "malformed"),
    ("alice:$argon2id$v=19$S3cr3t", "malformed"),
])
def test_malformed_users_are_refused_at_start_without_their_password(entry: str, message: str) -> None:
    with pytest.raises(ValueError, match="CHAT_USERS"):
        parse_users(entry, "admin")
    with pytest.raises(ValidationError) as refused:
        Settings(users=entry)
    assert message in str(refused.value)
    assert "S3cr3t" not in str(refused.value), "a refused entry's password is not printed"


def test_a_malformed_admin_hash_is_refused() -> None:
    with pytest.raises(ValidationError, match="CHAT_ADMIN_PASSWORD looks like a bcrypt hash"):
        Settings(admin_password=SecretStr("$2b$12$cut"))


def test_sessions_end_when_the_user_or_password_goes(tmp_path: Path) -> None:
    before = UserDirectory(Settings(data_dir=tmp_path, admin_password=SecretStr("one"), users="alice:pw"), "key")
    admin_print, alice_print = before.fingerprint("admin"), before.fingerprint("alice")
    same = UserDirectory(Settings(data_dir=tmp_path, admin_password=SecretStr("one"), users="alice:pw"), "key")
    assert same.session_problem("admin", admin_print) is None, "a restart with the same password keeps sessions"
    after = UserDirectory(Settings(data_dir=tmp_path, admin_password=SecretStr("two")), "key")
    assert "changed" in (after.session_problem("admin", admin_print) or "")
    assert "not a configured user" in (after.session_problem("alice", alice_print) or "")
    assert after.session_problem("admin", None) is not None, "tokens without a fingerprint are refused"
    assert "one" not in admin_print and len(admin_print) == 24


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_generated_password_is_shown_on_a_terminal_only(tmp_path: Path) -> None:
    from chainlit_app.auth import announce_login

    settings = Settings(data_dir=tmp_path, admin_password=None)
    users = UserDirectory(settings)
    password = users.accounts["admin"].password
    piped, terminal = io.StringIO(), _Terminal()
    announce_login(users, settings, "http://x", out=piped)
    announce_login(users, settings, "http://x", out=terminal)
    assert password not in piped.getvalue() and str(users.password_file) in piped.getvalue()
    assert password in terminal.getvalue()
