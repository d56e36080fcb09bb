"""Chainlit login: the auth secret, the throttled and logged login route, the password callback, roles.

`POST /login` is ours, in front of Chainlit's: it knows the client's address (Chainlit's password
callback gets only a name and a password), refuses a throttled (address, name) with 429 and when to
retry, and then hands the request to Chainlit's own login, whose callback (`make_user`) checks the
password, records the outcome with the address and logs every attempt.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import sys
from contextvars import ContextVar
from typing import TextIO

import chainlit as cl
import chainlit.server
from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.security import OAuth2PasswordRequestForm

from chainlit_app.i18n import Language, choose, t
from chainlit_app.secrets_store import read_or_create
from chainlit_app.settings import Settings
from chainlit_app.throttle import LoginThrottle
from chainlit_app.users import ADMIN, UserDirectory

log = logging.getLogger(__name__)
# The client address of the login being handled, for the password callback (set by login_router).
LOGIN_CLIENT: ContextVar[str] = ContextVar("login_client", default="unknown")


def ensure_auth_secret(settings: Settings) -> str:
    """CHAINLIT_AUTH_SECRET from the environment, or generated once and kept in the data folder."""
    if not os.environ.get("CHAINLIT_AUTH_SECRET"):
        secret, _ = read_or_create(settings.storage.data_dir / "auth_secret", 48)
        os.environ["CHAINLIT_AUTH_SECRET"] = secret
    return os.environ["CHAINLIT_AUTH_SECRET"]


def announce_login(users: UserDirectory, settings: Settings, url: str, out: TextIO | None = None) -> None:
    """Show a generated admin password once, and only on a terminal: when the output is a pipe or a file
    (a service's journal, a container log) it says which owner-only file holds the password instead."""
    out = out or sys.stdout
    admin = settings.auth.admin_user
    if not users.generated:
        print(f"\n  Chat console: {url} (admin user '{admin}')\n", file=out, flush=True)
    elif out.isatty():
        print(f"\n  Chat console: {url}\n  Log in as '{admin}' with the generated password stored in "
              f"{users.password_file} (shown once):\n    {users.accounts[admin].password}\n", file=out, flush=True)
    else:
        print(f"\n  Chat console: {url}\n  Log in as '{admin}' with the generated password in {users.password_file} "
              "(owner-only; not printed because this output is not a terminal)\n", file=out, flush=True)


def client_address(request: Request) -> str:
    """The peer's address (uvicorn has already applied X-Forwarded-For from trusted proxies, by default
    127.0.0.1 only, FORWARDED_ALLOW_IPS to change)."""
    return request.client.host if request.client else "unknown"


def _reader(request: Request, language: str) -> Language:
    return choose(language, request.headers.get("accept-language"))


def login_router(throttle: LoginThrottle, language: str = "auto") -> APIRouter:
    """The login route (throttled) and the refused token exchange; their refusals in CHAT_LANGUAGE, else in
    the browser's language."""
    router = APIRouter()

    @router.post("/login")
    async def login(request: Request, response: Response,
                    form: OAuth2PasswordRequestForm = Depends()) -> Response:  # noqa: B008
        address = client_address(request)
        wait = throttle.wait_left(address, form.username)
        if wait > 0:
            seconds = math.ceil(wait)
            log.warning("login throttled for %r from %s: %d s to wait", form.username, address, seconds)
            raise HTTPException(status_code=429, headers={"Retry-After": str(seconds)},
                                detail=t("auth.throttled", _reader(request, language), seconds=seconds))
        token = LOGIN_CLIENT.set(address)
        try:
            result: Response = await chainlit.server.login(request, response, form)
            return result
        finally:
            LOGIN_CLIENT.reset(token)

    @router.post("/auth/jwt")
    async def no_token_exchange(request: Request) -> None:
        """Chainlit's /auth/jwt trades any valid token for a fresh one, which would let a session outlive
        CHAT_SESSION_HOURS for ever; this app logs in with a name and password only."""
        raise HTTPException(status_code=403, detail=t("auth.no_token_exchange", _reader(request, language)))

    return router


async def make_user(users: UserDirectory, throttle: LoginThrottle, name: str, password: str) -> cl.User | None:
    """The password callback: check (hashes off the event loop), count the outcome, log it with the address."""
    address = LOGIN_CLIENT.get()
    account = await asyncio.to_thread(users.check, name, password)
    if account is None:
        wait = throttle.failed(address, name)
        log.warning("login failed for %r from %s%s", name, address, f" ({math.ceil(wait)} s backoff)" if wait else "")
        return None
    throttle.succeeded(address, name)
    log.info("login ok for %r (%s) from %s", account.name, account.role, address)
    metadata = {"role": account.role, "provider": "credentials", "pwv": users.fingerprint(account.name)}
    return cl.User(identifier=account.name, metadata=metadata)


def role_of(user: object) -> str:
    metadata = getattr(user, "metadata", None) or {}
    return str(metadata.get("role", "user"))


def is_admin(user: object) -> bool:
    return role_of(user) == ADMIN


def current_user_is_admin() -> bool:
    return is_admin(cl.user_session.get("user"))
