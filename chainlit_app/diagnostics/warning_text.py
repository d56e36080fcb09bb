"""The lines of a Python warning's message, read as the warning's words and never as an error of their own.

Python's `warnings` module prints `path.py:N: Category: message` and then the warning's source line, indented by
two spaces. A message holding newlines puts its other lines in between, unindented and with no level: vLLM's
`connections.py:8: RuntimeWarning: Failed to read commit hash:` is followed by `No module named 'vllm._version'`
(the caught exception's text, in a working install), and huggingface_hub's `UserWarning: ` (an empty first line)
by `The secret HF_TOKEN does not exist in your Colab secrets.` Read alone, those lines look like an exception
and a failure sentence.

Only a header whose message visibly goes on (empty, or ending with a colon) opens the warning's lines: a complete
message may come without its source line (no source file), and the next line is then the log's own. Whatever
stood before the header's path (`[rank0]: `, a process tag, a compose column) must stand before each of its lines.
The lines end at a blank line, at the source line (indented, or a statement that lost its indent), at a line with
a level, a time or a traceback, at an exception's class or a fatal signal, or after `MAX_LINES`: a warning never
hides what comes after it.
"""

from __future__ import annotations

import re

from .lineformat import EXCEPTION_CLASS, parse_line, strip_ansi

MAX_LINES = 12  # huggingface_hub's Colab notice has four; a caught exception's text one
_HEADER_GOES_ON = re.compile(r"^(?P<prefix>.*?)(?:[/\\~.]|\w)[^\s:]*\.py:\d+: [A-Z]\w*Warning:(?: .*:)?\s*$")
# What ends the message: its source line, a traceback, an exception's class opening the line, a fatal signal or
# the shell's word for a killed process
_ITS_OWN_LINE = re.compile(
    r"\s|(?:from|import) \w|(?:warnings\.)?warn\(|Traceback \(most recent call last\)|"
    rf"{EXCEPTION_CLASS}:|(?:[a-z_]\w*\.)*[A-Z]\w*Warning:|"
    r"Fatal Python error|Segmentation fault|Killed\b|Aborted\b|Bus error|Illegal instruction"
)


def _shape(prefix: str) -> str:
    """A prefix as every line of one process shares it: its digits (a time, a rank) may differ."""
    return re.sub(r"\d", "0", prefix)


class WarningText:
    """Per log, in order: `holds(line)` says whether a line is the rest of the last warning's message."""

    def __init__(self) -> None:
        self._left = 0  # lines the open warning's message may still take
        self._prefix = ""  # the shape of what stood before the header's path

    def holds(self, raw: str) -> bool:
        text = strip_ansi(raw)
        if self._left:
            self._left -= 1
            if self._goes_on(text):
                return True
            self._left = 0
        header = _HEADER_GOES_ON.match(text) if "Warning:" in text else None
        if header is not None:
            self._left, self._prefix = MAX_LINES, _shape(header["prefix"])
        return False

    def _goes_on(self, text: str) -> bool:
        prefix = text[:len(self._prefix)]
        if _shape(prefix) != self._prefix:
            return False
        rest = text[len(prefix):]
        if not rest.strip() or _ITS_OWN_LINE.match(rest):
            return False
        parsed = parse_line(rest)  # anything a log puts before a record (a level, a time, a rank) ends the message
        return parsed.message == rest and not (parsed.level or parsed.process or parsed.time)
