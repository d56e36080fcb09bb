"""Tell the chat what the automatic mode (CHAT_AUTO_REMEDY=safe) did: every open session gets a Console
message at once, and a session that opens later finds the latest ones in its welcome message. Admins read the
change and its evidence; everyone else only that the server was restarted with corrected settings."""

from __future__ import annotations

import logging

import chainlit as cl
from chainlit.context import init_ws_context
from chainlit.session import WebsocketSession, ws_sessions_id

from chainlit_app.auth import is_admin
from chainlit_app.diagnostics.redact import redact
from chainlit_app.remedy_desk import Notice
from chainlit_app.runtime import Runtime

log = logging.getLogger(__name__)
AUTHOR = "Console"  # chat.SYSTEM_AUTHOR (not imported: chat.py imports this module)


def notice_text(runtime: Runtime, notice: Notice, admin: bool) -> str:
    return redact(notice.admin_text, runtime.monitor.secrets()) if admin else notice.user_text


def welcome_lines(runtime: Runtime, admin: bool) -> list[str]:
    """The notices of this run of the app, newest last, for a session that was not open when they were sent."""
    return [f"**Note:** {notice_text(runtime, n, admin)}" for n in runtime.remedies.notices]


def tell_open_sessions(runtime: Runtime) -> None:
    """Send each notice of the remedy desk to every session connected now."""

    async def broadcast(notice: Notice) -> None:
        for session in list(ws_sessions_id.values()):
            if not isinstance(session, WebsocketSession):
                continue
            try:
                init_ws_context(session)
                text = notice_text(runtime, notice, is_admin(session.user))
                await cl.Message(content=text, author=AUTHOR).send()
            except Exception:  # a session closing meanwhile: the others are still told
                log.warning("could not tell session %s about an automatic fix", session.id, exc_info=True)

    runtime.remedies.add_notice_listener(broadcast)
