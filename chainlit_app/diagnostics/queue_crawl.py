"""A queue held while decoding crawls on hardware that shows its speed in the same report
(`queue_while_decoding_crawls`).

vLLM's stats report says what the interval did: prompt tokens prefilled, tokens generated, requests running and
waiting. A report that prefilled a thousand prompt tokens a second or more ran on an accelerator (a CPU that
crawls does not prefill thousands a second: the hardware evidence a rate alone lacks, `platforms.py`). When such a
report also shows requests waiting and the running ones getting under two tokens a second each, and the next
report shows the same, the users in the queue and in the batch both see a crawl (Qwen3.5-397B on Blackwell: 3.0 and
9.8 tokens/s for 5 and 8 requests with 30 and 26 waiting). One such report says nothing: a burst of new prompts
fills one interval with prefill. No healthy report of dev shows the shape even once.
"""

from __future__ import annotations

MECHANISM_ID = "queue_while_decoding_crawls"
FAST_PREFILL_TPS = 1000.0  # prompt tokens/s in the same report: the hardware is an accelerator
CRAWL_PER_REQUEST_TPS = 2.0  # generated tokens/s per running request
REPORTS = 2


class QueueCrawl:
    """Counts consecutive reports of the shape; `observe` returns the figures once, when the count is reached."""

    def __init__(self) -> None:
        self._count = 0
        self._reported = False

    def observe(self, running: int, waiting: int, prompt_tps: float, gen_tps: float) -> tuple[float, int, int] | None:
        """Feed one report; (tokens/s, running, waiting) of this report when the pattern completes."""
        crawls = (running > 0 and waiting > 0 and prompt_tps >= FAST_PREFILL_TPS
                  and gen_tps / running < CRAWL_PER_REQUEST_TPS)
        self._count = self._count + 1 if crawls else 0
        if self._count < REPORTS or self._reported:
            return None
        self._reported = True
        return gen_tps, running, waiting
