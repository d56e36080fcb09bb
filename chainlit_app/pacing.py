"""How often an answer's tokens travel: from vLLM to the app, and from the app to the browser.

Every chunk vLLM streams costs CPU three times on the way (vLLM's API server writes it, the openai
client parses it, the app looks at it) and every UI update costs a socket.io event. On a small machine
that CPU is taken from vLLM's engine. So under load the app coalesces tokens into fewer UI updates, and
asks vLLM (its per-request `stream_interval`) to send tokens in groups no larger than one UI update
would show anyway: the reader sees the same text at the same moments, with fewer chunks in between.
The first token is never held back (vLLM sends it at once whatever the interval).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# One answer alone updates 20 times a second: smooth to a reader (who cannot follow more than 10 to 20 updates
# a second), and the last text still goes out at once. 30 ms (33 a second) cost one session's answer about
# 40 socket.io events and as many parsed chunks for 256 tokens at 200 tokens/s. The first token is never delayed.
FLUSH_SECONDS = 0.05
FLUSH_SECONDS_PER_STREAM = 0.0075  # from 8 answers on, as before: 30 ms for every 4 answers streaming at once
MAX_FLUSH_SECONDS = 0.25  # under heavy load, still 4 updates a second per answer (each then brings 2+ tokens)
MAX_STREAM_INTERVAL = 16
_EMA_WEIGHT = 0.3  # of the newest answer in a load level's token rate
PEAK_HALF_LIFE_SECONDS = 30.0


def flush_interval(streams: int) -> float:
    """Seconds between UI updates of one answer while `streams` answers stream in this process.

    Every update is a socket.io event (a websocket frame, deflate, the browser's work) costing the app
    CPU that vLLM's engine needs on a small machine; with many answers at once, fewer and larger updates
    cost less, and each reader still sees text flow several times a second."""
    return min(MAX_FLUSH_SECONDS, max(FLUSH_SECONDS, FLUSH_SECONDS_PER_STREAM * streams))


def load_level(streams: int) -> int:
    """Streams at once, rounded up to a power of two: answers at about the same load share a rate."""
    return 1 << max(0, math.ceil(math.log2(max(1, streams))))


class StreamPace:
    """Per-answer token rates seen at each load level, and the `stream_interval` they call for.

    The rate of one answer (tokens a second after its first token) falls as more answers share the
    engine, by how much depends on the hardware, so it is learnt from finished answers per load level.
    A level not seen yet borrows the nearest busier level's rate as it is, or else the nearest quieter
    one's scaled down as if the engine were compute bound: the smaller guess either way (smaller groups,
    never coarser updates than the UI's)."""

    def __init__(self, max_interval: int = MAX_STREAM_INTERVAL) -> None:
        self.max_interval = max_interval
        self._rates: dict[int, float] = {}
        self._lock = threading.Lock()
        self._peak = 0.0
        self._peak_at = 0.0
        self._active = 0
        self.last_token_at = -math.inf  # monotonic: tokens flowing prove the engine answers (the monitor's polls)

    @property
    def active(self) -> int:
        """Answers streaming in this process now: the load each of them shares the engine with."""
        return self._active

    @contextmanager
    def streaming(self) -> Iterator[None]:
        """Count one answer as streaming while the block runs; it stops counting however the block ends
        (an error or a cancelled answer included), or every later answer would be paced for ghosts."""
        with self._lock:
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1

    def expected_load(self, streams: int, now: float | None = None) -> int:
        """Streams an answer starting now will share the engine with. When many questions come at once,
        the first of them sees few streams yet; a recent peak (halving every 30 s) says more."""
        now = time.monotonic() if now is None else now
        with self._lock:
            decayed = self._peak * 0.5 ** ((now - self._peak_at) / PEAK_HALF_LIFE_SECONDS)
            if streams >= decayed:
                self._peak, self._peak_at = float(streams), now
                return streams
            return max(streams, round(decayed))

    def record(self, streams: int, tokens: int | None, first_to_last_seconds: float | None) -> None:
        """One finished answer: `tokens` generated, the last arriving this long after the first."""
        if not tokens or tokens < 2 or not first_to_last_seconds or first_to_last_seconds <= 0:
            return
        rate = (tokens - 1) / first_to_last_seconds
        level = load_level(streams)
        with self._lock:
            old = self._rates.get(level)
            self._rates[level] = rate if old is None else (1 - _EMA_WEIGHT) * old + _EMA_WEIGHT * rate

    def rate(self, streams: int) -> float | None:
        """Expected tokens a second of one answer while `streams` answers stream; None before any answer."""
        level = load_level(streams)
        with self._lock:
            if level in self._rates:
                return self._rates[level]
            higher = [seen for seen in self._rates if seen > level]
            if higher:  # less load: at least as fast as the nearest busier level
                return self._rates[min(higher)]
            lower = [seen for seen in self._rates if seen < level]
            if not lower:
                return None
            nearest = max(lower)
            return self._rates[nearest] * nearest / level

    def stream_interval(self, streams: int) -> int:
        """Tokens per chunk to ask of vLLM: what one UI update would gather at the expected rate."""
        rate = self.rate(streams)
        if rate is None:
            return 1
        return max(1, min(self.max_interval, int(rate * flush_interval(streams))))

    def snapshot(self) -> dict[str, object]:
        """For the diagnostics panel (and the bench): what was learnt and the groups asked for per load."""
        with self._lock:
            levels = sorted(self._rates)
            rates = {str(level): round(self._rates[level], 1) for level in levels}
        return {"max_interval": self.max_interval, "tokens_per_s": rates,
                "stream_interval": {level: self.stream_interval(int(level)) for level in rates}}
