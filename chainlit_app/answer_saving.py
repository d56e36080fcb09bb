"""A streaming answer written to the history from its first token, and again every few seconds.

Chainlit stores a streamed message only when `send()` ends it: a crash, an OOM kill or a redeploy in the
middle of an answer would lose all of it. Here the sink that shows tokens also saves the text so far
(with a note that it is unfinished) at the first token and then at most every `interval` seconds, one write
at a time, off the stream's path; the final `send()` overwrites it with the whole answer. A resumed
thread of a killed app therefore shows the answer up to a few seconds before the kill, marked as
interrupted (`note("unfinished")`, which `without_notes` removes before the model sees it again).
The same sink turns an answer heavy with markdown markup into text before it can stall the page (answer_markup.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import chainlit as cl
from chainlit.data import get_data_layer
from chainlit.utils import utc_now

from chainlit_app.answer_markup import DEFAULT_BOUND, MarkupBudget
from chainlit_app.cleaning import clean_text
from chainlit_app.conversation import note, with_note

log = logging.getLogger(__name__)

SAVE_INTERVAL = 3.0


class AnswerSaver:
    """The sink of one answer: shows each (cleaned) piece and saves the text so far now and then."""

    def __init__(self, message: cl.Message, interval: float = SAVE_INTERVAL,
                 clock: Callable[[], float] = time.monotonic, markup_limit: int = DEFAULT_BOUND) -> None:
        self.message = message
        self.markup = MarkupBudget(markup_limit)
        self.interval = interval
        self.saves = 0
        self._clock = clock
        self._last_save: float | None = None
        self._pending: asyncio.Task[None] | None = None

    async def __call__(self, piece: str) -> None:
        piece = clean_text(piece)  # what is shown is what is stored
        if not piece:
            return
        if self.message.created_at is None:
            self.message.created_at = utc_now()  # the answer's place in the thread: after its question
        if self.markup.add(piece) and self.message.language is None:
            # as text from here on: with streaming off, the next stream_token sends the whole message again,
            # language included, and the page replaces what it showed (a single extra message, no extra write)
            self.message.language = "text"
            self.message.streaming = False
            log.info("answer %s shown as text: %d markdown delimiters, over %d", self.message.id,
                     self.markup.count, self.markup.bound)
        await self.message.stream_token(piece)
        now = self._clock()
        if self._last_save is None or now - self._last_save >= self.interval:
            self._save(now)

    def _save(self, now: float) -> None:
        if self._pending is not None and not self._pending.done():
            return  # the last write is still going; the next piece tries again
        layer = get_data_layer()
        if layer is None:
            return
        step = self.message.to_dict()
        step["output"] = with_note(self.message.content, note("unfinished"))
        step["streaming"] = False
        self._last_save = now
        self.saves += 1
        self._pending = asyncio.create_task(layer.update_step(step), name="save-partial-answer")

    async def settle(self) -> None:
        """Wait for the write in flight, so that the final `send()` is the last word on this answer."""
        if self._pending is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._pending)
            self._pending = None
