"""Decoding starved behind a long prefill, read from two consecutive stats reports (`decode_behind_prefill`).

A report in which requests run, no prompt was prefilled and all of them together got under one token a
second, followed at once by a report whose prompt throughput is in the thousands: the same hardware prefilled
tens of thousands of tokens in the next interval, so it is not too weak to decode. The first interval was that
long prefill in progress (a prompt is counted once its prefill completes) and the running requests waited
behind it, a token a second at most, which is what their users see as a stall. The second report is the
hardware evidence a rate alone lacks (`platforms.py`): a CPU that decodes under one token a second cannot
prefill thousands a second. One crawling report without a big prefill after it says nothing (a request that
arrived late dilutes the average); reported once per log.
"""

from __future__ import annotations

MECHANISM_ID = "decode_behind_prefill"
CRAWL_TOTAL_TPS = 1.0  # all running requests together, tokens/s
LONG_PREFILL_TPS = 1000.0  # prompt tokens/s in the next report: a prefill of 10k+ tokens in one interval


class PrefillStarvation:
    """Remembers the previous stats report's shape; `observe` is True once when the pattern completes."""

    def __init__(self) -> None:
        self._crawled: tuple[int, float] | None = None  # (running, generation tokens/s) of a crawling report
        self._reported = False

    def observe(self, running: int, prompt_tps: float, gen_tps: float) -> tuple[int, float] | None:
        """Feed one report; the crawling report's (running, tokens/s) when this report completes the pattern."""
        crawled, self._crawled = self._crawled, None
        if running > 0 and prompt_tps == 0 and 0 < gen_tps < CRAWL_TOTAL_TPS:
            self._crawled = (running, gen_tps)
            return None
        if crawled is None or self._reported or prompt_tps < LONG_PREFILL_TPS:
            return None
        self._reported = True
        return crawled
