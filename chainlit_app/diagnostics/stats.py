"""vLLM's periodic stats lines ('Avg prompt throughput ... Running: N reqs, Waiting: M reqs') and the
shared-memory wait message: queues that do not move and engines that stopped making progress.

Single stats lines say nothing; patterns over several do. `StallWatch` counts how long each pattern
has lasted and reports an episode once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chainlit_app.i18n import Msg

from .pd_decode_stall import MECHANISM_ID as PD_DECODE_STALLED
from .pd_decode_stall import TransferredDecodeWatch
from .platforms import PlatformWatch
from .prefill_starvation import MECHANISM_ID as DECODE_BEHIND_PREFILL
from .prefill_starvation import PrefillStarvation
from .queue_crawl import MECHANISM_ID as QUEUE_WHILE_CRAWLING
from .queue_crawl import QueueCrawl
from .rules_quiet_signs import one_request_fills_cache

_STAT_RUNNING = re.compile(r"Running: (\d+) reqs")
_STAT_WAITING = re.compile(r"(?:Waiting|Pending): (\d+) reqs")
_STAT_PROMPT = re.compile(r"Avg prompt throughput: ([\d.]+)")
_STAT_GEN = re.compile(r"(?:Avg generation t|\bT)hroughput: ([\d.]+) tokens/s")
_STAT_ENGINE = re.compile(r"\bEngine (\d+):")
_CORE_INDEX = re.compile(r"EngineCore_(?:DP)?(\d+)")
_STAT_KV = re.compile(r"(?:GPU|CPU)? ?KV cache usage: ([\d.]+)%")
# Where one report begins: a paste may fuse two reports on one line ('…usage: 0.0%.INFO 01-02 16:17:07 …')
_REPORT_START = re.compile(r"(?=Avg prompt throughput:)")
# A decoding request on an accelerator gets ten tokens a second or more even for the largest models (the
# healthy corpus's slowest pure-decoding report: 14.5 tokens/s for one request); a CPU decodes at 0.5-5
# (an IBM Z at 1.2, a large model slower still). No rate is slow without the hardware: the stats lines say 'GPU
# KV cache' on a CPU server too, so the reading asks the log for an accelerator (`platforms.py`)
SLOW_DECODE_PER_REQUEST = 5.0
SLOW_DECODE_REPORTS = 2


@dataclass(frozen=True)
class StallSignal:
    """A stall pattern that lasted long enough: which rule it is, the hint and how much it says."""

    rule: str
    hint: str
    role: str
    line: int = 0  # where it was seen, for a signal held until the log shows its hardware
    text: str = ""


class StallWatch:
    """Counts stall patterns across consecutive stats lines."""

    def __init__(self) -> None:
        self._waiting_idle = 0
        self._crawling = 0
        self._no_tokens = 0
        self._queue_stuck = 0
        self._decode_starved = 0
        self._stall_reported = False
        self._shm_waits = 0
        self._kv_full = 0
        self._slow_decode = 0  # consecutive pure-decoding reports on an accelerator under SLOW_DECODE_PER_REQUEST
        self._queue_free_reported = False
        self._one_fills_reported = False
        self._holds_work: set[int] = set()  # engine indexes whose core said it holds a request
        self._prefill_starvation = PrefillStarvation()
        self._queue_crawl = QueueCrawl()
        self.platform = PlatformWatch()  # fed every line by the classifier (`observe`)
        self._transfers = TransferredDecodeWatch()
        self._held: list[StallSignal] = []  # slow decoding seen before the log showed its hardware

    def observe(self, low: str) -> None:
        """Every line, lower-cased: the hardware it shows, a decode node's KV transfers."""
        self.platform.observe(low)
        self._transfers.observe(low)

    def reset(self) -> None:
        """A new server life begins."""
        self._shm_waits = 0

    def stats(self, msg: str, stopping: bool, where: tuple[int, str] = (0, "")) -> list[StallSignal] | None:
        """None when `msg` is no stats line; else what it shows (possibly nothing). Reports fused on one line
        are read one after the other. Slow decoding is said only on an accelerator; before the log showed its
        hardware it is held (`held`), on a CPU dropped."""
        reports = [part for part in _REPORT_START.split(msg) if part.strip()]
        if len(reports) < 2 or not all(_STAT_GEN.search(part) for part in reports):
            found = self._report(msg, stopping, where[1])
        else:
            found = [signal for part in reports for signal in self._report(part, stopping, where[1]) or []]
        if found is None or self.platform.accelerator:
            return found
        slow = [s for s in found if s.rule == "stats_slow_decode"]
        if slow and not self.platform.cpu and not self._held:
            self._held.append(StallSignal(slow[0].rule, slow[0].hint, slow[0].role, *where))
        return [s for s in found if s.rule != "stats_slow_decode"]

    def held(self) -> list[StallSignal]:
        """At the end of a log: slow decoding held for want of hardware evidence, said if an accelerator and no
        CPU showed later."""
        held, self._held = self._held, []
        return held if self.platform.accelerator else []

    def _report(self, msg: str, stopping: bool, text: str = "") -> list[StallSignal] | None:
        gen = _STAT_GEN.search(msg)
        if gen is None:
            return None
        gen_tps = float(gen.group(1))
        prompt_tps = float(m.group(1)) if (m := _STAT_PROMPT.search(msg)) else 0.0
        running = int(m.group(1)) if (m := _STAT_RUNNING.search(msg)) else 0
        waiting = int(m.group(1)) if (m := _STAT_WAITING.search(msg)) else 0
        if gen_tps > 0:
            self._shm_waits = 0
        found = self._kv_cache_full(msg, waiting)
        # a single answer that never stops fills the cache while only decoding: the freeze (a prompt being
        # prefilled holds its own blocks, and a long one may fill the cache: round 25's forum log was healthy)
        if running == 1 and prompt_tps == 0 and not stopping and one_request_fills_cache(msg) \
                and not self._one_fills_reported:
            self._one_fills_reported = True
            found.append(StallSignal("one_request_fills_kv_cache", Msg("rule.one_request_fills_kv_cache"),
                                     "decisive"))
        engine = int(m.group(1)) if (m := _STAT_ENGINE.search(msg)) else 0
        if engine in self._holds_work and running + waiting == 0 and gen_tps == 0 and prompt_tps == 0 \
                and not stopping:
            found.append(StallSignal("unfinished_not_scheduled", Msg("hint.unfinished_not_scheduled"), "weak"))
        self._holds_work.discard(engine)
        found += self._queue_beside_free_cache(msg, running, waiting, prompt_tps, gen_tps)
        found += self._slow_decoding(msg, running, waiting, prompt_tps, gen_tps, stopping)
        if not stopping and self._transfers.stalled(text or msg, running, waiting, prompt_tps, gen_tps):
            hint = Msg("hint.pd_decode_stalled_after_transfer", tps=f"{gen_tps:g}", running=running)
            found.append(StallSignal(PD_DECODE_STALLED, hint, "weak"))
        if (crawled := self._prefill_starvation.observe(running, prompt_tps, gen_tps)) is not None:
            hint = Msg("hint.decode_behind_prefill", running=crawled[0], tps=f"{crawled[1]:g}",
                       prompt_tps=f"{prompt_tps:g}")
            found.append(StallSignal(DECODE_BEHIND_PREFILL, hint, "weak"))
        if (crawl := self._queue_crawl.observe(running, waiting, prompt_tps, gen_tps)) is not None and not stopping:
            hint = Msg("hint.queue_while_decoding_crawls", tps=f"{crawl[0]:g}", running=crawl[1], waiting=crawl[2],
                       prompt_tps=f"{prompt_tps:g}")
            found.append(StallSignal(QUEUE_WHILE_CRAWLING, hint, "weak"))
        reason = self._stall_reason(running, waiting, gen_tps, prompt_tps)
        if reason and not self._stall_reported and not stopping:
            self._stall_reported = True
            hint = Msg("hint.stats_stalled", reason=reason)
            found.append(StallSignal("stats_stalled", hint, "decisive"))
        return found

    def _stall_reason(self, running: int, waiting: int, gen_tps: float, prompt_tps: float) -> Msg | None:
        busy = running + waiting > 0
        self._waiting_idle = self._waiting_idle + 1 if running == 0 and waiting > 0 else 0
        self._no_tokens = self._no_tokens + 1 if busy and gen_tps == 0 and prompt_tps == 0 else 0
        self._queue_stuck = self._queue_stuck + 1 if waiting > 0 and prompt_tps == 0 else 0
        # decoding only, yet under one token a second per running request: a GPU does hundreds
        crawling = running > 0 and prompt_tps == 0 and 0 < gen_tps < running
        self._crawling = self._crawling + 1 if crawling else 0
        # a queue, prefills admitted, yet the running requests get no token: decoding starves behind prefills
        starved = running > 0 and waiting > 0 and prompt_tps > 0 and gen_tps == 0
        self._decode_starved = self._decode_starved + 1 if starved else 0
        if not (self._waiting_idle or self._no_tokens or self._queue_stuck or self._crawling or self._decode_starved):
            self._stall_reported = False  # the episode is over; a new one may be reported
        # requests wait while none runs: a scheduler that admits nothing; at 0 tokens/s one report shows it
        if self._waiting_idle >= 2 or (self._waiting_idle and gen_tps == 0 and prompt_tps == 0):
            return Msg("reason.waiting_idle", waiting=waiting)
        if self._no_tokens >= 3:
            return Msg("reason.no_tokens", running=running, waiting=waiting)
        if self._queue_stuck >= 3:
            return Msg("reason.queue_stuck", waiting=waiting)
        if self._crawling >= 3:
            return Msg("reason.crawling", running=running, tps=f"{gen_tps:g}")
        if self._decode_starved >= 2:
            return Msg("reason.decode_starved", running=running, waiting=waiting)
        return None

    def holds_work(self, msg: str, process: str) -> None:
        """The engine core's debug line 'loop active - local unfinished: True': it holds a request. The next
        stats report of that engine ('Engine 000' for EngineCore_0 / EngineCore_DP0) must count it (running,
        waiting) or its tokens; one showing nothing at all lost it."""
        if "unfinished: True" in msg:
            m = _CORE_INDEX.search(process)
            self._holds_work.add(int(m.group(1)) if m else 0)

    def shm_wait(self, serving: bool) -> StallSignal | None:
        """'No available shared memory broadcast block found in 60 seconds': a process did not take its work
        for a minute. The time-consuming work that explains it harmlessly (compilation, weight or KV cache
        quantization, as the message itself lists) happens at start-up; while serving, or in an excerpt
        that shows no phase at all, it is a hang (vLLM's maintainers reworded it to say so, PR #25566).
        Reported once per episode: tokens flowing again end it."""
        if not serving:
            return None
        self._shm_waits += 1
        if self._shm_waits != 1:
            return None
        hint = Msg("hint.shm_broadcast_stall")
        return StallSignal("shm_broadcast_stall", hint, "weak")

    def _queue_beside_free_cache(self, msg: str, running: int, waiting: int, prompt_tps: float, gen_tps: float
                                 ) -> list[StallSignal]:
        """Steps complete (tokens are generated) yet for a whole report no waiting request was admitted while
        the KV cache is almost empty: memory does not hold them back, a limit does (--max-num-seqs,
        --max-loras, a stuck scheduler). A single long step (a big prefill on a CPU) generates nothing and
        stays quiet. Once per episode."""
        m = _STAT_KV.search(msg)
        if m is None or running == 0 or waiting == 0 or prompt_tps > 0 or gen_tps == 0 or float(m.group(1)) >= 10.0:
            self._queue_free_reported = self._queue_free_reported and waiting > 0
            return []
        if self._queue_free_reported:
            return []
        self._queue_free_reported = True
        hint = Msg("hint.queue_beside_free_cache", waiting=waiting, running=running, usage=m.group(1))
        return [StallSignal("queue_beside_free_cache", hint, "weak")]

    def _slow_decoding(self, msg: str, running: int, waiting: int, prompt_tps: float, gen_tps: float,
                       stopping: bool) -> list[StallSignal]:
        """Reports that only decode (no prompt prefilled, nothing waiting, requests running through the whole
        interval) at under five tokens a second per running request, twice in a row: decoding crawls
        (`stats_slow_decode`, weak), if the hardware is an accelerator (`stats` asks). One report says nothing
        (a request that arrived late in the interval, or after an idle spell, dilutes the average, and its
        interval shows the prefill). Once per episode."""
        pure_decode = running > 0 and waiting == 0 and prompt_tps == 0 and gen_tps > 0
        slow = pure_decode and gen_tps / running < SLOW_DECODE_PER_REQUEST
        self._slow_decode = self._slow_decode + 1 if slow else 0
        if self._slow_decode != SLOW_DECODE_REPORTS or stopping:
            return []
        hint = Msg("hint.stats_slow_decode", tps=f"{gen_tps:g}", running=running)
        return [StallSignal("stats_slow_decode", hint, "weak")]

    def _kv_cache_full(self, msg: str, waiting: int) -> list[StallSignal]:
        """A KV cache at >= 98 % for two reports (or 99 % with a queue) forces queueing and preemption."""
        m = _STAT_KV.search(msg)
        usage = float(m.group(1)) if m else 0.0
        self._kv_full = self._kv_full + 1 if usage >= 98.0 else 0
        if self._kv_full == 2 or (self._kv_full == 1 and usage >= 99.0 and waiting > 0):
            self._kv_full = 3  # report once per episode
            hint = Msg("hint.kv_cache_full", usage=f"{usage:g}")
            return [StallSignal("kv_cache_full", hint, "weak")]
        return []
