"""What a failed chat request means, in one short sentence a user can act on.

The kind comes from the same place as the panel's chat-side finding (`diagnostics.chat_observations`,
which reads the server's message with the log rules and then the app's one exception table), so the chat
and the panel never disagree about what went wrong.
"""

from __future__ import annotations

import openai

from chainlit_app.diagnostics.chat_observations import from_exception
from chainlit_app.diagnostics.taxonomy import Kind

_SENTENCES: dict[Kind, str] = {
    Kind.SLOW_OR_STALLED: "The model server did not answer in time.",
    Kind.CONNECTION: "The model server cannot be reached (it may have crashed or be restarting).",
    Kind.AUTH: "The model server refused the API key (401).",
    Kind.CHAT_TEMPLATE: "The model has no usable chat template, so it cannot chat (400).",
    Kind.ENGINE_ERROR: "The model server failed while answering.",
    Kind.OUT_OF_MEMORY: "The model server ran out of memory while answering.",
    Kind.DECODE_ERROR: "The model server could not turn the answer into text.",
}


def _body_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body
        if isinstance(message, dict):
            message = message.get("message", message)
        return str(message)
    return str(body or exc.message)


def failure_kind(exc: BaseException) -> str:
    """The failure's kind, as the panel's chat-side finding names it ("unknown" when none does)."""
    finding = from_exception(exc)
    return str(finding.kind) if finding is not None else "unknown"


def explain(exc: BaseException, is_admin: bool) -> str:
    """A short, clear message for the chat; admins are pointed to the diagnostics panel."""
    where = " Open the diagnostics panel for the evidence and the fix." if is_admin else (
        " If it keeps happening, tell the administrator."
    )
    finding = from_exception(exc)
    kind = Kind(finding.kind) if finding is not None else None
    if kind == Kind.CONTEXT_LENGTH:
        return ("The conversation is longer than the model's context, even after leaving out old turns. "
                "Start a new chat or shorten the message.")
    if kind == Kind.MODEL_NOT_FOUND and isinstance(exc, openai.APIStatusError):
        return f"The model server does not know this model (404): {_body_text(exc)[:200]}" + where
    if kind in _SENTENCES:
        status = f" (HTTP {exc.status_code})" if isinstance(exc, openai.APIStatusError) and kind in (
            Kind.ENGINE_ERROR, Kind.OUT_OF_MEMORY, Kind.DECODE_ERROR) else ""
        return _SENTENCES[kind].rstrip(".") + status + "." + where
    if isinstance(exc, openai.BadRequestError):
        return f"The model server rejected the request (400): {_body_text(exc)[:200]}"
    if isinstance(exc, openai.APIStatusError):
        return f"The model server failed with HTTP {exc.status_code}." + where
    if isinstance(exc, openai.APIError):
        return f"The model server stopped the answer: {str(exc)[:200]}." + where
    return f"Something went wrong while answering ({type(exc).__name__})." + where
