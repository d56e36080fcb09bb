"""vLLM's request line (`Received request …: prompt: '…', params: SamplingParams(…), …`) broken at a fixed width.

The prompt inside it may put anything at the start of a piece (an indented manual page, `string | file]`), and so
may its sampling parameters (`[], include_stop_str_in_output=False`): the usual tests of a cut (`hard_wrap.py`)
take such a piece for a record of its own, and a prompt sent again and again then reads as a printed loop. Inside
the prompt's quote only the quote's end closes the line; inside the parameters' parentheses (counted outside their
quoted values), a piece that opens with a level or an exception's class is the next record; after them the usual
tests decide, so a failure printed right after a request line is read (the session's review found one read healthy).

Cost: each piece is read once, for the prompt's quote or the parameters' brackets (a 60,000-character prompt in 750
pieces is one pass, not 750).
"""

from __future__ import annotations

import re

from .lineformat import EXCEPTION_START, parse_line

_REQUEST = "Received request "
_PROMPT_OPENS = re.compile(r"Received request \S+: prompt: (['\"])")
# a repr string's text up to its closing quote: a backslash escapes the character after it, itself included
_REPR_BODY = {quote: re.compile(rf"(?:[^{quote}\\]|\\.)*", re.S) for quote in "'\""}
_PARAMS = "SamplingParams("


class RequestLineFold:
    """Follows one record as the pieces of a cut join it; `reset()` when a new record starts."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._quote = ""  # the prompt's quote, once its opening was seen
        self._scan = 0  # where the search for the quote's end goes on
        self._closed = -1  # where the quote closed
        self._params = -1  # where the sampling parameters open, once seen
        self._pscan = 0  # how far they were read
        self._depth = 0  # their parentheses still open
        self._pquote = ""  # the quote of a value in them still open

    def inside(self, held: str, last: str, following: str, width: int) -> bool:
        """Whether the piece `last` (of the width) ended inside the request line `held` and `following` goes on."""
        if len(last) != width:
            return False
        if not self._quote:
            opened = _PROMPT_OPENS.search(held) if _REQUEST in held else None
            if opened is None:
                return False
            self._quote, self._scan = opened.group(1), opened.end()
        if self._closed < 0:
            body = _REPR_BODY[self._quote].match(held, self._scan)
            end = body.end() if body is not None else self._scan
            if end >= len(held) or held[end] != self._quote:  # still open (maybe on a backslash the cut left)
                self._scan = end
                return True
            self._closed = end
        return self._in_params(held) and not parse_line(following).level \
            and EXCEPTION_START.match(following) is None

    def _in_params(self, held: str) -> bool:
        """Whether the parameters' parentheses (or a quoted value in them) are still open; the new text only."""
        if self._params < 0:
            self._params = held.find(_PARAMS, self._closed)
            if self._params < 0:
                return False
            self._pscan, self._depth, self._pquote = self._params, 0, ""
        index = self._pscan
        while index < len(held):
            char = held[index]
            if self._pquote:
                if char == "\\":
                    if index + 1 >= len(held):
                        break  # the escaped character is in the next piece
                    index += 2
                    continue
                if char == self._pquote:
                    self._pquote = ""
            elif char in "'\"":
                self._pquote = char
            elif char == "(":
                self._depth += 1
            elif char == ")":
                self._depth -= 1
            index += 1
        self._pscan = index
        return bool(self._pquote) or self._depth > 0
