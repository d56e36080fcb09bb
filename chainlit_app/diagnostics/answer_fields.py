"""An answer a client printed field by field (`printed_answer_fields`): `content: '…'` on one line and
`finish_reason: length` on one of the next lines (a pull request's "before" output, spotlight #32).

The content is a Python string literal (read back with `ast.literal_eval`, never evaluated as code) and is judged
by `answers.judge_answer` as a response body's would be: an empty answer, one that loops, one that runs on past
its end into a turn of its own. Only the two fields together are read: `content:` alone is a line of any printed
structure, and a finish reason alone says nothing of the text.

The same watch reads a lone empty content field (`"content": "",`, a body cut to its one line) beside llama.cpp's
timings of a single sampled token (`llama_print_timings: sample time = … / 1 runs`, or `llama_perf_sampler_print:
sampling time = … / 1 runs`), within a few lines of each other (`empty_content_one_sampled_token`): the one token
the model sampled was its end of text, so the answer is empty (llama-cpp-python #1020, a server started without the
model's chat format). Either alone is no match: a stream's first chunk carries the same empty field beside its
role, and a request with max_tokens 1 samples once too, but then its content holds that token.
"""

from __future__ import annotations

import ast
import re

from chainlit_app.i18n import Msg

from .answers import judge_answer
from .findings import Finding, evidence_text
from .taxonomy import Kind

RULE_ID = "printed_answer_fields"
ONE_TOKEN_ID = "empty_content_one_sampled_token"
WITHIN_LINES = 3
ONE_TOKEN_WITHIN = 8
_EMPTY_FIELD = re.compile(r'^\s*"content":\s*"",?\s*$')
_ONE_SAMPLED = re.compile(r"\b(?:llama_print_timings|llama_perf_sampler_print):\s+sampl\w+ time\s*=.*?/\s*1 runs?\b")
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
        self._empty_field = 0  # the latest lone '"content": ""' line
        self._one_sampled = 0  # the latest timings line of a single sampled token
        self.found: Finding | None = None

    def feed(self, line: str, lineno: int, secrets: tuple[str, ...] = ()) -> None:
        """One line of the log."""
        if self.found is not None:
            return
        if _EMPTY_FIELD.match(line):
            self._empty_field = lineno
        elif _ONE_SAMPLED.search(line):
            self._one_sampled = lineno
        if self._empty_field and self._one_sampled and abs(self._one_sampled - self._empty_field) <= ONE_TOKEN_WITHIN:
            self.found = Finding(kind=Kind.EMPTY_OUTPUT.value, line=lineno,  # the later of the two lines
                                 text=evidence_text(line.strip(), secrets),
                                 hint=Msg("rule.empty_content_one_sampled_token"), rule=ONE_TOKEN_ID, role="decisive")
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
