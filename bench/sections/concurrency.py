"""Figure 2: concurrency. N sessions ask at the same moment, through the app and straight to the same
vLLM; aggregate characters per second (first question sent until the last token arrives), side by side.
Also samples the app's RSS while 32 sessions are active (figure 5)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

import httpx
import openai
import psutil

from bench.apps import CHAT_USER, AppServer, BareVllm
from bench.chainlit_client import ChainlitSession, login
from bench.direct import stream_direct
from bench.report import Row
from bench.sections import Context
from bench.sections.streaming import PROMPT, chat_params
from bench.stats import summarise
from chainlit_app.engine.http import parse_metrics

T = TypeVar("T")

SECTION = "2 concurrency"
LEVELS = (1, 4, 16, 32)


async def _sample_rss(app: AppServer, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        with contextlib.suppress(Exception):
            peak[0] = max(peak[0], app.rss_bytes())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.2):
                await stop.wait()


async def through_app(app: AppServer, cookies: dict[str, str], n: int, max_tokens: int,
                      rss_peak: list[int] | None = None) -> tuple[float, int, list[str]]:
    """(chars/s aggregate, chars, errors) for n sessions asking at once."""
    sessions = [ChainlitSession(app.url, CHAT_USER, cookies=cookies, connect_timeout=120) for _ in range(n)]
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample_rss(app, rss_peak, stop)) if rss_peak is not None else None
    try:
        await asyncio.gather(*(s.connect() for s in sessions))
        await asyncio.gather(*(s.update_settings({"max_tokens": max_tokens}) for s in sessions))
        started = time.perf_counter()
        results = await asyncio.gather(*(s.ask(PROMPT, timeout=600) for s in sessions))
    finally:
        stop.set()
        if sampler is not None:
            await sampler
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    ends = [r.last_token_at for r in results if r.last_token_at is not None]
    chars = sum(r.chars for r in results)
    errors = [r.error or "no tokens" for r in results if not r.completed or r.last_token_at is None]
    span = (max(ends) - started) if ends else float("inf")
    return chars / span, chars, errors


async def direct(client: openai.AsyncOpenAI, model: str, n: int, max_tokens: int,
                 max_model_len: int, stream_interval: int = 1) -> tuple[float, int, float]:
    """(chars/s aggregate, chars, tokens/s aggregate) for n streams at once."""
    params = chat_params(max_tokens, max_model_len)
    started = time.perf_counter()
    results = await asyncio.gather(*(stream_direct(client, model, PROMPT, params, stream_interval)
                                     for _ in range(n)))
    ends = [r.last_token_at for r in results if r.last_token_at is not None]
    span = (max(ends) - started) if ends else float("inf")
    chars = sum(r.chars for r in results)
    tokens = sum(r.completion_tokens or 0 for r in results)
    return chars / span, chars, tokens / span


def _cpu(pid: int) -> float:
    """User + system CPU seconds of one process (0 when it is gone)."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system)


def _group_cpu(bare: BareVllm) -> float:
    process = bare.supervisor.process
    return sum(_cpu(p.pid) for p in process.group_members()) if process is not None else 0.0


async def _generated(bare: BareVllm) -> float:
    """vLLM's own count of generated tokens (Prometheus), to count tokens the app's stream coalesced."""
    async with httpx.AsyncClient(timeout=5.0) as http:
        return parse_metrics((await http.get(bare.supervisor.base_url + "/metrics")).text).generation_tokens_total


@dataclass
class Cost:
    """CPU seconds spent meanwhile by the app, vLLM and this benchmark process, and tokens generated."""

    app: float = 0.0
    vllm: float = 0.0
    bench: float = 0.0
    tokens: float = 0.0

    def per_1k(self, cpu: float) -> float:
        return cpu / self.tokens * 1000 if self.tokens else float("nan")


async def measured(app: AppServer, bare: BareVllm, work: Awaitable[T]) -> tuple[T, Cost]:
    """Run `work` and account the CPU of every party and the tokens vLLM generated meanwhile."""
    app0, vllm0, bench0, tokens0 = _cpu(app.pid), _group_cpu(bare), time.process_time(), await _generated(bare)
    result = await work
    cost = Cost(_cpu(app.pid) - app0, _group_cpu(bare) - vllm0, time.process_time() - bench0,
                await _generated(bare) - tokens0)
    return result, cost


async def direct_without_app(ctx: Context, bare: BareVllm, client: openai.AsyncOpenAI, max_model_len: int) -> None:
    """The app's idle background work (probing /health every second and /metrics every 5 s, tailing the log) loads
    the shared vLLM during the direct runs too; this direct run with the app stopped shows how much."""
    n = max(LEVELS)
    rate, _, _ = await direct(client, bare.supervisor.spec.served_model_name, n, ctx.pick(64, 128), max_model_len)
    with_app = ctx.facts.get("direct_rate_32")
    value = f"{rate / with_app:.3f}" if with_app else "n/a"
    ctx.report.add(Row(
        SECTION, f"{n} sessions direct: app stopped ÷ app running idle", value,
        detail=f"{rate:.0f} chars/s with the app stopped, {with_app or float('nan'):.0f} chars/s beside the idle app "
        "(its monitor probes /health every second, /metrics every 5 s when no admin watches the panel)",
    ))


