"""A conversation's messages and sampling parameters, fitted to the model's context (no Chainlit)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from chainlit_app.cleaning import MAX_SYSTEM_PROMPT_CHARS, clean_text
from chainlit_app.i18n import LANGUAGES, catalogue, t

CHARS_PER_TOKEN = 3.0  # conservative for English and code; a 400 from vLLM triggers a tighter retry
TOKENS_PER_MESSAGE = 6

# Notes the chat appends to an answer for the reader (catalogue keys `note.*`, in the reader's language).
# They are never the model's words: the conversation keeps the answer without them, and a resumed thread's
# stored messages lose them again (`without_notes`), whichever language they were written in.
_FIXED_NOTES = ("note.cut", "note.stopped", "note.decode", "note.see_panel", "note.looping")
_PREFIX_NOTES = ("note.interrupted", "note.empty", "note.trimmed")


def note(name: str, **values: Any) -> str:
    """The note `note.<name>` in the current language: cut, stopped, decode, see_panel, interrupted
    (reason), unfinished (what history holds of an answer while it streams), empty (finish_reason, tokens)."""
    if name == "unfinished":
        return t("note.interrupted", reason=t("note.unfinished_reason"))
    return t(f"note.{name}", **values)


def trimmed_note(dropped: int, max_model_len: int, refused: bool, max_tokens: int) -> str:
    """What the reader is told when older messages were left out of the request (and why the answer is short)."""
    key = "note.trimmed_refused" if refused else "note.trimmed"
    return t(key, max_model_len=max_model_len, dropped=dropped, max_tokens=max_tokens)


def with_note(answer: str, note: str) -> str:
    return f"{answer}\n\n{note}" if answer else note


def _is_note(part: str) -> bool:
    for language in LANGUAGES:
        texts = catalogue(language)
        if part in (texts[key] for key in _FIXED_NOTES if key in texts):
            return True
        if part.startswith(tuple(texts[key].split("{")[0] for key in _PREFIX_NOTES if key in texts)):
            return True
    return False


def without_notes(text: str) -> str:
    """A shown answer back to what the model wrote ("" when it wrote nothing)."""
    parts = text.split("\n\n")
    while parts and _is_note(parts[-1]):
        parts.pop()
    return "\n\n".join(parts)


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE


@dataclass
class Params:
    """Sampling settings as the user chose them, clamped to what the server accepts."""

    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int = 512
    system_prompt: str = ""
    repetition_penalty: float = 1.0  # vLLM's sampling parameter; 1.0 is off and is not sent

    @classmethod
    def from_widgets(cls, values: dict[str, Any], defaults: Params,
                     max_system_prompt: int = MAX_SYSTEM_PROMPT_CHARS) -> Params:
        """Chat settings arrive as loose JSON (a Slider may send floats); out-of-range values are clamped,
        the system prompt is cleaned like a message and cut to `max_system_prompt` characters."""

        def number(key: str, default: float) -> float:
            try:
                return float(values.get(key, default))
            except (TypeError, ValueError):
                return default

        return cls(
            temperature=min(2.0, max(0.0, number("temperature", defaults.temperature))),
            top_p=min(1.0, max(0.01, number("top_p", defaults.top_p))),
            max_tokens=int(min(1_000_000, max(1, number("max_tokens", defaults.max_tokens)))),
            repetition_penalty=min(2.0, max(1.0, number("repetition_penalty", defaults.repetition_penalty))),
            system_prompt=bounded_prompt(str(values.get("system_prompt", defaults.system_prompt) or ""),
                                         max_system_prompt),
        )


def bounded_prompt(prompt: str, limit: int) -> str:
    """A system prompt of at most `limit` characters, cleaned (cut first: cleaning a huge one costs)."""
    return clean_text(prompt[:limit])


@dataclass
class Fitted:
    messages: list[dict[str, str]]
    max_tokens: int
    dropped_turns: int

    @property
    def estimated_tokens(self) -> int:
        return sum(estimate_tokens(m["content"]) for m in self.messages)


# vLLM 0.32: "This model's maximum context length is 2048 tokens. However, your request has 2301 input tokens."
# (or "your prompt contains [at least] 2301 input tokens"); older: "(2301 in the messages, 64 in the completion)".
_PROMPT_TOKENS = re.compile(r"(?:request has|prompt contains)\s+(?:at least\s+)?(\d+) input tokens|"
                            r"\((\d+) in the messages")
RETRY_SHARE = 0.8  # of the context, for prompt and answer on the retry: vLLM counts a few tokens per message more


def retry_scale(server_message: str, sent: Fitted) -> float:
    """The share of the context to fit the conversation into on the retry after vLLM refused it as too long:
    half, or less when vLLM's own count of the prompt shows the estimate was further off."""
    match = _PROMPT_TOKENS.search(server_message)
    estimated = sent.estimated_tokens
    if match is None or estimated <= 0:
        return 0.5
    counted = int(match.group(1) or match.group(2))
    return max(0.02, min(0.5, RETRY_SHARE * estimated / counted))


class InputTooLong(ValueError):
    """The newest message alone does not fit the model's context."""


def clean_input(text: str) -> str:
    """Drop control characters other than newline and tab, and lone surrogates (see `cleaning`)."""
    return clean_text(text)


@dataclass
class Conversation:
    """The turns so far; the oldest are left out of a request when the context is full."""

    turns: list[dict[str, str]] = field(default_factory=list)

    def add(self, role: str, content: str) -> None:
        self.turns.append({"role": role, "content": content})

    def fit(self, params: Params, max_model_len: int, budget_scale: float = 1.0) -> Fitted:
        """System prompt + as many recent turns as fit beside room for the answer."""
        system = [{"role": "system", "content": params.system_prompt}] if params.system_prompt else []
        budget = int(max_model_len * budget_scale)
        fixed = sum(estimate_tokens(m["content"]) for m in system)
        newest = self.turns[-1:] if self.turns else []
        newest_cost = sum(estimate_tokens(m["content"]) for m in newest)
        room_for_prompt = budget - fixed - newest_cost
        if room_for_prompt < 16:
            raise InputTooLong(t("chat.input_too_long", tokens=newest_cost, max_model_len=max_model_len))
        wanted_answer = min(params.max_tokens, max(16, room_for_prompt // 2))
        room = room_for_prompt - wanted_answer
        kept: list[dict[str, str]] = []
        for message in reversed(self.turns[:-1]):
            cost = estimate_tokens(message["content"])
            if cost > room:
                break
            kept.append(message)
            room -= cost
        kept.reverse()
        # Never start the kept history with an assistant turn: chat templates expect a user first.
        while kept and kept[0]["role"] != "user":
            kept.pop(0)
        dropped = len(self.turns) - 1 - len(kept)
        used = fixed + newest_cost + sum(estimate_tokens(m["content"]) for m in kept)
        max_tokens = max(1, min(params.max_tokens, budget - used))
        return Fitted(system + kept + newest, max_tokens, dropped)
