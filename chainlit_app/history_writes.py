"""How the history's SQL runs: "database is locked" retried with backoff, and a failure that stays
reported, never swallowed (no Chainlit).

Chainlit's data layer turns every failed statement into a log warning and goes on: a message that could
not be stored leaves a silent gap in the thread. Here a busy SQLite file (another process or connection
holds the write lock) is retried with exponential backoff (tenacity); what still fails is logged and
handed to `on_failure`, which the app turns into an admin finding (`Kind.HISTORY_WRITE_FAILED`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.exc import DBAPIError
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

log = logging.getLogger(__name__)
T = TypeVar("T")

OnFailure = Callable[[str, str], None]  # (what was being done, the database's error), both without user text
OnRecovered = Callable[[], None]  # the first write that succeeds after a reported failure


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts and backoff for a locked database; with SQLite's own 1 s busy wait per attempt, the
    default gives a lock holder about 10 s before a write is given up."""

    attempts: int = 6
    first_wait: float = 0.2
    max_wait: float = 2.0
    sqlite_busy_timeout: float = 1.0


DEFAULT_RETRY = RetryPolicy()


def is_locked(exc: BaseException) -> bool:
    """SQLite's "database is locked" / "database table is locked" / "database is busy"."""
    text = str(getattr(exc, "orig", None) or exc).lower()
    return "database is locked" in text or "is busy" in text or "table is locked" in text


def describe_failure(exc: BaseException) -> str:
    """The database's own words, without the statement and its parameters (they hold users' text)."""
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    return f"{type(cause).__name__}: {str(cause).splitlines()[0][:300] if str(cause) else ''}".rstrip(": ")


def operation(query: str) -> str:
    """'INSERT INTO steps' for a statement: what was being done, without any value."""
    words = query.split()
    return " ".join(words[:3]) if words and words[0].upper() in ("INSERT", "DELETE") else " ".join(words[:2])


async def with_retry(run: Callable[[], Awaitable[T]], policy: RetryPolicy) -> T:
    """`run()`, again after a backoff while the database is locked; the last error is raised."""
    retrying = AsyncRetrying(
        retry=retry_if_exception(is_locked),
        stop=stop_after_attempt(policy.attempts),
        wait=wait_exponential(multiplier=policy.first_wait, max=policy.max_wait),
        reraise=True,
        before_sleep=lambda state: log.info("history database locked (attempt %d); retrying", state.attempt_number),
    )
    async for attempt in retrying:
        with attempt:
            return await run()
    raise AssertionError("unreachable: tenacity returns or raises")


def call_quietly(callback: Callable[[], None] | None) -> None:
    """A report must never break the chat."""
    if callback is not None:
        try:
            callback()
        except Exception:
            log.exception("reporting a history recovery failed")


def report_failure(query: str, exc: BaseException, on_failure: OnFailure | None) -> None:
    what, error = operation(query), describe_failure(exc)
    log.error("chat history: %s failed: %s", what, error)
    if on_failure is not None:
        try:
            on_failure(what, error)
        except Exception:  # the report must never break the chat
            log.exception("reporting a history failure failed")
