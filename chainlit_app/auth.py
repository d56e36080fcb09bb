"""Chainlit login: the auth secret, the password callback and the role check."""

from __future__ import annotations

import logging
import os

import chainlit as cl

from chainlit_app.secrets_store import read_or_create
from chainlit_app.settings import Settings
from chainlit_app.users import ADMIN, UserDirectory

log = logging.getLogger(__name__)


def ensure_auth_secret(settings: Settings) -> None:
    """CHAINLIT_AUTH_SECRET from the environment, or generated once and kept in the data folder."""
    if os.environ.get("CHAINLIT_AUTH_SECRET"):
        return
    secret, _ = read_or_create(settings.storage.data_dir / "auth_secret", 48)
    os.environ["CHAINLIT_AUTH_SECRET"] = secret


def announce_login(users: UserDirectory, settings: Settings, url: str) -> None:
    """Print the generated admin password once, in the terminal only (never in a log file)."""
    if users.generated:
        print(
            f"\n  Chat console: {url}\n"
            f"  Log in as '{settings.auth.admin_user}' with the generated password stored in {users.password_file} "
            f"(shown once):\n    {users.accounts[settings.auth.admin_user].password}\n",
            flush=True,
        )
    else:
        print(f"\n  Chat console: {url} (admin user '{settings.auth.admin_user}')\n", flush=True)


def make_user(users: UserDirectory, name: str, password: str) -> cl.User | None:
    account = users.check(name, password)
    if account is None:
        return None
    return cl.User(identifier=account.name, metadata={"role": account.role, "provider": "credentials"})


def role_of(user: object) -> str:
    metadata = getattr(user, "metadata", None) or {}
    return str(metadata.get("role", "user"))


def is_admin(user: object) -> bool:
    return role_of(user) == ADMIN


def current_user_is_admin() -> bool:
    return is_admin(cl.user_session.get("user"))
