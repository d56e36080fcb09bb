"""An answer a client printed field by field (`printed_answer_fields`): `content: '…'` on one line and
`finish_reason: length` on one of the next lines (a pull request's "before" output, spotlight #32).

The content is a Python string literal (read back with `ast.literal_eval`, never evaluated as code) and is judged
by `answers.judge_answer` as a response body's would be: an empty answer, one that loops, one that runs on past
its end into a turn of its own. Only the two fields together are read: `content:` alone is a line of any printed
structure, and a finish reason alone says nothing of the text.
"""

from __future__ import annotations

import ast
import re

from .answers import judge_answer
from .findings import Finding, evidence_text

RULE_ID = "printed_answer_fields"
WITHIN_LINES = 3
_CONTENT = re.compile(r"""^\s*content:\s*(?P<v>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*$""")
_FINISH = re.compile(r"^\s*finish_reason:\s*['\"]?(?P<v>[a-z_]+)['\"]?\s*$")


def _literal(value: str) -> str | None:
    try:
        text = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return None
    return text if isinstance(text, str) else None


class AnswerFieldsWatch:
    """Fed every line of a log; judges a printed `content:` line with the `finish_reason:` line near it."""

    def __init__(self) -> None:
        self._content: tuple[int, str, str] | None = None  # line number, text, the line as written
        self.found: Finding | None = None

    def feed(self, line: str, lineno: int, secrets: tuple[str, ...] = ()) -> None:
        """One line of the log."""
        if self.found is not None:
            return
        if (m := _CONTENT.match(line)) is not None:
            text = _literal(m.group("v"))
            self._content = None if text is None else (lineno, text, line.strip())
            return
        if self._content is None or (m := _FINISH.match(line)) is None:
            return
        start, text, shown = self._content
        if lineno - start > WITHIN_LINES:
            return
        verdict = judge_answer(text, m.group("v"), None)
        if verdict is not None:
            self.found = Finding(kind=verdict.kind.value, line=start, text=evidence_text(shown, secrets),
                                 hint=verdict.hint, rule=RULE_ID, role="decisive")
