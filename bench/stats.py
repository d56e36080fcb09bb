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
