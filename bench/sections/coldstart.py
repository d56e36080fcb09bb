"""Figure 3: cold start and restart after a crash.

- bare vLLM: launch (the app's own argv and environment) until its first answer token, /health polled
  every 100 ms so that the baseline is the earliest moment vLLM can answer;
- the app: `chainlit run app.py` until the first answer token of a question a user sent as soon as the
  page answered (the app holds it until the engine is ready, then streams it);
- restart: `kill -9` of the app's vLLM (pid from GET /api/diagnostics) until a question answers again.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from bench.apps import CHAT_USER, AppServer, BareVllm, same_command, start_app
from bench.chainlit_client import ChainlitSession, login
from bench.direct import make_client, stream_direct
from bench.report import Row
from bench.sections import Context
from bench.sections.streaming import chat_params
from bench.stats import summarise
from chainlit_app.engine.logfiles import launched_argv

SECTION = "3 cold start"
QUESTION = "What is the capital of France?"
FIRST_MAX_TOKENS = 16


@dataclass
class AppStart:
    """One app launch: when the web server answered, when vLLM was spawned and ready, the first token."""

    http_s: float
    spawn_s: float
    vllm_s: float
    ready_to_token_s: float
    first_token_s: float
    app_cpu_s: float  # CPU of the chainlit process from launch to the first token


async def bare_cold_start(ctx: Context, work_dir: Path, max_model_len: int) -> tuple[BareVllm, float, float]:
    """Start a bare vLLM and time its first token; it keeps running. Returns it, /health and first-token s."""
    bare = BareVllm(work_dir)
    await bare.start()
    assert bare.launched_at is not None
    try:
        healthy = await bare.wait_healthy()
        client = make_client(bare.supervisor.base_url, bare.supervisor.api_key)
        try:
            params = chat_params(FIRST_MAX_TOKENS, max_model_len)
            result = await stream_direct(client, bare.supervisor.spec.served_model_name, QUESTION, params)
        finally:
            await client.close()
    except BaseException:
        await bare.stop()
        raise
    assert result.first_token_at is not None, "bare vLLM answered no token"
    first = result.first_token_at - bare.launched_at
    ctx.say(f"    bare vLLM healthy after {healthy:.1f} s, first token after {first:.1f} s")
    return bare, healthy, first


async def app_cold_start_once(work_dir: Path) -> tuple[AppServer, AppStart]:
    """Start the app (spawn mode), ask as soon as the page answers, time the first answer token."""
    app = start_app(work_dir)
    try:
        http_s = await app.wait_http(timeout=300)
        cookies = await login(app.url, CHAT_USER, app.user_password)
        async with ChainlitSession(app.url, CHAT_USER, cookies=cookies, connect_timeout=120) as session:
            await session.update_settings({"max_tokens": FIRST_MAX_TOKENS})
            result = await session.ask(QUESTION, timeout=900)
        cpu = psutil.Process(app.pid).cpu_times()
        if result.first_token_at is None:
            raise RuntimeError(f"no answer token from the app: {result.error} {result.notices[-2:]}")
        first = result.first_token_at - app.launched_at
        engine = (await app.diagnostics())["engine"]
    except BaseException:
        app.stop()
        raise
    started_at = engine.get("started_at") or app.launched_epoch
    ready_at = engine.get("ready_at") or started_at
    start = AppStart(http_s=http_s, spawn_s=started_at - app.launched_epoch, vllm_s=ready_at - started_at,
                     ready_to_token_s=app.launched_epoch + first - ready_at, first_token_s=first,
                     app_cpu_s=cpu.user + cpu.system)
    return app, start


async def app_cold_start(ctx: Context, work_dir: Path, bare_argv: list[str] | None) -> AppServer:
    """The app's cold start next to the bare one measured before; the app keeps running."""
    app, st = await app_cold_start_once(work_dir)
    ctx.facts["app_first_token_s"] = st.first_token_s
    bare_first = ctx.facts.get("bare_first_token_s")
    ratio = st.first_token_s / bare_first if bare_first else None
    same = same_command(launched_argv(app.engine_log), bare_argv)
    ctx.say(f"    app: web up after {st.http_s:.1f} s, vLLM spawned at {st.spawn_s:.1f} s, vLLM ready after "
            f"{st.vllm_s:.1f} s, first token {st.ready_to_token_s:.2f} s after ready; total {st.first_token_s:.1f} s")
    ctx.report.add(Row(
        SECTION, "app launch → first token ÷ bare vLLM launch → first token",
        f"{ratio:.3f} ({st.first_token_s:.1f} s vs {bare_first:.1f} s)" if ratio else "n/a", "<= 1.05",
        None if ratio is None else ratio <= 1.05,
        f"app: web server up at {st.http_s:.1f} s, vLLM spawned at {st.spawn_s:.1f} s (interpreter, chainlit and app "
        f"imports, schema, model resolution, preflight), vLLM ready {st.vllm_s:.1f} s later (bare: /health at "
        f"{ctx.facts.get('bare_health_s', float('nan')):.1f} s), first token {st.ready_to_token_s:.2f} s after ready "
        f"(bare: {(bare_first or 0) - ctx.facts.get('bare_health_s', 0):.2f} s after /health); the app used "
        f"{st.app_cpu_s:.1f} s CPU until then; same vLLM command line as the app's (port aside): "
        f"{'yes' if same else 'NO'}; the engine-facts cache was warm (every start after an install's first; the "
        f"first adds the preflight's vLLM import, {ctx.facts.get('engine_facts_probe_s', float('nan')):.0f} s here)",
    ))
    return app


