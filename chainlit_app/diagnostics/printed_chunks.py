"""Streamed answers a client printed chunk by chunk, read back as the chunks they are (`printed_chunk_stream`).

A client that prints what the openai library yields writes pydantic's repr of each chunk:
`ChatCompletionChunk(id='', choices=[Choice(delta=ChoiceDelta(content='…', …), finish_reason='stop', index=0, …)]
…)`. Read back as a chunk (strings as Python literals, never evaluated as code), it joins the same stream as the
`data: {…}` lines, so a stream whose content stays empty or None all the way to `stop` is an empty answer.

Two shapes of a demo server's framing are read too. A chunk whose content is itself a serialised chunk (GLM-4's
demo server put the JSON of its own chunk into the content: `content='{"model":"glm-4",…,"object":
"chat.completion.chunk",…}'`) carries the inner chunk's content, not the JSON text. And a bare `None` printed
right after a stream's chunk is the client printing that stream's next content: None, so the stream ended
with no text (GLM-4 #330: one chunk with empty content, then `None`).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

RULE_ID = "printed_chunk_stream"
_LITERAL = r"(?P<v>None|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
_CHUNK = re.compile(r"\bChatCompletionChunk\(id=(?P<id>'[^']*'|\"[^\"]*\"|None)")
_CONTENT = re.compile(r"\bChoiceDelta\(content=" + _LITERAL)
_FINISH = re.compile(r"\bfinish_reason=(?:'(?P<f>\w+)'|None)")
_INDEX = re.compile(r"\bfinish_reason=[^,]*, index=(\d+)")
_INNER_CHUNK = re.compile(r'^\s*\{.*"object"\s*:\s*"chat\.completion\.chunk"', re.S)


def _literal(text: str) -> str | None:
    if text == "None":
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text[1:-1]
    return value if isinstance(value, str) else None


def read_printed_chunk(message: str) -> dict[str, Any] | None:
    """A printed `ChatCompletionChunk(...)` as the chunk dict a `data:` line would carry; None for anything
    else. Only the first choice is read."""
    head = _CHUNK.search(message)
    content = _CONTENT.search(message)
    if head is None or content is None:
        return None
    finish = _FINISH.search(message, content.end())
    index = _INDEX.search(message, content.end())
    choice = {
        "index": int(index.group(1)) if index else 0,
        "delta": {"content": _literal(content.group("v"))},
        "finish_reason": finish.group("f") if finish else None,
    }
    return {"id": _literal(head.group("id")) or "", "object": "chat.completion.chunk", "choices": [choice]}


def inner_content(piece: str) -> str:
    """A chunk's content that is itself a serialised chunk (a demo server's framing bug) stands for the inner
    chunk's content; any other content is itself."""
    if not _INNER_CHUNK.match(piece):
        return piece
    try:
        inner = json.loads(piece)
    except ValueError:
        return piece
    choices = inner.get("choices") if isinstance(inner, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return piece
    delta = choices[0].get("delta")
    content = delta.get("content") if isinstance(delta, dict) else None
    return content if isinstance(content, str) else ""


def is_printed_none(message: str) -> bool:
    """A bare `None`: Python's print of a value that is missing (a stream's next content)."""
    return message.strip() == "None"
