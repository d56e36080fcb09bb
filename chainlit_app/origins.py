"""Which web origins may act with a user's login: the app's own, plus CHAT_ALLOWED_ORIGINS.

Chainlit ships CORS open to every origin with credentials, so any page a logged-in user visited could
read their history through the browser. The policy here feeds three gates (see web.install_origin_checks):
CORS (only the listed origins get CORS headers; the app's own pages need none), Socket.IO (its
origin check) and `OriginGuard`, which refuses state-changing requests (POST, PUT, PATCH, DELETE) whose
Origin header is foreign, since CORS alone does not stop a cross-site form post from being sent.
A request without an Origin header is not a browser acting for a page elsewhere and passes.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class OriginPolicy:
    """The app's own origin (the request's Host) and the configured ones."""

    def __init__(self, allowed: list[str]):
        self.allowed = [origin.rstrip("/").lower() for origin in allowed]

    def allows(self, origin: str | None, host: str | None) -> bool:
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if origin in self.allowed:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and bool(host) and parts.netloc == (host or "").lower()

    def refusal(self, origin: str, host: str | None) -> str:
        return (f"Requests from {origin} are refused: it is not this app's own origin (host {host}) nor listed in "
                "CHAT_ALLOWED_ORIGINS. If the app is served at that address (e.g. behind a proxy that rewrites the "
                "Host header), add it to CHAT_ALLOWED_ORIGINS.")


class OriginGuard:
    """ASGI middleware: a state-changing HTTP request from a foreign origin gets 403 and a reason."""

    def __init__(self, app: ASGIApp, policy: OriginPolicy):
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in STATE_CHANGING:
            headers = Headers(scope=scope)
            origin, host = headers.get("origin"), headers.get("host")
            if not self.policy.allows(origin, host):
                client = scope.get("client") or ("unknown", 0)
                log.warning("refused %s %s from origin %r (client %s)", scope["method"], scope["path"], origin,
                            client[0])
                response = JSONResponse({"detail": self.policy.refusal(str(origin), host)}, status_code=403)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
