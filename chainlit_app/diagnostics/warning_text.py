"""The lines of a Python warning's message, read as the warning's words and never as an error of their own.

Python's `warnings` module prints `path.py:N: Category: message` and then the warning's source line, indented by
two spaces. A message holding newlines puts its other lines in between, unindented and with no level: vLLM's
`connections.py:8: RuntimeWarning: Failed to read commit hash:` is followed by `No module named 'vllm._version'`
(the caught exception's text, in a working install), and huggingface_hub's `UserWarning: ` (an empty first line)
by `The secret HF_TOKEN does not exist in your Colab secrets.` Read alone, those lines look like an exception
and a failure sentence.

Only a header whose message visibly goes on (empty, or ending with a colon) opens the warning's lines: a complete
message may come without its source line (no source file), and the next line is then the log's own. The lines
end at the indented source line, at a line with a level, a process tag or a traceback, or after `MAX_LINES`.
"""

from __future__ import annotations

import re

from .lineformat import parse_line, printed_behind_envelope

MAX_LINES = 12  # huggingface_hub's Colab notice has four; a caught exception's text one
_HEADER_GOES_ON = re.compile(r"\.py:\d+: [A-Z]\w*Warning: (?:.*:)?\s*$")
_ITS_OWN_LINE = re.compile(r"\s|Traceback \(most recent call last\)")


class WarningText:
    """Per log, in order: `holds(line)` says whether a line is the rest of the last warning's message."""

    def __init__(self) -> None:
        self._left = 0  # lines the open warning's message may still take

    def holds(self, raw: str) -> bool:
        if self._left:
            printed = printed_behind_envelope(raw)  # a quote's `> `, a compose column, grep's number before it
            if printed is not None:
                raw = printed
            if not raw or _ITS_OWN_LINE.match(raw):
                self._left = 0  # the source line under the message, or a traceback: the log goes on
            else:
                parsed = parse_line(raw)
                if parsed.level or parsed.process or parsed.time:
                    self._left = 0
                else:
                    self._left -= 1
                    return True
        if "Warning: " in raw and _HEADER_GOES_ON.search(raw):
            self._left = MAX_LINES
        return False
