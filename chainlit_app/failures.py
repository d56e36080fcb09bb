"""What a failed chat request means, in one short sentence a user can act on.

The kind comes from the same place as the panel's chat-side finding (`diagnostics.chat_observations`,
which reads the server's message with the log rules and then the app's one exception table), so the chat
and the panel never disagree about what went wrong.
"""

from __future__ import annotations

import openai

from chainlit_app.diagnostics.chat_observations import from_exception
from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.i18n import t

# Kinds with one sentence of their own (catalogue key `fail.kind.<kind>`); the HTTP status is added for these.
_SENTENCE_KINDS = (Kind.SLOW_OR_STALLED, Kind.CONNECTION, Kind.AUTH, Kind.CHAT_TEMPLATE, Kind.ENGINE_ERROR,
                   Kind.OUT_OF_MEMORY, Kind.DECODE_ERROR)
_STATUS_KINDS = (Kind.ENGINE_ERROR, Kind.OUT_OF_MEMORY, Kind.DECODE_ERROR)


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
    """A short, clear message for the chat in the current language; admins are pointed to the panel."""
    where = t("fail.where_admin") if is_admin else t("fail.where_user")
    finding = from_exception(exc)
    kind = Kind(finding.kind) if finding is not None else None
    if kind == Kind.CONTEXT_LENGTH:
        return t("fail.context_length")
    if kind == Kind.MODEL_NOT_FOUND and isinstance(exc, openai.APIStatusError):
        return t("fail.model_not_found", detail=_body_text(exc)[:200], where=where)
    if kind in _SENTENCE_KINDS:
        status = t("fail.status", code=exc.status_code) if isinstance(exc, openai.APIStatusError) and (
            kind in _STATUS_KINDS) else ""
        return t("fail.sentence", sentence=t(f"fail.kind.{kind.value}"), status=status, where=where)
    if isinstance(exc, openai.BadRequestError):
        return t("fail.bad_request", detail=_body_text(exc)[:200])
    if isinstance(exc, openai.APIStatusError):
        return t("fail.http", code=exc.status_code, where=where)
    if isinstance(exc, openai.APIError):
        return t("fail.api_error", detail=str(exc)[:200], where=where)
    return t("fail.other", error=type(exc).__name__, where=where)
