"""The failure kinds users meet with a chat front end on vLLM, and what to do about each.

The names are a contract (CLI JSON, panel API); the texts, what an admin reads in the panel, live in the
catalogue (chainlit_app/locales) in English and Simplified Chinese.
Fix steps name real vLLM flags and this app's CHAT_* settings so they can be followed as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from chainlit_app.i18n import Msg, has, t

Severity = Literal["critical", "error", "warning"]

HEALTHY = "healthy"


class Kind(StrEnum):
    """Root-cause kinds; the string values are part of the public contract."""

    CONNECTION = "connection"
    EMPTY_OUTPUT = "empty_output"
    DECODE_ERROR = "decode_error"
    STARTUP_FAILURE = "startup_failure"
    OUT_OF_MEMORY = "out_of_memory"
    PORT_IN_USE = "port_in_use"
    MODEL_NOT_FOUND = "model_not_found"
    AUTH = "auth"
    CONTEXT_LENGTH = "context_length"
    CHAT_TEMPLATE = "chat_template"
    VERSION_MISMATCH = "version_mismatch"
    SLOW_OR_STALLED = "slow_or_stalled"
    DEGENERATE_OUTPUT = "degenerate_output"
    ENGINE_ERROR = "engine_error"
    HISTORY_WRITE_FAILED = "history_write_failed"
    DEGRADED = "degraded"


@dataclass(frozen=True)
class KindInfo:
    """One kind's severity; its title, why it happens and the fix steps (in the order to try them) are
    catalogue texts (`kind.<kind>.title|explanation|fix.N`), rendered in the current language."""

    kind: Kind
    severity: Severity

    @property
    def title(self) -> str:
        return t(f"kind.{self.kind.value}.title")

    @property
    def explanation(self) -> str:
        return t(f"kind.{self.kind.value}.explanation")

    @property
    def fix(self) -> tuple[str, ...]:
        return tuple(t(key) for key in _fix_keys(self.kind))

    @property
    def fix_msgs(self) -> tuple[Msg, ...]:
        """The fix steps as stored texts (English value, shown later in the reader's language)."""
        return tuple(Msg(key) for key in _fix_keys(self.kind))


def _fix_keys(kind: Kind) -> list[str]:
    keys, number = [], 1
    while has(key := f"kind.{kind.value}.fix.{number}"):
        keys.append(key)
        number += 1
    return keys


_INFOS = (
    KindInfo(Kind.CONNECTION, "critical"),
    KindInfo(Kind.EMPTY_OUTPUT, "error"),
    KindInfo(Kind.DECODE_ERROR, "error"),
    KindInfo(Kind.STARTUP_FAILURE, "critical"),
    KindInfo(Kind.OUT_OF_MEMORY, "critical"),
    KindInfo(Kind.PORT_IN_USE, "critical"),
    KindInfo(Kind.MODEL_NOT_FOUND, "error"),
    KindInfo(Kind.AUTH, "error"),
    KindInfo(Kind.CONTEXT_LENGTH, "warning"),
    KindInfo(Kind.CHAT_TEMPLATE, "error"),
    KindInfo(Kind.VERSION_MISMATCH, "critical"),
    KindInfo(Kind.SLOW_OR_STALLED, "warning"),
    KindInfo(Kind.DEGENERATE_OUTPUT, "warning"),
    KindInfo(Kind.ENGINE_ERROR, "error"),
    KindInfo(Kind.HISTORY_WRITE_FAILED, "error"),
    KindInfo(Kind.DEGRADED, "critical"),
)

KINDS: dict[Kind, KindInfo] = {info.kind: info for info in _INFOS}


def kind_info(kind: str) -> KindInfo | None:
    """Look a kind up by its string value; None for 'healthy' or unknown names."""
    try:
        return KINDS[Kind(kind)]
    except ValueError:
        return None
