"""A P/D-disaggregated decode node that received a request's KV cache, then decodes (almost) nothing for it.

In prefill/decode disaggregation the decode node logs the KV transfer of each request it takes over
(`KV cache transfer for request chatcmpl-… took 885.13 ms`); from then on it only decodes, on an accelerator
(KV connectors move caches between GPUs/NPUs). One stats report says little on its own (`stats.py`: a request
that arrived late in the interval dilutes the average), but when the latest transfer lies a whole stats
interval (vLLM's default: 10 s) before the report, every running request was there for all of it: under one
token a second per request is a decode that stopped (vllm-ascend #13648: decode requests stall for minutes
while /health stays 200). Both lines must carry a clock time; without one nothing is read.
"""

from __future__ import annotations

import re

MECHANISM_ID = "pd_decode_stalled_after_transfer"
STATS_INTERVAL_SECONDS = 10  # vLLM's default log-stats interval
STALLED_TOKENS_PER_REQUEST = 1.0

_TRANSFER = re.compile(r"\bkv cache transfer for request \S+ took\b")
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2}):(\d{2})(?![\d:])")


def clock_seconds(line: str) -> int | None:
    """Seconds since midnight of the first clock time on a line, None without one."""
    found = _CLOCK.search(line)
    if found is None:
        return None
    hours, minutes, seconds = (int(part) for part in found.groups())
    return hours * 3600 + minutes * 60 + seconds


class TransferredDecodeWatch:
    """Remembers when the decode node last took over a request; judges stats reports against it."""

    def __init__(self) -> None:
        self._last_transfer: int | None = None
        self._reported = False

    def observe(self, low: str) -> None:
        """Every line, lower-cased: a KV transfer line with a clock time marks the latest takeover."""
        if "kv cache transfer" in low and _TRANSFER.search(low):
            self._last_transfer = clock_seconds(low)

    def stalled(self, line: str, running: int, waiting: int, prompt_tps: float, gen_tps: float) -> bool:
        """True once when a report a whole interval after the latest transfer shows running requests decoding
        under one token a second each, with nothing waiting and nothing prefilled."""
        if self._reported or self._last_transfer is None or running == 0 or waiting or prompt_tps:
            return False
        now = clock_seconds(line)
        if now is None or (now - self._last_transfer) % 86400 < STATS_INTERVAL_SECONDS:
            return False
        self._reported = gen_tps / running < STALLED_TOKENS_PER_REQUEST
        return self._reported