async def repeated_pairs(ctx: Context, pairs: int, max_model_len: int) -> None:
    """Full mode: more alternating bare/app cold starts (one sample each is noisy: ±2 s on ~30 s)."""
    ratios: list[float] = []
    spawn: list[float] = []
    extra_vllm: list[float] = []
    for i in range(pairs):
        order = ("app", "bare") if i % 2 == 0 else ("bare", "app")
        bare_first = bare_health = 0.0
        st: AppStart | None = None
        for which in order:
            if which == "bare":
                bare, bare_health, bare_first = await bare_cold_start(ctx, ctx.work_dir / f"bare-{i}", max_model_len)
                await bare.stop()
            else:
                data_dir = ctx.work_dir / f"spawn-{i}"
                warm = ctx.work_dir / "spawn" / "cache" / "engine_facts.json"  # filled by the warm-up
                if warm.exists():
                    (data_dir / "cache").mkdir(parents=True, exist_ok=True)
                    shutil.copy(warm, data_dir / "cache" / warm.name)
                app, st = await app_cold_start_once(data_dir)
                app.stop()
                ctx.say(f"    app: vLLM spawned at {st.spawn_s:.1f} s, ready {st.vllm_s:.1f} s later, first token at "
                        f"{st.first_token_s:.1f} s")
        assert st is not None
        ratios.append(st.first_token_s / bare_first)
        spawn.append(st.spawn_s)
        extra_vllm.append(st.vllm_s - bare_health)
    summary, spawned, slower = summarise(ratios), summarise(spawn), summarise(extra_vllm)
    assert summary is not None and spawned is not None and slower is not None
    ctx.report.add(Row(
        SECTION, f"cold start ratio over {pairs} more alternating pairs", summary.fmt(3), "<= 1.05",
        summary.median <= 1.05,
        f"vLLM spawned {spawned.fmt(1, ' s')} after the app's launch; the app's vLLM took {slower.fmt(1, ' s')} "
        "longer than the bare one to answer /health",
    ))


async def restart_after_crash(ctx: Context, app: AppServer) -> None:
    """kill -9 the app's vLLM and time until a question is answered again."""
    engine = (await app.diagnostics())["engine"]
    pid = engine.get("pid")
    if engine.get("state") != "ready" or not pid:
        ctx.report.add(Row(SECTION, "restart after kill -9 → first token", "n/a",
                           detail=f"engine not ready before the kill: {engine.get('state')}"))
        return
    cookies = await login(app.url, CHAT_USER, app.user_password)
    async with ChainlitSession(app.url, CHAT_USER, cookies=cookies, connect_timeout=120) as session:
        await session.update_settings({"max_tokens": FIRST_MAX_TOKENS})
        killed = time.perf_counter()
        os.kill(int(pid), signal.SIGKILL)
        noticed = None
        while time.perf_counter() - killed < 60:
            if await app.engine_state() != "ready":
                noticed = time.perf_counter() - killed
                break
            await asyncio.sleep(0.05)
        result = await session.ask(QUESTION, timeout=900)
    after = (await app.diagnostics())["engine"]
    if result.first_token_at is None:
        ctx.report.add(Row(SECTION, "restart after kill -9 → first token", "no answer",
                           detail=f"{result.error}; {result.notices[-2:]}"))
        return
    first = result.first_token_at - killed
    ready_at = after.get("ready_at")
    ready_s = None
    if ready_at:
        ready_s = ready_at - (time.time() - (time.perf_counter() - killed))
    bare_first = ctx.facts.get("bare_first_token_s")
    ctx.say(f"    restart: crash noticed after {noticed if noticed is not None else float('nan'):.2f} s, "
            f"first token after {first:.1f} s")
    ctx.report.add(Row(
        SECTION, "restart after kill -9 → first token", f"{first:.1f} s"
        + (f" ({first / bare_first:.2f}× a bare cold start)" if bare_first else ""),
        detail=f"crash seen by /healthz after {noticed if noticed is not None else float('nan'):.2f} s; "
        f"engine ready again {ready_s:.1f} s after the kill; restarts {after.get('restarts')}; "
        f"vLLM start-up of the relaunch {after.get('startup_seconds')} s" if ready_s is not None else "",
    ))
    ctx.facts["restart_first_token_s"] = first
