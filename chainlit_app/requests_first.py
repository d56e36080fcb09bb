"""Questions get their request out and their first token shown before the history writes (no Chainlit).

When many questions arrive at once (a class, a demo, a page of tabs reconnecting), one event loop handles
them one after another; every history batch it runs in between (each question writes its thread, itself,
the chat's queued messages) pushes the last question's request and first token later. The history
writer therefore holds its batch while a question has not yet had its first token shown, for at most
`max_hold` seconds, so a steady stream of questions delays a write by that much and never starves it.
Nothing is dropped: the writes are committed a little later, in the same order.
"""

from __future__ import annotations

import asyncio
import contextlib

MAX_HOLD_SECONDS = 1.0


class Opening:
    """One question between its arrival and its first token; `done()` may be called more than once."""

    def __init__(self, owner: RequestsFirst) -> None:
        self._owner: RequestsFirst | None = owner

    def done(self) -> None:
        if self._owner is not None:
            self._owner._left()
            self._owner = None


class RequestsFirst:
    """Counts the questions that have no first token yet; `quiet()` waits until there are none."""

    def __init__(self, max_hold: float = MAX_HOLD_SECONDS) -> None:
        self.max_hold = max_hold
        self._opening = 0
        self._quiet = asyncio.Event()
        self.holds = 0  # how often a history batch waited (for the benchmark's and the tests' eyes)

    @property
    def opening(self) -> int:
        return self._opening

    def begin(self) -> Opening:
        self._opening += 1
        return Opening(self)

    def _left(self) -> None:
        self._opening -= 1
        if self._opening <= 0:
            self._opening = 0
            self._quiet.set()

    async def quiet(self) -> None:
        """Return once every question has had its first token, or after `max_hold` seconds."""
        if not self._opening:
            return
        self.holds += 1
        self._quiet.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._quiet.wait(), self.max_hold)
