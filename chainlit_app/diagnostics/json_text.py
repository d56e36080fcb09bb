"""Read JSON documents as people print and paste them: a shell's '%' after them, an SSE `data:` label,
Python's printout of a dict (single quotes, None), curled quotes, a text cut off at its end."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_CURLY_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


def parse_json(text: str) -> Any:
    """A JSON value from a printed body; shells and notebooks leave a '%' or prompt after it."""
    text = text.strip().rstrip("%").strip()
    if text.startswith("data:"):
        text = text[5:].strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    # Python's printout of a dict (single quotes, None): read it as a literal, never evaluated as code
    text = text.translate(_CURLY_QUOTES)
    try:
        return ast.literal_eval(text) if len(text) < 200_000 else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def close_json(text: str) -> str:
    """Close the brackets and strings of a JSON text cut off at its end (a pasted body often is)."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    text = text + '"' if in_string else text
    text = text.rstrip().rstrip(",")
    if text.endswith(":"):
        text += " null"
    return text + "".join(reversed(stack))


def field_offset(lines: list[str], names: tuple[str, ...]) -> int | None:
    """Which of a pretty-printed document's lines holds a key (0-based), the first name found winning: an answer's
    `"content": ""` is the line to show, not the closing brace. None when the key stands on several lines (a body
    of several choices): which one the verdict is about is not known here."""
    for name in names:
        key = re.compile(rf"[\"']{re.escape(name)}[\"']\s*:")
        offsets = [offset for offset, line in enumerate(lines) if key.search(line)]
        if offsets:
            return offsets[0] if len(offsets) == 1 else None
    return None
