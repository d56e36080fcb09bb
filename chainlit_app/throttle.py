"""Failed-login throttling by client address and name, with exponential backoff, in bounded memory.

Throttling by name alone let anyone lock the admin out: the admin's name is predictable, and one wrong
password every 12 s kept the name refused. Here a failure counts against the pair (address, name) and,
more leniently, against the address alone, so an attacker slows only themself: the right password from
another address still works. Records are forgotten a while after their last failure, and the table
holds at most `max_entries` records (least recently used go first), so random names cannot grow it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from cachetools import TTLCache


@dataclass
class _Record:
    failures: int = 0
    blocked_until: float = 0.0


@dataclass(frozen=True)
class ThrottlePolicy:
    free_failures: int = 5  # per (address, name) before the backoff starts
    free_failures_per_address: int = 20  # per address, over all names
    base_delay: float = 1.0  # seconds after the first failure beyond the free ones; doubles each time
    max_delay: float = 900.0
    forget_after: float = 3600.0  # a record with no failure for this long is dropped
    max_entries: int = 10_000


class LoginThrottle:
    """`wait_left` before checking a password, then `failed` or `succeeded` after."""

    def __init__(self, policy: ThrottlePolicy | None = None, clock: Callable[[], float] = time.monotonic):
        self.policy = policy or ThrottlePolicy()
        self._clock = clock
        self._records: TTLCache[tuple[str, str | None], _Record] = TTLCache(
            maxsize=self.policy.max_entries, ttl=self.policy.forget_after, timer=clock)

    def __len__(self) -> int:
        self._records.expire()
        return len(self._records)

    def _keys(self, address: str, name: str) -> tuple[tuple[tuple[str, str | None], int], ...]:
        return ((address, name), self.policy.free_failures), ((address, None), self.policy.free_failures_per_address)

    def wait_left(self, address: str, name: str) -> float:
        """Seconds until this address may try this name again (0: now)."""
        now = self._clock()
        waits = [record.blocked_until - now for key, _ in self._keys(address, name)
                 if (record := self._records.get(key)) is not None]
        return max([0.0, *waits])

    def failed(self, address: str, name: str) -> float:
        """Count a failure; returns the seconds the pair must now wait (0 while failures are free)."""
        now = self._clock()
        for key, free in self._keys(address, name):
            record = self._records.get(key) or _Record()
            record.failures += 1
            beyond = record.failures - free
            if beyond > 0:
                delay = min(self.policy.max_delay, self.policy.base_delay * 2 ** min(beyond - 1, 32))
                record.blocked_until = now + delay
            self._records[key] = record  # (re)setting restarts the record's time to be forgotten
        return self.wait_left(address, name)

    def succeeded(self, address: str, name: str) -> None:
        """A right password clears the pair's record (the address's own count stays)."""
        self._records.pop((address, name), None)
