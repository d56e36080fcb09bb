"""Did a remedy work? A real one-token chat completion after the restart, and the result type that says so."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

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


async def verify_completion(base_url: str, api_key: str, model: str, timeout: float = VERIFY_TIMEOUT, *,
                            require_text: bool = False, extra: dict[str, Any] | None = None) -> tuple[bool, str]:
    """(True, the answer) when the server answers a chat; (False, what went wrong) otherwise. `require_text`:
    an empty answer fails too (a remedy for empty answers is not verified by one), so a few tokens are asked
    for; `extra`: request fields the chat will send (a remedy's repetition_penalty)."""
    client = EngineClient(base_url, api_key, timeout=timeout)
    try:
        said = await client.chat_one_token(model, max_tokens=8 if require_text else 1, extra=extra)
    except httpx.HTTPStatusError as exc:
        return False, f"verification completion refused: HTTP {exc.response.status_code} {exc.response.text[:300]}"
    except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
        return False, f"verification completion failed: {type(exc).__name__}: {exc}"
    finally:
        await client.aclose()
    if require_text and not said.strip():
        return False, "verification completion came back empty (the answer still ends before any text)"
    return True, said
