"""Who may log in and with which role; pure Python so it is testable without Chainlit."""

from __future__ import annotations

import hmac
import logging
import time
from collections import defaultdict
from dataclasses import dataclass

from chainlit_app.secrets_store import read_or_create
from chainlit_app.settings import Settings

log = logging.getLogger(__name__)

ADMIN = "admin"
USER = "user"


@dataclass(frozen=True)
class Account:
    name: str
    password: str
    role: str


def parse_users(text: str) -> list[Account]:
    """`alice:secret:user,bob:other:admin` -> accounts; a missing role means `user`."""
    accounts = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, rest = item.partition(":")
        password, _, role = rest.rpartition(":") if rest.count(":") else (rest, "", USER)
        if not name or not password:
            raise ValueError(f"CHAT_USERS entry {name or item!r} needs name:password[:role]")
        accounts.append(Account(name, password, role or USER))
    return accounts


class UserDirectory:
    """The admin (password from CHAT_ADMIN_PASSWORD or generated once) plus CHAT_USERS."""

    def __init__(self, settings: Settings):
        self.password_file = settings.storage.data_dir / "admin_password"
        self.generated = False
        if settings.auth.admin_password is not None and settings.auth.admin_password.get_secret_value():
            admin_password = settings.auth.admin_password.get_secret_value()
        else:
            admin_password, self.generated = read_or_create(self.password_file, 12)
        self.accounts = {a.name: a for a in parse_users(settings.auth.users)}
        self.accounts[settings.auth.admin_user] = Account(settings.auth.admin_user, admin_password, ADMIN)
        self._failures: dict[str, list[float]] = defaultdict(list)

    def check(self, name: str, password: str) -> Account | None:
        """The account when the password matches; failed logins are logged and rate-limited."""
        now = time.monotonic()
        recent = [t for t in self._failures[name] if now - t < 60]
        self._failures[name] = recent
        if len(recent) >= 5:
            log.warning("login refused for %r: too many failures in the last minute", name)
            return None
        account = self.accounts.get(name)
        if account is not None and hmac.compare_digest(account.password.encode(), password.encode()):
            self._failures.pop(name, None)
            return account
        recent.append(now)
        log.warning("login failed for %r", name)
        return None
