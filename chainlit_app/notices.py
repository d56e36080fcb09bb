"""The chat's own notices with the stable hooks scripts rely on (README, "Scripted UI tests").

Chainlit draws messages itself and lets no attribute onto them, so each notice is sent with an invisible
ChatNotice element (public/elements/ChatNotice.jsx) that puts `data-testid`, `data-kind`/`data-state` and
a role on the message it belongs to, and test ids on the message's own buttons. The element is not
stored with the thread: it carries no content, only these hooks for the live page.
"""

from __future__ import annotations

import uuid
from typing import Final, Literal

import chainlit as cl

NOTICE_ELEMENT: Final = "ChatNotice"
SYSTEM_AUTHOR: Final = "Console"

# The chat's test ids: a supported interface (README "Scripted UI tests"; tests/unit/test_test_ids.py).
ANSWER: Final = "chat-answer"
WELCOME: Final = "chat-welcome"
STARTUP: Final = "chat-startup"
DEMO_NOTICE: Final = "chat-demo-notice"
FAILURE: Final = "chat-failure"
RETRY: Final = "chat-retry"
RETRYING: Final = "chat-retrying"
INPUT_REFUSED: Final = "chat-input-refused"
ADMIN_ONLY: Final = "chat-admin-only"
OPEN_DIAGNOSTICS: Final = "chat-open-diagnostics"
AUTO_FIX: Final = "chat-auto-fix"
CHAT_TEST_IDS: Final = (ANSWER, WELCOME, STARTUP, DEMO_NOTICE, FAILURE, RETRY, RETRYING, INPUT_REFUSED, ADMIN_ONLY,
                        OPEN_DIAGNOSTICS, AUTO_FIX)

# The app's buttons, as Chainlit names actions: their callbacks (app.py) and the name a thread begun with
# one of them gets in the history (history.py).
OPEN_DIAGNOSTICS_ACTION: Final = "open_diagnostics"
RETRY_ACTION: Final = "retry_question"

Role = Literal["status", "alert", "note"]
# The element's content is its props, sent with it. Without a URL Chainlit writes an updatable element's
# content to a file in the session's folder at every send (a thread hop per write: two per answer, which a
# burst of questions waited for); this URL is never fetched (ChatNotice.jsx reads only the props).
_NO_FILE: Final = "data:application/json,{}"


def action_id(testid: str) -> str:
    """An action's id, which Chainlit renders as the button's id: unique, and telling what it is."""
    return f"{testid}-{uuid.uuid4().hex}"


async def mark(message: cl.Message, testid: str, role: Role | None = "status",
               attributes: dict[str, str] | None = None) -> cl.CustomElement:
    """Put the hooks on a message (sent before or after it; its buttons are found by the ids `action_id`
    made). Returns the element, for `remark`."""
    element = cl.CustomElement(name=NOTICE_ELEMENT, display="inline", url=_NO_FILE, props={
        "testid": testid, "role": role, "attributes": attributes or {}, "buttons": _buttons(message)})
    await element.send(for_id=message.id, persist=False)
    return element


async def remark(element: cl.CustomElement, message: cl.Message, role: Role | None = None,
                 attributes: dict[str, str] | None = None) -> None:
    """Add to a message's hooks: an answer is done (data-done), failed or was stopped. Sent after the
    message's last update, so that data-done means all of it is on the page. Not stored (no blob store)."""
    element.props = {**element.props, "role": role or element.props.get("role"),
                     "attributes": {**element.props.get("attributes", {}), **(attributes or {})},
                     "buttons": _buttons(message)}
    await element.send(for_id=message.id, persist=False)


def _buttons(message: cl.Message) -> dict[str, str]:
    return {a.id: a.id.rsplit("-", 1)[0] for a in message.actions if a.id.startswith("chat-")}


async def notice(text: str, testid: str, role: Role = "status", attributes: dict[str, str] | None = None,
                 actions: list[cl.Action] | None = None) -> cl.Message:
    """A message from the console itself (not the model), with its hooks."""
    message = cl.Message(content=text, author=SYSTEM_AUTHOR, actions=actions or [])
    await message.send()
    await mark(message, testid, role, attributes)
    return message
