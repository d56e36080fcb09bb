"""Which language a chat session speaks: one rule for the chat's hooks and for messages sent to sessions from
outside them (the automatic fixes' notices), so the two can never disagree."""

from __future__ import annotations

import chainlit as cl
from chainlit.context import ChainlitContextException

from chainlit_app.i18n import Language, choose, set_language
from chainlit_app.runtime import Runtime


def session_language(runtime: Runtime) -> Language:
    """The session's language: CHAT_LANGUAGE, else the browser's (Accept-Language); outside a session (a
    data-layer call from a request of its own), CHAT_LANGUAGE or English."""
    try:
        browser = getattr(cl.context.session, "language", None)
    except ChainlitContextException:
        browser = None
    return choose(runtime.settings.chat.language, browser)


def apply_language(runtime: Runtime) -> None:
    """Speak the current session's language from here on (a hook, or a context set with init_ws_context)."""
    set_language(session_language(runtime))
