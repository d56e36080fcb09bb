"""What each part of the line classifier (printed answers, request lines, the traceback ladder) asks of the
`LineClassifier` it is mixed into: the phase of the server's life and a finding built with its evidence.
"""

from __future__ import annotations

from .findings import Finding
from .phases import Phase, PhaseTracker
from .taxonomy import Kind


class ClassifierPart:
    """A mixin of `LineClassifier`; the classifier provides `_finding` and the phase tracker."""

    _phases: PhaseTracker

    @property
    def phase(self) -> Phase:
        return self._phases.phase

    def _finding(self, kind: Kind | str, lineno: int, text: str, hint: str, rule: str, role: str,
                 basis: str = "rule") -> Finding:
        raise NotImplementedError
