"""What a diagnosis produces: findings with their evidence and basis, and the report of a whole log.

Kept apart from the classifier so that the store, the chat observations, the doctor and the panel can
use the types without importing the rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .redact import redact

MAX_TEXT = 500

# On what a finding was named, most to least specific: a rule's pattern, the exception's type, the
# module the exception was raised in, or only the phase the log was in when something failed.
Basis = Literal["rule", "exception_type", "raised_in", "phase"]
# Where it was seen: the engine's log, the chat's own request, a probe of the server or process, the
# preflight before spawning (attach mode's server check counts as a probe).
Source = Literal["log", "chat", "probe", "preflight"]
# How much a finding says about the root cause: decisive names a cause; fallback is a failure named
# only by the phase it happened in; weak is a symptom; wrapper a consequence printed after its cause.
Role = Literal["decisive", "fallback", "weak", "wrapper"]
ROLE_RANK: dict[str, int] = {"decisive": 0, "fallback": 1, "weak": 2, "wrapper": 3}


@dataclass
class Finding:
    """One observed failure signal with the line it was seen on and a one-line fix."""

    kind: str
    line: int
    text: str
    hint: str
    root: bool = False
    source: str = "log"
    rule: str = ""
    role: str = "decisive"
    basis: str = "rule"
    points_to: int = 0  # wrappers: the line of the earlier traceback they are a consequence of

    def to_json(self) -> dict[str, Any]:
        """The public shape used by the CLI and the panel API."""
        return {
            "kind": self.kind,
            "line": self.line,
            "text": self.text,
            "hint": self.hint,
            "basis": self.basis,
            "rule": self.rule,
            "source": self.source,
        }


@dataclass
class Report:
    """Findings of one log; `kind` is the root cause's kind or 'healthy'. The root finding comes first."""

    kind: str
    findings: list[Finding] = field(default_factory=list)
    lines: int = 0

    @property
    def root(self) -> Finding | None:
        return next((f for f in self.findings if f.root), None)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "findings": [f.to_json() for f in self.findings]}


def evidence_text(text: str, secrets: tuple[str, ...]) -> str:
    """The evidence line as shown to people: secrets masked, at most MAX_TEXT characters."""
    text = redact(text.strip(), secrets)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
