"""HTTP routes beside Chainlit's own: the public /healthz (the diagnostics API joins later)."""

from __future__ import annotations

from collections.abc import Callable

from chainlit.server import app
from fastapi import APIRouter
from starlette.routing import BaseRoute

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
        return {"app": "ok", "engine": str(runtime_getter().status.state)}

    return router
