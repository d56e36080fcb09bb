"""Warnings that a server which went on to serve disproves (`Rule.disproved_by_serving`): one mechanism for the
whole log (`whole_log.py` drops them at its end) and the live tail (`monitor.py` marks them resolved once the
server serves), so that a panel and `classify` agree on a run that served.

torchao's `Skipping import of cpp extensions due to incompatible torch version` names a version mismatch where a log
shows nothing else (a `vllm --help` that printed it), and nothing in a run that then served; a later failure that
names torchao (an op without its kernel) is what the note explains, and keeps it. Bounded: the first eight notes of
a log are kept, and each later finding is compared with them once.
"""

from __future__ import annotations

from .findings import Finding
from .rule_tables import DISPROVED_BY_SERVING

MAX_NOTES = 8


class ServingDisproves:
    """Follows a log's findings in order; `withdrawn()` names the notes to withdraw once the server has served."""

    def __init__(self) -> None:
        self._notes: list[Finding] = []
        self._kept: set[int] = set()  # notes a later finding named: they explain it
        self._gone: set[int] = set()  # notes already withdrawn

    def feed(self, finding: Finding) -> None:
        """One finding, in the log's order."""
        if finding.rule in DISPROVED_BY_SERVING:
            if len(self._notes) < MAX_NOTES:
                self._notes.append(finding)
            return
        text = finding.text.lower()
        for index, note in enumerate(self._notes):
            if finding.line > note.line and DISPROVED_BY_SERVING[note.rule] in text:
                self._kept.add(index)

    def withdrawn(self) -> list[Finding]:
        """The notes no later finding named and not withdrawn before: call once the log shows the server serving."""
        out = [note for index, note in enumerate(self._notes) if index not in self._kept | self._gone]
        self._gone.update(index for index in range(len(self._notes)) if index not in self._kept)
        return out
