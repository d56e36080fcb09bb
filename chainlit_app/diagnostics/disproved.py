"""Warnings that a server which went on to serve disproves (`Rule.disproved_by_serving`): one mechanism for the
whole log (`whole_log.py` drops them at its end) and the live tail (`monitor.py` marks them resolved once the
server serves, and opens them again if a later failure names what they were about), so that a panel and `classify`
agree on a run that served.

torchao's `Skipping import of cpp extensions due to incompatible torch version` names a version mismatch where a log
shows nothing else (a `vllm --help` that printed it), and nothing in a run that then served; a later failure that
names torchao (an op without its kernel) is what the note explains, and keeps it. A rule's notes go together: the
panel shows them as one entry. Bounded: the first 32 notes of a log are followed (a file that several launches
append to may hold more; the later ones are then shown as the tail reads them), each later finding compared with
them once.
"""

from __future__ import annotations

from .findings import Finding
from .rule_tables import DISPROVED_BY_SERVING

MAX_NOTES = 32


class ServingDisproves:
    """Follows a log's findings in order; `withdrawn()` names the notes to withdraw once the server has served,
    `reinstated()` those withdrawn that a later failure then named."""

    def __init__(self) -> None:
        self._notes: list[Finding] = []
        self._kept: set[int] = set()  # notes a later finding named: they explain it
        self._gone: set[int] = set()  # notes withdrawn
        self._back: list[Finding] = []  # withdrawn, then named

    def feed(self, finding: Finding) -> None:
        """One finding, in the log's order."""
        if finding.rule in DISPROVED_BY_SERVING:
            if len(self._notes) < MAX_NOTES:
                self._notes.append(finding)
            return
        text = finding.text.lower()
        for index, note in enumerate(self._notes):
            if index not in self._kept and finding.line > note.line and DISPROVED_BY_SERVING[note.rule] in text:
                self._kept.add(index)
                if index in self._gone:
                    self._back.append(note)

    def withdrawn(self) -> list[Finding]:
        """The notes to withdraw now: call once the log shows the server serving. None of a rule while one of its
        notes is kept."""
        kept_rules = {self._notes[index].rule for index in self._kept}
        fresh = [index for index, note in enumerate(self._notes)
                 if index not in self._kept and index not in self._gone and note.rule not in kept_rules]
        self._gone.update(fresh)
        return [self._notes[index] for index in fresh]

    def reinstated(self) -> list[Finding]:
        """Notes withdrawn before a later failure named what they were about: they explain it after all."""
        back, self._back = self._back, []
        return back
