"""What the chat itself observes, turned into findings (source='chat').

The server log cannot tell why a 400 happened or that an answer came back empty; the client can.
These pure functions take what the chat saw (an exception, the final text, timings, metrics) and
return findings of the same taxonomy, so the panel shows both sides together.
"""

from __future__ import annotations

import re
import statistics
from collections import deque

from chainlit_app.i18n import Msg

from .answers import judge_answer
from .exceptions import lookup_exception
from .findings import Finding, evidence_text
from .phases import Phase
from .rule_tables import RULES
from .rules import Context, most_specific
from .taxonomy import KINDS, Kind

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _finding(kind: Kind, text: str, hint: str = "", rule: str = "", basis: str = "rule") -> Finding:
    return Finding(
        kind=kind.value,
        line=0,
        text=evidence_text(text, ()),
        hint=hint or KINDS[kind].fix_msgs[0],
        source="chat",
        rule=rule or f"chat_{kind.value}",
        basis=basis,
    )


def _describe(exc: BaseException) -> str:
    """'Type: message', followed by the chain of causes (httpx errors hide under openai's)."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(parts) < 4:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}".strip())
        current = current.__cause__ or current.__context__
    return " <- ".join(parts)


def _server_message(exc: BaseException) -> str:
    """The error message the server sent, when the exception carries a response body."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body
        if isinstance(message, dict):
            message = message.get("message", message)
        return str(message)
    return str(exc)


def from_exception(exc: BaseException) -> Finding | None:
    """Map an exception raised while talking to vLLM to a finding; None if it is none of ours.

    The server's own message is read by the log rules first (a 400 says why in words: context length,
    chat template); then the app's one exception table decides by class, most specific first."""
    text = _describe(exc)
    status = getattr(exc, "status_code", None)
    rule = most_specific(RULES, _server_message(exc), Context(Phase.SERVING))
    if rule is not None and rule.role != "wrapper" and status is not None:
        return _finding(rule.kind, text, rule.hint, f"chat_{rule.id}")
    entry = lookup_exception(exc)
    if entry is not None and not (entry.kind == Kind.MODEL_NOT_FOUND and "does not exist" not in text):
        return _finding(entry.kind, text, entry.hint, f"chat_{entry.kind.value}", "exception_type")
    if entry is not None:
        hint = Msg("hint.chat_route_not_found")
        return _finding(Kind.MODEL_NOT_FOUND, text, hint, "chat_route_not_found", "exception_type")
    if isinstance(status, int) and status >= 500:
        return _finding(Kind.ENGINE_ERROR, text, rule="chat_server_error", basis="phase")
    return None


def from_history_failure(operation: str, error: str) -> Finding:
    """A history statement that failed after its retries: a gap in a thread the admin should know of."""
    return _finding(Kind.HISTORY_WRITE_FAILED, f"chat history: {operation} failed: {error}",
                    rule="chat_history_write_failed", basis="exception_type")


def _escaped_sample(text: str, index: int, width: int = 24) -> str:
    sample = text[max(0, index - width) : index + width]
    return sample.encode("unicode_escape").decode("ascii")[:120]


def from_answer(
    text: str, finish_reason: str | None, completion_tokens: int | None, eos_hint: str = ""
) -> list[Finding]:
    """Findings about a finished answer: empty, looping, or undecodable text."""
    findings: list[Finding] = []
    verdict = judge_answer(text, finish_reason, completion_tokens)
    if verdict is not None and verdict.kind == Kind.EMPTY_OUTPUT:
        hint = Msg("hint.with_detail", hint=verdict.hint, detail=eos_hint) if eos_hint else verdict.hint
        findings.append(_finding(verdict.kind, verdict.evidence, hint, "chat_empty_answer"))
        return findings
    replacement = text.count("\ufffd")
    controls = len(_CONTROL.findall(text))
    if replacement or controls:
        first = min(i for i in (text.find("\ufffd"), _first_control(text)) if i >= 0)
        evidence = (
            f"{replacement} U+FFFD and {controls} control characters in a {len(text)}-character answer, e.g. "
            f"'{_escaped_sample(text, first)}'"
        )
        findings.append(_finding(Kind.DECODE_ERROR, evidence, rule="chat_garbled_answer"))
    elif _degenerate(text):
        evidence = f"the {len(text)}-character answer is one repeated character: '{_escaped_sample(text, 0)}'"
        hint = Msg("hint.chat_degenerate_answer")
        findings.append(_finding(Kind.DECODE_ERROR, evidence, hint, "chat_degenerate_answer"))
    elif verdict is not None:
        findings.append(_finding(verdict.kind, verdict.evidence, verdict.hint, "chat_looping_answer"))
    return findings


def _degenerate(text: str) -> bool:
    """True for answers like '!!!!!!!!!!!!' (NaN logits): >= 16 characters, 90 % one non-word symbol."""
    stripped = text.strip()
    if len(stripped) < 16:
        return False
    symbol = max(set(stripped), key=stripped.count)
    return not symbol.isalnum() and stripped.count(symbol) >= 0.9 * len(stripped)


def _first_control(text: str) -> int:
    m = _CONTROL.search(text)
    return m.start() if m else -1


class FirstTokenWatch:
    """Remembers recent time-to-first-token values and flags one that is far above the usual."""

    def __init__(
        self, window: int = 20, factor: float = 5.0, min_seconds: float = 10.0, min_samples: int = 3
    ) -> None:
        self._samples: deque[float] = deque(maxlen=window)
        self._factor = factor
        self._min_seconds = min_seconds
        self._min_samples = min_samples

    @property
    def median(self) -> float | None:
        return statistics.median(self._samples) if self._samples else None

    def observe(self, seconds: float) -> Finding | None:
        """Add one measurement; a finding when it is > factor x median and > min_seconds."""
        median = self.median
        enough = len(self._samples) >= self._min_samples
        self._samples.append(seconds)
        if not enough or median is None:
            return None
        if seconds > self._factor * median and seconds > self._min_seconds:
            text = f"first token after {seconds:.1f} s; the recent median is {median:.1f} s"
            hint = Msg("hint.chat_slow_first_token")
            return _finding(Kind.SLOW_OR_STALLED, text, hint, "chat_slow_first_token")
        return None


def from_metrics(
    running: float, waiting: float, gen_tokens_delta: float, seconds: float, min_seconds: float = 30.0
) -> Finding | None:
    """Requests present but no token generated for `seconds` (>= min_seconds): stalled."""
    if seconds < min_seconds or gen_tokens_delta > 0 or (running <= 0 and waiting <= 0):
        return None
    text = (
        f"{running:g} running and {waiting:g} waiting requests, 0 tokens generated in {seconds:.0f} s "
        "(vllm:generation_tokens_total did not grow)"
    )
    hint = Msg("hint.metrics_stalled")
    return _finding(Kind.SLOW_OR_STALLED, text, hint, "metrics_stalled")
