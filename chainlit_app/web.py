"""HTTP routes beside Chainlit's own (the public /healthz), and the origin checks around all routes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chainlit.config import config as chainlit_config
from chainlit.server import app, sio
from fastapi import APIRouter
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute

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
