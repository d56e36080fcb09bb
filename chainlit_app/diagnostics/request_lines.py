"""Request lines in a log: access lines and the engine's per-request bookkeeping.

They show that the server serves, count the chats that succeeded (a bare 400 means something else before
the first success than after it) and reveal clients giving up (a run of aborts in one second). Mixed into
`LineClassifier`, kept apart so that each file holds one concern.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .classifier_part import ClassifierPart
from .events import Access, EventFolder
from .findings import Finding
from .lineformat import parse_line
from .phases import Phase
from .taxonomy import Kind

_MASS_ABORTS = 8


class RequestLines(ClassifierPart):
    """Reading access and request lines; the classifier provides `_finding`, `phase` and this state."""

    _folder: EventFolder
    _chat_ok: int
    _aborts: int
    _abort_second: str

    def _on_access(self, access: Access, text: str) -> list[Finding] | None:
        """Count successful chats and read meaning into bare 400 responses, which vLLM logs without the
        reason (the reason only reaches the client). None: let the rules decide."""
        chat = access.path.startswith("/v1/chat/completions")
        if access.path.startswith("/v1/") and self.phase < Phase.SERVING:
            self._phases.enter(Phase.SERVING)  # any answer from the API, a 500 too: the server was serving
        if access.status == 200:
            self._chat_ok += chat
            return []
        if access.status != 400 or not access.path.startswith(("/v1/chat/completions", "/v1/completions")):
            return None
        if self.phase == Phase.STOPPING:
            return []
        if chat and self._chat_ok == 0:
            hint = Msg("hint.access_400_every_chat")
            return [self._finding(Kind.CHAT_TEMPLATE, access.line, text, hint, "access_400_every_chat", "weak")]
        hint = Msg("hint.access_400")
        return [self._finding(Kind.CONTEXT_LENGTH, access.line, text, hint, "access_400", "weak")]

    def _busy_line(self, raw: str, lineno: int) -> list[Finding]:
        """Successful access lines and request bookkeeping: update the serving state; a run of requests
        aborted in the same second means that clients gave up waiting."""
        self._phases.enter(Phase.SERVING)
        if "aborted request" in raw.lower() and self.phase != Phase.STOPPING:
            second = parse_line(raw).time
            self._aborts = self._aborts + 1 if second and second == self._abort_second else 1
            self._abort_second = second
            if self._aborts == _MASS_ABORTS:
                hint = Msg("hint.mass_aborts", count=_MASS_ABORTS)
                return [self._finding(Kind.SLOW_OR_STALLED, lineno, raw, hint, "mass_aborts", "weak")]
            return []
        self._aborts = 0  # only a run of aborts, one after the other, is a mass abort
        access = self._folder.access(raw, 0)
        if access and access.status == 200 and access.path.startswith("/v1/chat/completions"):
            self._chat_ok += 1
        return []
