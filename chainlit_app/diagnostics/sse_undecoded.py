"""A client that parsed a server-sent event line as JSON without taking off its `data: ` prefix
(`sse_line_parsed_as_json`).

The client printed the chunk it held, a string that still starts with `data: {` (MetaGPT #1340:
`'data: {"id":"chatcmpl-471","object":"chat.completion.chunk",…}\\n'`), and then `json.loads` of it failed at
the very first character: `JSONDecodeError: Expecting value: line 1 column 1 (char 0)`. The server's stream was
fine; the client did not decode it as SSE, so the answer is a decode error, not the engine's failure. Only a
quoted (repr) `data: {` line counts: a raw SSE line is what every streaming log shows, the quotes are the client
holding it as a string.
"""

from __future__ import annotations

import re

from chainlit_app.i18n import Msg

from .findings import Finding, evidence_text
from .taxonomy import Kind

RULE_ID = "sse_line_parsed_as_json"
WITHIN_LINES = 20  # the traceback right after the printed chunk: a few frames of json's own code
_QUOTED_SSE_LINE = re.compile(r"^\s*b?['\"]data: ?[{\[]")
_FIRST_CHAR_UNPARSED = re.compile(r"JSONDecodeError: Expecting value: line 1 column 1 \(char 0\)")


class SseUndecodedWatch:
    """Fed every line of a log; remembers the latest printed SSE line and names the JSON error after it."""

    def __init__(self) -> None:
        self._sse_line = 0
        self.found: Finding | None = None

    def feed(self, line: str, lineno: int, secrets: tuple[str, ...] = ()) -> None:
        """One line of the log."""
        if self.found is not None:
            return
        if _QUOTED_SSE_LINE.match(line):
            self._sse_line = lineno
        elif self._sse_line and lineno - self._sse_line <= WITHIN_LINES and _FIRST_CHAR_UNPARSED.search(line):
            self.found = Finding(kind=Kind.DECODE_ERROR.value, line=lineno, text=evidence_text(line.strip(), secrets),
                                 hint=Msg("rule.sse_line_parsed_as_json"), rule=RULE_ID, role="decisive")
