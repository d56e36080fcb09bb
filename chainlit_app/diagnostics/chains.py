"""Exception chains: Python prints a cause, a separator, then the exception raised from it.

"The above exception was the direct cause of the following exception:" (`raise … from err`) and "During
handling of the above exception, another exception occurred:" join two tracebacks into one failure. The
separator is not an error of its own (a logger that prefixes every line with ERROR prints it as an ERROR
line, and the blank lines around it too), and a later link that nothing names (no rule, no exception type,
no place) is the consequence of the cause above it: it points back at it, as a wrapper does, instead of
outranking a cause that was named only as a symptom.
"""

from __future__ import annotations

import re

from chainlit_app.i18n import Msg

from .findings import Finding

SEPARATOR = re.compile(r"The above exception was the direct cause of the following exception|"
                       r"During handling of the above exception, another exception occurred")


class ChainLinks:
    """Per process, the exception line of the cause that a separator joined to the next traceback."""

    def __init__(self) -> None:
        self._cause: dict[str, int] = {}

    def separator(self, process: str, cause_line: int) -> None:
        if cause_line and len(self._cause) < 64:
            self._cause[process] = cause_line

    def link(self, process: str, found: list[Finding]) -> list[Finding]:
        """The findings of the traceback that follows a separator: an unnamed one becomes a wrapper."""
        cause = self._cause.pop(process, 0)
        if cause and found and found[0].basis == "phase" and found[0].line != cause:
            found[0].role = "wrapper"
            found[0].points_to = cause
            found[0].hint = Msg("hint.traceback_is_cause", hint=found[0].hint, line=cause)
        return found
