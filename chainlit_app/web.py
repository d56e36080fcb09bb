"""HTTP routes beside Chainlit's own (the public /healthz and /api/input-limits), and the origin checks around
all routes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chainlit.config import config as chainlit_config
from chainlit.server import app, sio
from fastapi import APIRouter, Request
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute

from chainlit_app import i18n
from chainlit_app.cleaning import MAX_MESSAGE_BYTES
from chainlit_app.origins import OriginGuard, OriginPolicy
from chainlit_app.runtime import Runtime


def install_routes(router: APIRouter) -> None:
    """Put our routes in front: Chainlit's catch-all `/{full_path:path}` would shadow routes added later."""
    routes: list[BaseRoute] = app.router.routes
    before = len(routes)
    app.include_router(router)
    added = routes[before:]
    del routes[before:]
    routes[:0] = added


def health_router(runtime_getter: Callable[[], Runtime]) -> APIRouter:
    router = APIRouter()

    @router.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"app": "ok", "engine": runtime_getter().shown_state()}

    return router


INPUT_LIMITS_PATH = "/api/input-limits"
# Room left in the socket's frame for the JSON around the text: ids, the user's name, the time, the page's
# URL (Chainlit sends it as metadata.location) and the Socket.IO envelope; a few hundred bytes usually.
FRAME_RESERVE_BYTES = 16 * 1024


def input_limits(language: i18n.Language) -> dict[str, Any]:
    """What public/input_guard.js needs to stop a message the transport would refuse: the byte limit for
    the text (cleaning.MAX_MESSAGE_BYTES less the JSON around it) and the sentence to show, in `language`,
    with `{size}` left for the script to fill (the catalogue stays the only place of the words)."""
    limit = MAX_MESSAGE_BYTES - FRAME_RESERVE_BYTES
    message = i18n.t("chat.input_too_large", language, size="{size}", limit=f"{limit:,}")
    return {"frame_bytes": MAX_MESSAGE_BYTES, "limit_bytes": limit, "language": language, "message": message}


def input_limits_router(language_setting: Callable[[], str]) -> APIRouter:
    """Public like /healthz: the page loads the guard before login, and the answer holds nothing private."""
    router = APIRouter()

    @router.get(INPUT_LIMITS_PATH)
    async def limits(request: Request, lang: str | None = None) -> dict[str, Any]:
        """In `?lang=`, else CHAT_LANGUAGE, else the browser's Accept-Language, as the panel API."""
        language = i18n.for_request(lang, language_setting(), request.headers.get("accept-language"))
        return input_limits(language)

    return router


def install_origin_checks(policy: OriginPolicy) -> None:
    """Replace Chainlit's CORS (every origin, with credentials) by the policy's list, give Socket.IO the
    same judge, and put OriginGuard in front of every route. Called while app.py is imported, before
    the server builds its middleware stack."""
    chainlit_config.project.allow_origins = policy.allowed
    app.user_middleware = [
        Middleware(CORSMiddleware, allow_origins=policy.allowed, allow_credentials=True, allow_methods=["*"],
                   allow_headers=["*"]) if entry.cls is CORSMiddleware else entry
        for entry in app.user_middleware
    ]
    app.add_middleware(OriginGuard, policy=policy)

    def socket_origin_allowed(origin: str | None, environ: dict[str, Any]) -> bool:
        return policy.allows(origin, environ.get("HTTP_HOST"))

    sio.eio.cors_allowed_origins = socket_origin_allowed
