"""Text made safe to show, send and store, with one rule for all three (no Chainlit).

A lone surrogate cannot be encoded as UTF-8 (SQLite's driver and the HTTP request to the model both
refuse it), PostgreSQL refuses NUL in text and JSON, and other control characters are invisible in the
page: all of them are dropped, wherever text enters (a message, a Retry payload, a system prompt) and
again, as a last guard, before any write to the history. Newline and tab are kept.

The rule is a compiled regex, so a long paste costs one C-level pass, never a Python loop per character;
and callers compare the length with the limits before cleaning, so an over-long message costs nothing.
"""

from __future__ import annotations

import re
from typing import Any

from chainlit_app.i18n import t

# C0 controls except tab (09) and newline (0a), DEL, and every UTF-16 surrogate (never valid alone in a str
# that came from UTF-8; a str from JSON can hold them).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")

MAX_INPUT_CHARS = 200_000  # a message longer than this is refused with its length and the limit
MAX_MESSAGE_BYTES = 1 << 20  # the socket refuses a frame over 1 MiB: the page reconnects, nothing is processed
MAX_SYSTEM_PROMPT_CHARS = 20_000  # default of CHAT_MAX_SYSTEM_PROMPT_CHARS


def clean_text(text: str) -> str:
    """`text` without lone surrogates and control characters other than newline and tab."""
    return _UNSAFE.sub("", text)


def is_clean(text: str) -> bool:
    return _UNSAFE.search(text) is None


def clean_value(value: Any) -> Any:
    """Strings cleaned inside dicts, lists and tuples (step metadata, tags); other values as they are."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_value(k): clean_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(clean_value(v) for v in value)
    return value


class Refused(ValueError):
    """Input the chat will not take, with a sentence for the user that says what to do."""


def admit_text(raw: object, limit: int = MAX_INPUT_CHARS, what: str | None = None) -> str:
    """The cleaned text of user input, or `Refused`: not text, or longer than `limit` characters.

    The length is checked before the text is cleaned (cleaning only shortens it), so an 8 MB paste is
    refused after one len()."""
    what = what or t("chat.what_message")
    if not isinstance(raw, str):
        raise Refused(t("chat.refused_not_text", what=what, type=type(raw).__name__))
    if len(raw) > limit:
        raise Refused(t("chat.refused_too_long", what=what, length=f"{len(raw):,}", limit=f"{limit:,}",
                        megabytes=MAX_MESSAGE_BYTES // (1 << 20)))
    return clean_text(raw)
