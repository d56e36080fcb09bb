"""Small statistics for noisy figures: medians and quantiles, never means of a handful of runs."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (q in [0, 1]) of a non-empty sequence."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True)
class Summary:
    """Median with its spread: quartiles and extremes, and how many values."""

    n: int
    median: float
    p25: float
    p75: float
    low: float
    high: float

    def fmt(self, digits: int = 2, unit: str = "") -> str:
        f = f"{{:.{digits}f}}"
        return (f"{f.format(self.median)}{unit} (IQR {f.format(self.p25)}–{f.format(self.p75)}, "
                f"range {f.format(self.low)}–{f.format(self.high)}, n={self.n})")


def summarise(values: Sequence[float]) -> Summary | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return Summary(len(vals), statistics.median(vals), quantile(vals, 0.25), quantile(vals, 0.75), min(vals),
                   max(vals))


class StreamTimes:
    """Timing figures of one streamed answer, shared by the path through the app (`AskResult`) and the
    direct one (`DirectResult`), so both are measured alike. Times are perf_counter values."""

    sent_at: float
    text: str
    first_token_at: float | None
    last_token_at: float | None
    done_at: float | None
    first_chunk_chars: int

    @property
    def first_token_s(self) -> float | None:
        """Seconds from sending the question to the first answer token."""
        return None if self.first_token_at is None else self.first_token_at - self.sent_at

    @property
    def total_s(self) -> float | None:
        """Seconds from sending the question to the end of the answer."""
        return None if self.done_at is None else self.done_at - self.sent_at

    @property
    def stream_s(self) -> float | None:
        """Seconds from the first to the last answer token."""
        if self.first_token_at is None or self.last_token_at is None:
            return None
        return self.last_token_at - self.first_token_at

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def chars_per_s(self) -> float | None:
        """Streaming rate after the first token (characters; the app coalesces tokens on the way)."""
        stream = self.stream_s
        if stream is None or stream <= 0:
            return None
        return (len(self.text) - self.first_chunk_chars) / stream
