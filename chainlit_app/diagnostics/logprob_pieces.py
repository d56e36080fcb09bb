"""A response's `logprobs` structure cut out of a printed line before the line is read as answer text.

A client that prints a response asked with `logprobs` writes the sampled tokens one by one (`tokens=['▁',
'▁Hello', '!', …]`, `top_logprobs`, byte lists): token pieces, quotes and numbers that read as garbled text
although the answer itself is fine. The structure is a record of sampling, never the answer, so it is removed
(up to its closing bracket, or to the end of a line cut inside it) and only what is left is judged.
"""

from __future__ import annotations

import re

RULE_ID = "logprobs_not_answer"
_START = re.compile(r"""['"]?\blogprobs['"]?\s*[=:]\s*(?=[\w.]*[({\[])""")
_OPEN = "([{"
_CLOSE = ")]}"


def _structure_end(text: str, start: int) -> int:
    """The index just past the bracket that closes the first one at or after `start` (quotes honoured);
    the text's length when the line ends inside the structure."""
    depth = 0
    quote = ""
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth <= 0:
                return i + 1
        i += 1
    return len(text)


def without_logprobs(text: str) -> str:
    """The text with every `logprobs=…` / `"logprobs": …` structure removed (unchanged when none)."""
    if "logprobs" not in text:
        return text
    parts: list[str] = []
    pos = 0
    while (m := _START.search(text, pos)) is not None:
        parts.append(text[pos:m.start()])
        pos = _structure_end(text, m.end())
    parts.append(text[pos:])
    return "".join(parts)
