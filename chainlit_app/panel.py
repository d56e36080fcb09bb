"""The admin-only diagnostics side panel: its JSON API and the way to open it from the chat."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import Any

import chainlit as cl
import psutil
from chainlit.auth import get_current_user
from fastapi import APIRouter, Depends, HTTPException

from chainlit_app.auth import is_admin
from chainlit_app.diagnostics.redact import redact_tree
from chainlit_app.notices import OPEN_DIAGNOSTICS, action_id
from chainlit_app.runtime import Runtime

PANEL_ELEMENT = "DiagnosticsPanel"
API_PATH = "/api/diagnostics"
COMMAND = "Diagnostics"


async def diagnostics_payload(runtime: Runtime) -> dict[str, Any]:
    """The contract: engine state, findings, log tail, metrics. No key or secret is in it. The engine's
    memory is summed over its process group in a thread: finding the group walks every process of the
    host (about 70 ms at 5,000), once per poll of every open panel."""
    runtime.monitor.panel_viewed()
    status = runtime.status.to_json()
    status["mode"] = runtime.settings.engine.mode
    status["healthy"] = runtime.monitor.healthy
    status["version"] = runtime.monitor.version
    status["process_control"] = runtime.engine.process_control
    process = runtime.engine.process
    if process is not None and process.alive():
        status["rss_mib"] = round(await asyncio.to_thread(process.rss_bytes) / 2**20)
    status["app_rss_mib"] = round(psutil.Process(os.getpid()).memory_info().rss / 2**20)
    status["now"] = time.time()
    # The status carries errors and progress text that may name a URL with its password, or the key.
    status = redact_tree(status, runtime.monitor.secrets())
    return {"engine": status, "streaming": runtime.pace.snapshot(), **runtime.monitor.snapshot()}


def diagnostics_router(runtime_getter: Callable[[], Runtime]) -> APIRouter:
    router = APIRouter()

    @router.get(API_PATH)
    async def diagnostics(user: Any = Depends(get_current_user)) -> dict[str, Any]:  # noqa: B008
        if not is_admin(user):
            raise HTTPException(status_code=403, detail="diagnostics are for admins only")
        return await diagnostics_payload(runtime_getter())

    return router


async def offer_panel() -> None:
    """Admins get a /Diagnostics command in the composer (the button is in the welcome message)."""
    await cl.context.emitter.set_commands(
        [{"id": COMMAND, "icon": "activity", "description": "Open the diagnostics panel", "button": True,
          "persistent": False, "selected": False}]
    )


def open_action() -> cl.Action:
    return cl.Action(name="open_diagnostics", payload={}, label="Diagnostics", icon="activity",
                     tooltip="Engine state, findings, live log and metrics", id=action_id(OPEN_DIAGNOSTICS))


async def _show() -> None:
    await cl.ElementSidebar.set_title("Diagnostics")
    await cl.ElementSidebar.set_elements(
        [cl.CustomElement(name=PANEL_ELEMENT, props={"api": API_PATH, "interval": 1000}, display="side")],
        key="diagnostics",
    )


async def open_panel() -> None:
    """Show the panel in the side bar; the element polls the API itself, so closing it keeps it closed.

    With chat history on, a session's first interaction makes Chainlit create the thread and the browser
    switch to its URL, which drops a side bar opened at that moment; so the panel is shown once more a
    second later (once, not periodically).
    """
    first_interaction = not cl.user_session.get("interacted")
    cl.user_session.set("interacted", True)
    await _show()
    if first_interaction:
        await asyncio.sleep(1.0)
        await _show()
