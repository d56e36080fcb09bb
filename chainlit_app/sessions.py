"""Every request and socket connection is checked against the live user directory, not just the token.

Chainlit trusts a login token until it expires and takes the role from the user row written at the
last login. Here its two token functions are wrapped (in `chainlit.auth` and `chainlit.server`, where
they are looked up at call time), so every path that reads a token goes through the checks: the HTTP
routes' `get_current_user` dependency (history, files, the diagnostics API), the socket's `connect`,
and /auth/jwt. A token is refused when its user is no longer configured, its password fingerprint
differs (the password changed), or it is older than CHAT_SESSION_HOURS; the role is taken from the
directory on every request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import chainlit.auth
import chainlit.server
import jwt as pyjwt
from chainlit.auth.jwt import decode_jwt as chainlit_decode_jwt
from chainlit.auth.jwt import get_jwt_secret
from chainlit.config import config as chainlit_config
from chainlit.user import User

from chainlit_app.users import UserDirectory

log = logging.getLogger(__name__)


def token_problem(users: UserDirectory, claims: dict[str, Any], lifetime: float, now: float) -> str | None:
    """Why a (correctly signed, unexpired) token's claims no longer make a session; None when they do."""
    name = str(claims.get("identifier", ""))
    metadata = claims.get("metadata") or {}
    if (problem := users.session_problem(name, metadata.get("pwv"))) is not None:
        return problem
    issued = claims.get("iat")
    if not isinstance(issued, int | float) or now - issued > lifetime:
        return f"the session of {name!r} is older than CHAT_SESSION_HOURS"
    return None


def install_session_checks(users: UserDirectory, lifetime: float, clock: Callable[[], float] = time.time) -> None:
    """Wrap Chainlit's token decoding and user authentication (once per process), and make new tokens
    and cookies last `lifetime` seconds."""
    chainlit_config.project.user_session_timeout = int(lifetime)
    original_authenticate: Callable[[str], Awaitable[Any]] = chainlit.auth.authenticate_user

    def checked_decode(token: str) -> User:
        claims = pyjwt.decode(token, get_jwt_secret() or "", algorithms=["HS256"])  # signature and expiry
        problem = token_problem(users, claims, lifetime, clock())
        if problem is not None:
            log.info("session refused: %s", problem)
            raise pyjwt.InvalidTokenError(problem)
        user = chainlit_decode_jwt(token)
        user.metadata = {**(user.metadata or {}), "role": users.role_of(user.identifier)}
        return user

    async def checked_authenticate(token: str = "") -> Any:
        user = await original_authenticate(token)  # decodes through checked_decode (module global)
        role = users.role_of(user.identifier)  # the data layer's row holds the role of the last login
        user.metadata = {**(user.metadata or {}), "role": role}
        return user

    chainlit.auth.decode_jwt = checked_decode
    chainlit.server.decode_jwt = checked_decode
    chainlit.auth.authenticate_user = checked_authenticate
