"""Figures of one GPU-rate run (N answers at once from the replay upstream to one kind of client).

All times are CLOCK_MONOTONIC (time.perf_counter here, time.monotonic in the upstream), so the
upstream's record of each request and the client's view of it are compared directly:

* first-token overhead: (request arrived at the upstream − question sent) + (first token at the
  client − first token written by the upstream): all the time the app (or client) added, the upstream's
  own first-token delay left out;
* delivered ratio: the span over which the upstream wrote the run's tokens ÷ the span from its first
  token written until the clients had the last one (over all answers); 1.0 keeps up, 0.5 shows the
  text at half the rate (a late first token with the rest on time does not count as faster);
* tail lag: last token at the client − last token written, per answer.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from bench.gpu_clients import Answer, tag_of
from bench.replay_streams import RecordedStream


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@dataclass
class RunFigures:
    client: str
    sessions: int
    rate: float
    answers: int = 0
    failed: int = 0
    wrong_text: int = 0
    tokens: int = 0
    delivered_ratio: float = float("nan")
    overhead_p50_ms: float = float("nan")
    overhead_p95_ms: float = float("nan")
    tail_lag_p95_ms: float = float("nan")
    request_p95_ms: float = float("nan")  # of the overhead: question sent until the upstream has the request
    events_per_answer: float = float("nan")
    updates_per_s: float = float("nan")
    serving_cpu_s: float = 0.0  # the app process (ours or the seed's); the benchmark's client for `direct`
    client_cpu_s: float = 0.0  # the benchmark process (the socket.io clients, or the openai client)
    upstream_cpu_s: float = 0.0
    balancer_cpu_s: float | None = None  # haproxy in front of several app processes
    serving_split: tuple[float, ...] = ()  # CPU s of each app process, when there are several
    database_cpu_s: float | None = None  # PostgreSQL's server processes (the `app-Np` clients' history)
    machine_busy: float = float("nan")  # share of all cores busy (any process) during the run
    rss_peak_mb: float = float("nan")
    errors: tuple[str, ...] = ()

    def per_1k(self, cpu: float) -> float:
        return cpu / self.tokens * 1000 if self.tokens else float("nan")

    @property
    def aggregate_rate(self) -> float:
        return self.sessions * self.rate

    def line(self) -> str:
        return (f"{self.client:>7} {self.sessions:>4} x {self.rate:.0f} tok/s: delivered {self.delivered_ratio:.3f}, "
                f"first-token overhead p50/p95 {self.overhead_p50_ms:.0f}/{self.overhead_p95_ms:.0f} ms "
                f"(request at the upstream p95 {self.request_p95_ms:.0f} ms), "
                f"tail lag p95 {self.tail_lag_p95_ms:.0f} ms, "
                f"CPU s/1k tokens: serving {self.per_1k(self.serving_cpu_s):.3f} "
                f"(bench clients {self.per_1k(self.client_cpu_s):.3f}, "
                f"upstream {self.per_1k(self.upstream_cpu_s):.3f}"
                + (f", haproxy {self.per_1k(self.balancer_cpu_s):.3f}" if self.balancer_cpu_s is not None else "")
                + (f", PostgreSQL {self.per_1k(self.database_cpu_s):.3f}" if self.database_cpu_s is not None else "")
                + (f"; per process {'+'.join(f'{c:.2f}' for c in self.serving_split)} s" if self.serving_split else "")
                + f"; machine busy {self.machine_busy:.0%}"
                + "), "
                f"events/answer {self.events_per_answer:.0f}, updates/s {self.updates_per_s:.0f}, "
                f"RSS peak {self.rss_peak_mb:.0f} MB, {self.tokens} tokens"
                + (f", {self.failed} failed" if self.failed else "")
                + (f", {self.wrong_text} wrong text" if self.wrong_text else ""))


def figures(client: str, sessions: int, rate: float, answers: list[Answer], records: list[dict[str, Any]],
            source: RecordedStream) -> RunFigures:
    out = RunFigures(client, sessions, rate, answers=len(answers))
    by_tag = {tag_of(str(r["question"])): r for r in records}
    overheads: list[float] = []
    requests: list[float] = []
    lags: list[float] = []
    events: list[float] = []
    updates: list[float] = []
    up_first: list[float] = []
    up_last: list[float] = []
    cl_last: list[float] = []
    errors: list[str] = []
    for answer in answers:
        record = by_tag.get(answer.tag)
        if (not answer.completed or record is None or answer.first_at is None or answer.last_at is None
                or record.get("first_sent") is None):
            out.failed += 1
            errors.append(answer.error or ("no upstream request" if record is None else "no tokens"))
            continue
        out.tokens += int(record["tokens"])
        if answer.text != source.text(int(record["tokens"])):
            out.wrong_text += 1
        requests.append(record["received"] - answer.sent_at)
        overheads.append(requests[-1] + (answer.first_at - record["first_sent"]))
        lags.append(answer.last_at - record["last_sent"])
        events.append(answer.events)
        span = answer.last_at - answer.first_at
        if span > 0:
            updates.append(answer.stream_events / span)
        up_first.append(record["first_sent"])
        up_last.append(record["last_sent"])
        cl_last.append(answer.last_at)
    if overheads:
        out.overhead_p50_ms = statistics.median(overheads) * 1000
        out.overhead_p95_ms = percentile(overheads, 0.95) * 1000
        out.tail_lag_p95_ms = percentile(lags, 0.95) * 1000
        out.request_p95_ms = percentile(requests, 0.95) * 1000
        out.events_per_answer = statistics.median(events)
        out.updates_per_s = statistics.median(updates) if updates else float("nan")
        client_span = max(cl_last) - min(up_first)
        upstream_span = max(up_last) - min(up_first)
        out.delivered_ratio = upstream_span / client_span if client_span > 0 else 1.0
    out.errors = tuple(errors[:3])
    return out


def knee(runs: list[RunFigures], limit_ms: float = 100.0) -> tuple[float | None, str]:
    """The aggregate token rate at which first-token p95 overhead passes `limit_ms` (interpolated between
    the measured levels); None with a reason when no level passed it or the first already did."""
    ordered = sorted((r for r in runs if r.answers), key=lambda r: r.aggregate_rate)
    previous: RunFigures | None = None
    for run in ordered:
        if run.overhead_p95_ms > limit_ms or run.failed:
            if previous is None:
                return run.aggregate_rate, f"already at the lowest level ({run.aggregate_rate:.0f} tok/s)"
            low, high = previous.overhead_p95_ms, run.overhead_p95_ms
            share = (limit_ms - low) / (high - low) if high > low and not run.failed else 0.0
            rate = previous.aggregate_rate + share * (run.aggregate_rate - previous.aggregate_rate)
            return rate, (f"between {previous.aggregate_rate:.0f} tok/s (p95 {low:.0f} ms) and "
                          f"{run.aggregate_rate:.0f} tok/s (p95 {high:.0f} ms" + (", failures" if run.failed else "")
                          + ")")
        previous = run
    if previous is None:
        return None, "no run"
    return None, f"not reached up to {previous.aggregate_rate:.0f} tok/s (p95 {previous.overhead_p95_ms:.0f} ms)"
