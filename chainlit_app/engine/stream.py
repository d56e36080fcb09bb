"""A streamed chat completion read as plain dicts.

The openai client still sends the request and decodes the server-sent events (auth, typed HTTP errors,
error events in the stream, timeouts and broken connections as openai exceptions); what is skipped is
the per-chunk ChatCompletionChunk object (and the request's TypedDict transform), which cost about
80 us of the 100 us a chunk takes on a small CPU: at 32 answers streaming at once that is CPU the
engine next to the app needs. See docs/PERFORMANCE.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import openai

Chunk = dict[str, Any]


async def open_chat_stream(client: openai.AsyncOpenAI, body: dict[str, Any]) -> openai.AsyncStream[Chunk]:
    """POST /chat/completions with `stream` on; iterate the result for each chunk as a dict."""
    return await client.post(
        "/chat/completions", body={**body, "stream": True}, cast_to=object, stream=True,
        stream_cls=openai.AsyncStream[Chunk],
    )


@dataclass(slots=True)
class Piece:
    """What the chat needs from one chunk: new text, why the answer ended, the token count at the end."""

    content: str | None = None
    finish_reason: str | None = None
    completion_tokens: int | None = None


def piece(chunk: Chunk) -> Piece:
    """Read one chunk (`choices[0].delta.content`, `choices[0].finish_reason`, `usage.completion_tokens`)."""
    usage = chunk.get("usage")
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    choices = chunk.get("choices")
    if not choices:
        return Piece(completion_tokens=tokens)
    choice = choices[0]
    delta = choice.get("delta") or {}
    return Piece(delta.get("content"), choice.get("finish_reason"), tokens)
