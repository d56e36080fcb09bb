"""Recorded vLLM streams, cut and grouped as vLLM would send them, encoded once (no per-token JSON work).

A recorded body (tests/data/streams/*.sse) gives the tokens' texts and vLLM 0.32's chunk format. An
answer of `n` tokens at `stream_interval` k is sent as vLLM sends it: the role chunk with the first
token alone, then a chunk every k tokens, the rest with the finish reason, the usage chunk and `[DONE]`.
All of it is encoded into one byte string per (n, k), with a fixed-width placeholder id that each
request replaces by its own (one `bytes.replace` per request); the chunk boundaries are offsets into it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

PLACEHOLDER_ID = "chatcmpl-" + "0" * 16  # vLLM's ids: chatcmpl- and 16 hex digits
STREAMS_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "streams"


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


@dataclass(frozen=True)
class Encoded:
    """One answer's whole body; `ends[i]` is where chunk i ends (chunk 0 also holds the role chunk; the
    last chunk also holds the usage chunk and [DONE]); `tokens_at[i]` the tokens sent up to chunk i."""

    body: bytes
    ends: tuple[int, ...]
    tokens_at: tuple[int, ...]


class RecordedStream:
    """The tokens of one recorded answer and the fields vLLM put around them."""

    def __init__(self, sse: bytes, model: str) -> None:
        events = [json.loads(line[6:]) for line in sse.decode().splitlines()
                  if line.startswith("data: {")]
        self.model = model
        self.created = int(events[0]["created"])
        self.tokens: list[str] = []
        self.finish_reason = "stop"
        self.prompt_tokens = 0
        self.fingerprint = None
        for event in events:
            if event.get("usage"):
                self.prompt_tokens = int(event["usage"]["prompt_tokens"])
                self.fingerprint = event.get("system_fingerprint")
            for choice in event.get("choices", []):
                content = choice.get("delta", {}).get("content")
                if content:
                    self.tokens.append(content)
                self.finish_reason = choice.get("finish_reason") or self.finish_reason

    @classmethod
    def load(cls, path: Path, model: str) -> RecordedStream:
        return cls(path.read_bytes(), model)

    def text(self, n: int) -> str:
        return "".join(self.tokens[:n])

    def _chunk(self, content: str, finish: str | None) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": {"content": content}, "logprobs": None,
                                  "finish_reason": finish}
        if finish is not None:
            choice["stop_reason"] = None
        choice["token_ids"] = None
        return {"id": PLACEHOLDER_ID, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model, "choices": [choice]}

    @lru_cache(maxsize=256)  # noqa: B019 - a handful of streams live as long as the server
    def encoded(self, n: int, interval: int) -> Encoded:
        """The body for an answer of the first `n` tokens (all of them if fewer) at `interval`."""
        n = max(1, min(n, len(self.tokens)))
        finish = self.finish_reason if n == len(self.tokens) else "length"
        bounds = [1]
        while bounds[-1] < n:
            bounds.append(min(n, bounds[-1] + max(1, interval)))
        role = {"id": PLACEHOLDER_ID, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                  "logprobs": None, "finish_reason": None}],
                "prompt_token_ids": None, "prompt_text": None}
        body = bytearray(_event(role))
        ends: list[int] = []
        start = 0
        for end in bounds:
            body += _event(self._chunk("".join(self.tokens[start:end]), finish if end == n else None))
            start = end
            ends.append(len(body))
        usage: dict[str, Any] = {"id": PLACEHOLDER_ID, "object": "chat.completion.chunk", "created": self.created,
                                 "model": self.model, "choices": [],
                                 "usage": {"prompt_tokens": self.prompt_tokens,
                                           "total_tokens": self.prompt_tokens + n, "completion_tokens": n}}
        if self.fingerprint:
            usage["system_fingerprint"] = self.fingerprint
        body += _event(usage) + b"data: [DONE]\n\n"
        ends[-1] = len(body)
        return Encoded(bytes(body), tuple(ends), tuple(bounds))


def load_streams(model: str, directory: Path = STREAMS_DIR) -> list[RecordedStream]:
    """Every recorded single-token stream, longest first (the replay cuts the longest to max_tokens)."""
    streams = [RecordedStream.load(path, model) for path in sorted(directory.glob("*.sse"))
               if "interval" not in path.stem]
    return sorted(streams, key=lambda s: -len(s.tokens))
