"""Who may log in and with which role; pure Python so it is testable without Chainlit.

The directory is also the judge of a session: a login token names its user and carries a fingerprint
of that user's stored password, and the token is good only while the user is still configured with the
same password (see `session_problem`), so removing a user, changing a password or a role takes effect
on the next request, not when the token expires.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chainlit_app import passwords
from chainlit_app.secrets_store import read_or_create

if TYPE_CHECKING:
    from chainlit_app.settings import Settings

ADMIN = "admin"
USER = "user"
ROLES = (USER, ADMIN)
FORMAT = "name:password[:role] entries separated by commas (role user or admin)"
# Entries are comma separated, but an argon2 hash carries commas of its own ("m=65536,t=3,p=4$..."):
# a comma followed by an argon2 parameter does not start a new entry.
_ENTRY_SEPARATOR = re.compile(r",(?![tp]=\d+[,$])")


@dataclass(frozen=True)
class Account:
    name: str
    password: str = field(repr=False)  # plain text or a hash (see passwords.py); never in a repr or log
    role: str


def _parse_entry(item: str, number: int) -> Account:
    """One `name:password[:role]`; errors name the entry by number and name, never by its password."""
    parts = item.split(":")
    name = parts[0].strip()
    where = f"CHAT_USERS entry {number}" + (f" ({name!r})" if name and len(parts) > 1 else "")
    if len(parts) < 2:
        raise ValueError(f"{where} has no ':'; the format is {FORMAT} (a password may not contain ',' or ':')")
    if len(parts) > 3:
        raise ValueError(f"{where} has {len(parts) - 1} ':'; the format is {FORMAT}. A password may not contain "
                         "':' or ','; give a bcrypt or argon2 hash of it instead")
    password = parts[1]
    role = parts[2].strip() if len(parts) == 3 else USER
    if not name or any(ch.isspace() for ch in name):
        raise ValueError(f"{where}: the name is empty or has spaces; the format is {FORMAT}")
    if not password:
        raise ValueError(f"{where}: the password is empty; the format is {FORMAT}")
    if role not in ROLES:
        raise ValueError(f"{where}: unknown role {role!r}; use one of {', '.join(ROLES)}")
    if (bad_hash := passwords.problem(password)) is not None:
        raise ValueError(f"{where}: the password {bad_hash}")
    return Account(name, password, role)


def parse_users(text: str, admin_user: str | None = None) -> list[Account]:
    """`alice:secret:user,bob:$2b$12$...:admin` -> accounts; a missing role means `user`.

    Refused with a message that says what to fix: extra ':' (the old parser took them into the password
    silently), unknown roles, empty names or passwords, malformed hashes, a name given twice, and the
    admin's own name (the admin's password is CHAT_ADMIN_PASSWORD)."""
    accounts: dict[str, Account] = {}
    items = (part.strip() for part in _ENTRY_SEPARATOR.split(text))
    for number, item in enumerate(filter(None, items), start=1):
        account = _parse_entry(item, number)
        if account.name in accounts:
            raise ValueError(f"CHAT_USERS entry {number} names {account.name!r} a second time; give each user once")
        if account.name == admin_user:
            raise ValueError(f"CHAT_USERS entry {number} names the admin user {admin_user!r}; set the admin's "
                             "password with CHAT_ADMIN_PASSWORD, or give this user another name")
        accounts[account.name] = account
    return list(accounts.values())


class UserDirectory:
    """The admin (password from CHAT_ADMIN_PASSWORD or generated once) plus CHAT_USERS.

    `token_key` keys the password fingerprints put in login tokens; the app passes its token-signing
    secret, which survives restarts, so tokens survive a restart unless the user's password changed."""

    def __init__(self, settings: Settings, token_key: str = ""):
        self.password_file = settings.storage.data_dir / "admin_password"
        self.generated = False
        if settings.auth.admin_password is not None and settings.auth.admin_password.get_secret_value():
            admin_password = settings.auth.admin_password.get_secret_value()
        else:
            admin_password, self.generated = read_or_create(self.password_file, 12)
        self.admin_user = settings.auth.admin_user
        self.accounts = {a.name: a for a in parse_users(settings.auth.users, self.admin_user)}
        self.accounts[self.admin_user] = Account(self.admin_user, admin_password, ADMIN)
        self._token_key = token_key or secrets.token_hex(32)

    def check(self, name: str, password: str) -> Account | None:
        """The account when the password matches (hashes are checked by their library)."""
        account = self.accounts.get(name)
        if account is not None and passwords.verify(account.password, password):
            return account
        return None

    def role_of(self, name: str) -> str | None:
        """The user's role now (None: not a user any more)."""
        account = self.accounts.get(name)
        return account.role if account is not None else None

    def fingerprint(self, name: str) -> str:
        """The password fingerprint a token of `name` must carry (see passwords.fingerprint)."""
        return passwords.fingerprint(name, self.accounts[name].password, self._token_key)

    def session_problem(self, name: str, fingerprint: object) -> str | None:
        """Why a token of `name` that carries `fingerprint` is no longer good; None when it is."""
        if name not in self.accounts:
            return f"{name!r} is not a configured user any more"
        if not isinstance(fingerprint, str) or not secrets.compare_digest(fingerprint, self.fingerprint(name)):
            return f"the password of {name!r} changed since this session began (or the token predates the check)"
        return None
