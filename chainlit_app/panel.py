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
from fastapi import APIRouter, Depends, HTTPException, Request

from chainlit_app import i18n
from chainlit_app.auth import is_admin
from chainlit_app.diagnostics.redact import redact_tree
from chainlit_app.notices import OPEN_DIAGNOSTICS, OPEN_DIAGNOSTICS_ACTION, action_id
from chainlit_app.runtime import Runtime

PANEL_ELEMENT = "Diagnostics"
_ELEMENT_KEY = "diagnostics_panel_element"
API_PATH = "/api/diagnostics"
COMMAND = "Diagnostics"  # the English id of the composer command (is_command knows every language's)
LABEL_PREFIX = "panel.ui."


def panel_labels(language: i18n.Language | None = None) -> dict[str, str]:
    """The panel's own words (titles, states, buttons) in one language: the JSX element holds no text of its
    own, so the one catalogue has every text. Keys without the prefix; placeholders left for the panel."""
    english = i18n.catalogue(i18n.DEFAULT)
    texts = i18n.catalogue(language or i18n.current())
    return {key[len(LABEL_PREFIX):]: texts.get(key) or text for key, text in english.items()
            if key.startswith(LABEL_PREFIX)}


async def diagnostics_payload(runtime: Runtime) -> dict[str, Any]:
    """The contract: engine state, findings, log tail, metrics. No key or secret is in it. The engine's
    memory is summed over its process group in a thread: finding the group walks every process of the
    host (about 70 ms at 5,000), once per poll of every open panel."""
    runtime.monitor.panel_viewed()
    # The one slow read first: the state, the findings and the probe below are read with no await between
    # them, so a probe that fails meanwhile cannot show an open `degraded` finding beside a `ready` state.
    process = runtime.engine.process
    rss = await asyncio.to_thread(process.rss_bytes) if process is not None and process.alive() else None
    status = runtime.status.to_json()
    monitored = runtime.monitor.snapshot()
    status["mode"] = runtime.settings.engine.mode
    status["state"] = runtime.shown_state()  # `degraded` while /health answers and a completion does not
    status["healthy"] = runtime.monitor.trusted_health()
    status["degraded"] = runtime.monitor.degraded
    status["version"] = runtime.monitor.version
    status["process_control"] = runtime.engine.process_control
    if rss is not None:
        status["rss_mib"] = round(rss / 2**20)
    status["app_rss_mib"] = round(psutil.Process(os.getpid()).memory_info().rss / 2**20)
    status["now"] = time.time()
    for text in ("progress", "notice", "error"):  # the app's own texts in the reader's language
        status[text] = i18n.localize(status.get(text))
    # The status carries errors and progress text that may name a URL with its password, or the key.
    status = redact_tree(status, runtime.monitor.secrets())
    launches = runtime.engine.launches
    # Remedies (issue 13): per finding what would fix it and how the last try went; the overrides in force.
    await runtime.remedies.annotate(monitored["findings"], runtime.monitor.secrets())
    remedies = redact_tree({"overrides": runtime.remedies.overrides_json(), "remedies": runtime.remedies.state_json()},
                           runtime.monitor.secrets())
    return {"engine": status, "streaming": runtime.pace.snapshot(), **monitored, **remedies,
            "launches": launches.summaries() if launches is not None else []}


async def admin_only(user: Any = Depends(get_current_user)) -> Any:  # noqa: B008
    """The admin check of the remedy routes, as the panel's (a dependency, so it answers before a body is read)."""
    if not is_admin(user):
        raise HTTPException(status_code=403, detail=i18n.t("panel.admins_only"))
    return user


def launch_record(runtime: Runtime, record_id: str) -> dict[str, Any]:
    """One launch's whole record (command line, settings, last lines, findings), redacted once more."""
    launches = runtime.engine.launches
    record = launches.get(record_id) if launches is not None else None
    if record is None:
        raise HTTPException(status_code=404, detail=i18n.t("panel.no_launch_record"))
    return dict(redact_tree(record, runtime.monitor.secrets()))


def diagnostics_router(runtime_getter: Callable[[], Runtime]) -> APIRouter:
    router = APIRouter()

    @router.get(API_PATH)
    async def diagnostics(request: Request, lang: str | None = None,
                          user: Any = Depends(get_current_user)) -> dict[str, Any]:  # noqa: B008
        """Kind ids stay stable; titles, explanations, fixes and hints come in `?lang=` (en, zh-CN), else in
        CHAT_LANGUAGE, else in the browser's language (Accept-Language), so the panel follows the chat."""
        runtime = runtime_getter()
        language = i18n.for_request(lang, runtime.settings.chat.language, request.headers.get("accept-language"))
        if not is_admin(user):
            raise HTTPException(status_code=403, detail=i18n.t("panel.admins_only", language))
        with i18n.use_language(language):
            payload = await diagnostics_payload(runtime)
        return {**payload, "language": language, "labels": panel_labels(language)}

    @router.get(API_PATH + "/launches/{record_id}")
    async def launch(record_id: str, user: Any = Depends(get_current_user)) -> dict[str, Any]:  # noqa: B008
        if not is_admin(user):
            raise HTTPException(status_code=403, detail=i18n.t("panel.admins_only"))
        return launch_record(runtime_getter(), record_id)

    return router


async def offer_panel() -> None:
    """Admins get a /Diagnostics command in the composer (the button is in the welcome message)."""
    await cl.context.emitter.set_commands(
        [{"id": i18n.t("panel.action"), "icon": "activity", "description": i18n.t("panel.command"), "button": True,
          "persistent": False, "selected": False}]
    )


def is_command(command: str | None) -> bool:
    """The composer's command, whose id Chainlit shows as its label: "Diagnostics", or "诊断" in Chinese."""
    return command is not None and command in {i18n.t("panel.action", language) for language in i18n.LANGUAGES}


def open_action() -> cl.Action:
    return cl.Action(name=OPEN_DIAGNOSTICS_ACTION, payload={}, label=i18n.t("panel.action"), icon="activity",
                     tooltip=i18n.t("panel.action_tooltip"), id=action_id(OPEN_DIAGNOSTICS))


async def _show() -> None:
    """Chainlit titles a side element's bar with the element's name (the JSX file's, "Diagnostics": the English
    title itself, so a page that gets the element before the title, as a loaded machine can for seconds, shows a
    word, not a file name), so the translated title is set after the element. One element per session, sent
    again with its id: the page updates its props instead of mounting a new panel, which would drop what the
    admin had open (a fix's confirmation, a launch's details)."""
    element = cl.user_session.get(_ELEMENT_KEY)
    if not isinstance(element, cl.CustomElement):
        element = cl.CustomElement(name=PANEL_ELEMENT, display="side", props={})
        cl.user_session.set(_ELEMENT_KEY, element)
    element.props = {"api": API_PATH, "interval": 1000, "labels": panel_labels()}
    await cl.ElementSidebar.set_elements([element], key="diagnostics")
    await cl.ElementSidebar.set_title(i18n.t("panel.title"))


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
