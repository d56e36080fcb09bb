"""Figure 1: streaming overhead. The same question, temperature 0 and max_tokens, asked alternately
through the app (socket.io, as a browser) and straight to the same vLLM with the openai client.

`ignore_eos` cannot be passed through the app, so the prompt asks for a long answer and rates are
compared per character after the first token (both paths stream the same text at temperature 0, so the
character rate ratio is the token rate ratio; the app coalesces tokens, so stream events are not tokens).
"""

from __future__ import annotations

import time

import openai

from bench.apps import CHAT_USER, AppServer, BareVllm
from bench.chainlit_client import AskResult, ChainlitSession, login
from bench.direct import ChatParams, DirectResult, stream_direct
from bench.report import Row
from bench.sections import Context
from bench.stats import summarise

PROMPT = ("Write a long, detailed story about a lighthouse keeper who finds a message in a bottle. "
          "Describe his island, every day of his week and the people he meets.")
SECTION = "1 streaming"


def chat_params(max_tokens: int, max_model_len: int) -> ChatParams:
    """What the app sends after `update_settings({"max_tokens": N})` (CHAT_TEMPERATURE=0, defaults else)."""
    return ChatParams(temperature=0.0, top_p=0.95, max_tokens=max_tokens,
                      system_prompt="You are a helpful assistant.", max_model_len=max_model_len)


async def ask_through_app(app: AppServer, cookies: dict[str, str], question: str, max_tokens: int,
                          timeout: float = 300.0, round_trips: list[float] | None = None) -> AskResult:
    """A fresh session per question (a conversation's history would change the prompt). The settings
    update before it is a round trip through Chainlit with a trivial handler: the socket's own cost."""
    async with ChainlitSession(app.url, CHAT_USER, cookies=cookies) as session:
        before = time.perf_counter()
        await session.update_settings({"max_tokens": max_tokens})
        if round_trips is not None:
            round_trips.append((time.perf_counter() - before) * 1000)
        return await session.ask(question, timeout=timeout)


async def run(ctx: Context, app: AppServer, bare: BareVllm, client: openai.AsyncOpenAI, max_model_len: int) -> None:
    pairs = ctx.pick(8, 16)
    max_tokens = ctx.pick(80, 256)
    params = chat_params(max_tokens, max_model_len)
    cookies = await login(app.url, CHAT_USER, app.user_password)
    ctx.say(f"  streaming: 1 warm-up + {pairs} paired runs, max_tokens {max_tokens}")
    rate_ratios: list[float] = []
    ttft_diffs_ms: list[float] = []
    total_ratios: list[float] = []
    direct_tps: list[float] = []
    direct_ttft_ms: list[float] = []
    app_ttft_ms: list[float] = []
    events_per_answer: list[float] = []
    tokens_per_answer: list[float] = []
    round_trips_ms: list[float] = []
    task_start_ms: list[float] = []  # question sent -> Chainlit's task_start seen by the client
    inside_ms: list[float] = []  # task_start -> first token, minus the direct first-token time
    mismatched = 0
    failures: list[str] = []
    for i in range(pairs + 1):
        through: AskResult | None = None
        straight: DirectResult | None = None
        for path in (("app", "direct") if i % 2 == 0 else ("direct", "app")):
            if path == "app":
                through = await ask_through_app(app, cookies, PROMPT, max_tokens, round_trips=round_trips_ms)
            else:
                straight = await stream_direct(client, bare.supervisor.spec.served_model_name, PROMPT, params)
        assert through is not None and straight is not None
        if i == 0:
            continue  # warm-up: connection pools, prefix cache, first-message paths
        if not through.completed or through.first_token_s is None or through.chars_per_s is None:
            failures.append(through.error or f"no stream (notices: {through.notices[:1]})")
            continue
        if straight.first_token_s is None or straight.chars_per_s is None or straight.total_s is None:
            failures.append("direct stream empty")
            continue
        if through.text != straight.text:
            mismatched += 1
        rate_ratios.append(through.chars_per_s / straight.chars_per_s)
        ttft_diffs_ms.append((through.first_token_s - straight.first_token_s) * 1000)
        if through.total_s:
            total_ratios.append(straight.total_s / through.total_s)
        if straight.tokens_per_s:
            direct_tps.append(straight.tokens_per_s)
        direct_ttft_ms.append(straight.first_token_s * 1000)
        app_ttft_ms.append(through.first_token_s * 1000)
        if through.task_started_at is not None and through.first_token_at is not None:
            task_start_ms.append((through.task_started_at - through.sent_at) * 1000)
            inside_ms.append((through.first_token_at - through.task_started_at - straight.first_token_s) * 1000)
        events_per_answer.append(through.stream_events)
        tokens_per_answer.append(straight.completion_tokens or 0)
        ctx.say(f"    pair {i}: rate ratio {rate_ratios[-1]:.3f}, first token +{ttft_diffs_ms[-1]:.0f} ms "
                f"(app {app_ttft_ms[-1]:.0f} ms, direct {direct_ttft_ms[-1]:.0f} ms)")
    rate = summarise(rate_ratios)
    ttft = summarise(ttft_diffs_ms)
    total = summarise(total_ratios)
    tps = summarise(direct_tps)
    note = f"{mismatched} of {len(rate_ratios)} pairs streamed different text" if mismatched else "same text"
    if failures:
        note += f"; {len(failures)} failed runs: {failures[:2]}"
    ctx.report.add(Row(
        SECTION, "tokens/s through the app ÷ direct (per-char rate after first token)",
        rate.fmt(3) if rate else "n/a", ">= 0.98", None if rate is None else rate.median >= 0.98,
        f"{note}; direct generation {tps.fmt(1, ' tok/s') if tps else 'n/a'}",
    ))
    ctx.report.add(Row(
        SECTION, "first-token overhead (app − direct)", ttft.fmt(1, " ms") if ttft else "n/a", "<= 15 ms",
        None if ttft is None else ttft.median <= 15.0,
        f"direct first token {_med(direct_ttft_ms):.0f} ms, through the app {_med(app_ttft_ms):.0f} ms (median); "
        f"split: question sent → Chainlit task_start seen {_med(task_start_ms):.1f} ms, task_start → first token "
        f"minus direct first token {_med(inside_ms):.1f} ms; a settings round trip through Chainlit (trivial "
        f"handler) takes {_med(round_trips_ms):.1f} ms",
    ))
    ctx.report.add(Row(
        SECTION, "whole answer: direct time ÷ app time", total.fmt(3) if total else "n/a",
        detail=f"{_med(events_per_answer):.0f} stream events per answer for {_med(tokens_per_answer):.0f} tokens "
        "(one stream: tokens arriving within 30 ms are coalesced; more streams, longer: pacing.flush_interval)",
    ))
    ctx.facts["direct_tokens_per_s"] = tps.median if tps else 0.0


def _med(values: list[float]) -> float:
    s = summarise(values)
    return s.median if s else float("nan")
