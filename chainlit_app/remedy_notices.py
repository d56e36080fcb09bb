"""Tell the chat what the automatic mode (CHAT_AUTO_REMEDY=safe) did: every open session gets a Console
message at once, and a session that opens later finds the latest ones in its welcome message. Admins read the
change and its evidence; everyone else only that the server was restarted with corrected settings."""

from __future__ import annotations

import logging

from chainlit.context import init_ws_context
from chainlit.session import WebsocketSession, ws_sessions_id

from chainlit_app.auth import is_admin
from chainlit_app.diagnostics.redact import redact
from chainlit_app.i18n import localize, t
from chainlit_app.notices import AUTO_FIX
from chainlit_app.notices import notice as send_notice
from chainlit_app.remedy_desk import Notice
from chainlit_app.runtime import Runtime
from chainlit_app.session_language import apply_language

log = logging.getLogger(__name__)


def notice_text(runtime: Runtime, notice: Notice, admin: bool) -> str:
    """In the current (the session's) language; redacted after rendering, so no language can carry a key."""
    return redact(str(localize(notice.admin_text)), runtime.monitor.secrets()) if admin else str(
        localize(notice.user_text))


def welcome_lines(runtime: Runtime, admin: bool) -> list[str]:
    """The notices of this run of the app, newest last, for a session that was not open when they were sent."""
    return [t("remedy_notice.note", text=notice_text(runtime, n, admin)) for n in runtime.remedies.notices]


def tell_open_sessions(runtime: Runtime) -> None:
    """Send each notice of the remedy desk to every session connected now."""

    async def broadcast(notice: Notice) -> None:
        for session in list(ws_sessions_id.values()):
            if not isinstance(session, WebsocketSession):
                continue
            try:
                init_ws_context(session)
                apply_language(runtime)  # the context is the session's now
                text = notice_text(runtime, notice, is_admin(session.user))
                await send_notice(text, AUTO_FIX, role="alert" if notice.state == "failed" else "status",
                                  attributes={"state": notice.state})
            except Exception:  # a session closing meanwhile: the others are still told
                log.warning("could not tell session %s about an automatic fix", session.id, exc_info=True)

    runtime.remedies.add_notice_listener(broadcast)
