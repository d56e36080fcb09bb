"""Stored passwords: plain text, or an argon2 / bcrypt hash, checked by the libraries that made them.

An operator may put a hash in CHAT_USERS or CHAT_ADMIN_PASSWORD so that the environment and the process
list never show a password. The formats are the libraries' own strings:
argon2 (`argon2-cffi`: `$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>`, also argon2i/argon2d) and
bcrypt (`$2b$12$<53 characters>`, also `$2a$`/`$2y$`). Anything else is a plain-text password.
"""

from __future__ import annotations

import hashlib
import hmac
import re

import bcrypt
from argon2 import PasswordHasher, extract_parameters
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

ARGON2_PREFIX = re.compile(r"^\$argon2(id|i|d)\$")
BCRYPT_HASH = re.compile(r"^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$")
_ARGON2 = PasswordHasher()


def kind(stored: str) -> str:
    """`argon2`, `bcrypt` or `plain`."""
    if ARGON2_PREFIX.match(stored):
        return "argon2"
    if stored.startswith(("$2a$", "$2b$", "$2y$")):
        return "bcrypt"
    return "plain"


def problem(stored: str) -> str | None:
    """Why a stored value that looks like a hash cannot be one (None when usable), so a pasted hash that
    lost a character is refused at start instead of locking its user out for good."""
    if kind(stored) == "argon2":
        try:
            extract_parameters(stored)
        except InvalidHashError:
            return "looks like an argon2 hash but is malformed (expected $argon2id$v=19$m=...,t=...,p=...$salt$hash)"
    elif kind(stored) == "bcrypt" and not BCRYPT_HASH.match(stored):
        return "looks like a bcrypt hash but is malformed (expected $2b$<cost>$ followed by 53 characters)"
    return None


def verify(stored: str, given: str) -> bool:
    """True when `given` is the password `stored` stands for; compares in constant time for plain text."""
    match kind(stored):
        case "argon2":
            try:
                return _ARGON2.verify(stored, given)
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                return False
        case "bcrypt":
            try:
                return bcrypt.checkpw(given.encode(), stored.encode())
            except ValueError:  # bcrypt refuses passwords over 72 bytes: no match
                return False
        case _:
            return hmac.compare_digest(stored.encode(), given.encode())


def fingerprint(name: str, stored: str, key: str) -> str:
    """A short keyed digest of a user's stored credential: it goes into the login token so that a
    changed password ends the sessions begun with the old one. Keyed with the token-signing secret, it
    tells nothing about the password to whoever reads the (signed, not encrypted) token."""
    message = f"{name}\0{stored}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()[:24]