async def run(ctx: Context, app: AppServer, bare: BareVllm, client: openai.AsyncOpenAI, max_model_len: int) -> None:
    reps = ctx.pick(2, 4)
    max_tokens = ctx.pick(64, 128)
    cookies = await login(app.url, CHAT_USER, app.user_password)
    ctx.say(f"  concurrency: levels {LEVELS}, {reps} rep(s) each, max_tokens {max_tokens}")
    rss_peak = [0]
    for index, n in enumerate(LEVELS):
        ratios: list[float] = []
        app_rates: list[float] = []
        direct_rates: list[float] = []
        direct_tps: list[float] = []
        errors: list[str] = []
        costs: list[tuple[Cost, Cost]] = []
        for rep in range(reps):
            app_first = (rep + index) % 2 == 0  # alternate the order between levels and repetitions
            for path in (("app", "direct") if app_first else ("direct", "app")):
                if path == "app":
                    (a_rate, _, errs), a_cost = await measured(app, bare, through_app(
                        app, cookies, n, max_tokens, rss_peak if n == max(LEVELS) else None))
                    errors += errs
                else:
                    (d_rate, _, d_tps), d_cost = await measured(app, bare, direct(
                        client, bare.supervisor.spec.served_model_name, n, max_tokens, max_model_len))
            app_rates.append(a_rate)
            direct_rates.append(d_rate)
            direct_tps.append(d_tps)
            ratios.append(a_rate / d_rate)
            costs.append((a_cost, d_cost))
            ctx.say(f"    {n:>2} sessions: app {a_rate:.0f} chars/s, direct {d_rate:.0f} chars/s "
                    f"({d_tps:.0f} tok/s), ratio {ratios[-1]:.3f}" + (f", {len(errors)} errors" if errors else ""))
        ratio = summarise(ratios)
        assert ratio is not None
        at_target = n == max(LEVELS)
        value = ratio.fmt(3) if reps > 1 else f"{ratio.median:.3f}"
        a_cost, d_cost = costs[-1]
        cpu = (f"; CPU s per 1k tokens via app / direct: app process {a_cost.per_1k(a_cost.app):.2f} / "
               f"{d_cost.per_1k(d_cost.app):.2f}, vLLM {a_cost.per_1k(a_cost.vllm):.2f} / "
               f"{d_cost.per_1k(d_cost.vllm):.2f}, benchmark clients {a_cost.per_1k(a_cost.bench):.2f} / "
               f"{d_cost.per_1k(d_cost.bench):.2f}")
        if n == max(LEVELS):
            ctx.facts["direct_rate_32"] = _med(direct_rates)
            ctx.facts["app_rate_32"] = _med(app_rates)
        ctx.report.add(Row(
            SECTION, f"{n} sessions: aggregate chars/s app ÷ direct", value,
            ">= 0.95" if at_target else "-", (ratio.median >= 0.95) if at_target else None,
            f"app {_med(app_rates):.0f} chars/s, direct {_med(direct_rates):.0f} chars/s "
            f"({_med(direct_tps):.0f} tok/s)" + cpu
            + (f"; {len(errors)} failed answers: {errors[:2]}" if errors else ""),
        ))
    ctx.facts["rss_peak_32_bytes"] = float(rss_peak[0])
    await same_interval(ctx, app, bare, client, max_tokens, max_model_len, reps)


async def same_interval(ctx: Context, app: AppServer, bare: BareVllm, client: openai.AsyncOpenAI, max_tokens: int,
                        max_model_len: int, reps: int) -> None:
    """Under load the app asks vLLM for tokens in groups (chat stream batching), which also spares vLLM's
    own CPU; the figure above compares with a direct client using vLLM's defaults, as a user of bare vLLM
    would. This row holds the direct side to the app's groups too: what the app itself costs."""
    n = max(LEVELS)
    learnt = (await app.diagnostics()).get("streaming", {}).get("stream_interval", {})
    interval = int(learnt.get(str(n), 1))
    if interval <= 1:
        ctx.report.add(Row(SECTION, f"{n} sessions: app ÷ direct at the app's stream interval", "same as above",
                           detail="the app asked vLLM for single tokens at this load (no stream batching)"))
        return
    served = bare.supervisor.spec.served_model_name
    rates = [(await direct(client, served, n, max_tokens, max_model_len, interval))[0] for _ in range(reps)]
    app_rate = ctx.facts.get("app_rate_32", float("nan"))
    ctx.report.add(Row(
        SECTION, f"{n} sessions: app ÷ direct at the app's stream interval", f"{app_rate / _med(rates):.3f}",
        detail=f"direct clients asking vLLM for {interval} tokens per chunk as the app did at {n} sessions (learnt "
        f"rates {learnt}): {_med(rates):.0f} chars/s over {reps} run(s), app {app_rate:.0f} chars/s; with vLLM's "
        f"default of 1 the direct side made {ctx.facts.get('direct_rate_32', float('nan')):.0f} chars/s",
    ))


def _med(values: list[float]) -> float:
    s = summarise(values)
    return s.median if s else float("nan")
