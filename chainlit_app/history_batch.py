"""History writes that arrive together share one transaction (no Chainlit).

Chainlit's data layer runs every statement in a transaction of its own: with many questions at once
(each writes its thread, its question, the chat's queued messages, then its answer) that is dozens of
sessions, commits and thread hand-offs on the event loop the answers stream through, and on SQLite
writers that wait for each other's lock. Here a write joins a queue; one writer takes everything queued
and runs it in one transaction, in order, and each caller's `await` returns once its own statement is
committed (so a saved answer is stored when `await` returns, as before). A failed batch is run again one
statement at a time, so each failure is retried and reported on its own and the rest is still stored.
A read first waits for the writes queued before it, so it sees them. A batch waits 20 ms for company:
questions that arrive together get their requests out before their history is written. (Holding the
writes until the burst's first tokens were shown measured within the noise of this machine and would
leave a question unstored for up to a second: not done, docs/PERFORMANCE.md.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Statement = tuple[str, dict[Any, Any]]
Result = list[dict[str, Any]] | int | None
RunMany = Callable[[list[Statement]], Awaitable[list[Result]]]  # all in one transaction, or raise
RunOne = Callable[[Statement], Awaitable[Result]]  # with its own retries and failure report; never raises

MAX_BATCH = 200  # statements per transaction
WINDOW_SECONDS = 0.02  # writes wait this long for company: questions arriving together send their requests first


def is_write(query: str) -> bool:
    word = query.lstrip().split(None, 1)[0].upper() if query.strip() else ""
    return word in ("INSERT", "UPDATE", "DELETE")


@dataclass
class _Pending:
    statement: Statement
    done: asyncio.Future[Result] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class WriteBatcher:
    """One writer per data layer; `submit` from any coroutine of the loop."""

    def __init__(self, run_many: RunMany, run_one: RunOne, window: float = WINDOW_SECONDS) -> None:
        self._run_many = run_many
        self._window = window
        self._run_one = run_one
        self._queue: list[_Pending] = []
        self._writer: asyncio.Task[None] | None = None
        self.batches = 0
        self.statements = 0

    async def submit(self, query: str, values: dict[Any, Any]) -> Result:
        pending = _Pending((query, values))
        self._queue.append(pending)
        loop = asyncio.get_running_loop()
        if self._writer is None or self._writer.done() or self._writer.get_loop() is not loop:
            self._writer = asyncio.create_task(self._drain(), name="history-writer")
        return await asyncio.shield(pending.done)  # a cancelled caller does not cancel the others' batch

    async def idle(self) -> None:
        """Wait until every write queued so far is committed (or given up)."""
        while (self._writer is not None and not self._writer.done()
               and self._writer.get_loop() is asyncio.get_running_loop()):
            with contextlib.suppress(Exception):
                await asyncio.shield(self._writer)

    async def _drain(self) -> None:
        try:
            await self._drain_queue()
        except BaseException as exc:  # shutting down: no caller may wait for ever
            for pending in self._queue:
                if not pending.done.done():
                    pending.done.set_exception(exc if isinstance(exc, Exception) else RuntimeError("writer stopped"))
            self._queue = []
            raise

    async def _drain_queue(self) -> None:
        while self._queue:
            await asyncio.sleep(self._window)  # the writes made meanwhile join the batch
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            self.batches += 1
            self.statements += len(batch)
            try:
                results = await self._run_many([p.statement for p in batch])
            except Exception:  # one by one: each is retried and reported alone, the others are stored
                for pending in batch:
                    result = await self._run_one(pending.statement)
                    if not pending.done.done():
                        pending.done.set_result(result)
                continue
            for pending, result in zip(batch, results, strict=True):
                if not pending.done.done():
                    pending.done.set_result(result)
