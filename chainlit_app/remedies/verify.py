"""Did a remedy work? A real one-token chat completion after the restart, and the result type that says so."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from chainlit_app.diagnostics.chat_observations import from_answer
from chainlit_app.engine.http import EngineClient

VERIFY_TIMEOUT = 120.0  # a first request on a CPU may compile kernels


@dataclass
class RemedyResult:
    """`fixed` only when the engine became ready and answered a completion; otherwise `evidence` is what the
    new launch showed (its error, the root finding of its log, the failed request)."""

    remedy: str
    action: str  # "apply" or "undo"
    fixed: bool
    overrides: dict[str, Any] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    answer: str = ""
    seconds: float = 0.0  # from writing the override to the verified answer (or to giving up)

    def to_json(self) -> dict[str, Any]:
        return {"remedy": self.remedy, "action": self.action, "fixed": self.fixed, "overrides": self.overrides,
                "evidence": self.evidence, "answer": self.answer, "seconds": round(self.seconds, 1)}


ANSWER_KINDS = frozenset({"empty_output", "decode_error"})  # faults a one-token reply cannot rule out
# An answer fault is only fixed when a question with one right answer gets it: text that merely looks like text
# (a model computing in broken precision, or random weights) passes the empty and garbled checks.
KNOWN_QUESTION = "What is the capital of France? Answer in one word."
KNOWN_ANSWERS = ("paris", "巴黎")
JUDGED_TOKENS = 16


async def verify_completion(base_url: str, api_key: str, model: str, timeout: float = VERIFY_TIMEOUT, *,
                            judge: bool = False, extra: dict[str, Any] | None = None,
                            raise_refusals: bool = False) -> tuple[bool, str]:
    """(True, the answer) when the server answers a chat; (False, what went wrong) otherwise. `judge`: for a
    remedy of an answer fault, the known question is asked and the answer judged as the chat judges its
    answers (chat_observations.from_answer) and for the right answer; `extra`: request fields the chat will
    send (a remedy's repetition_penalty); `raise_refusals`: a 4xx (the server answered and refused the request)
    is raised as httpx.HTTPStatusError instead of returned, for a caller that treats it apart."""
    client = EngineClient(base_url, api_key, timeout=timeout)
    try:
        if judge:
            said = await client.chat_one_token(model, KNOWN_QUESTION, max_tokens=JUDGED_TOKENS, extra=extra)
        else:
            said = await client.chat_one_token(model, extra=extra)
    except httpx.HTTPStatusError as exc:
        if raise_refusals and exc.response.status_code < 500:
            raise
        return False, f"verification completion refused: HTTP {exc.response.status_code} {exc.response.text[:300]}"
    except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
        return False, f"verification completion failed: {type(exc).__name__}: {exc}"
    finally:
        await client.aclose()
    if judge:
        for finding in from_answer(said, "stop", None):
            if finding.kind in ANSWER_KINDS:
                return False, f"verification answer {said[:80]!r} is still {finding.kind}: {finding.text}"
        if not any(known in said.lower() for known in KNOWN_ANSWERS):
            return False, f"verification answer to {KNOWN_QUESTION!r} is wrong: {said[:80]!r}"
    return True, said
