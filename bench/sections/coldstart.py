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
import signal
import time
from pathlib import Path

from bench.apps import CHAT_USER, AppServer, BareVllm, launch_line, same_command, start_app
from bench.chainlit_client import ChainlitSession, login
from bench.direct import make_client, stream_direct
from bench.report import Row
from bench.sections import Context
from bench.sections.streaming import chat_params

SECTION = "3 cold start"
QUESTION = "What is the capital of France?"
FIRST_MAX_TOKENS = 16


async def bare_cold_start(ctx: Context, work_dir: Path, max_model_len: int) -> BareVllm:
    """Start a bare vLLM and time its first token; it keeps running for the side-by-side sections."""
    bare = BareVllm(work_dir)
    ctx.say(f"  bare vLLM: {' '.join(bare.shown_argv)}")
    await bare.start()
    assert bare.launched_at is not None
    try:
        healthy = await bare.wait_healthy()
        client = make_client(bare.base_url, bare.api_key)
        try:
            params = chat_params(FIRST_MAX_TOKENS, max_model_len)
            result = await stream_direct(client, bare.served_name, QUESTION, params)
        finally:
            await client.close()
    except BaseException:
        await bare.stop()
        raise
    assert result.first_token_at is not None, "bare vLLM answered no token"
    first = result.first_token_at - bare.launched_at
    ctx.facts["bare_health_s"] = healthy
    ctx.facts["bare_first_token_s"] = first
    ctx.say(f"    bare vLLM healthy after {healthy:.1f} s, first token after {first:.1f} s")
    return bare


async def app_cold_start(ctx: Context, work_dir: Path, bare_argv: list[str] | None) -> AppServer:
    """Start the app (spawn mode) and time the first answer token; the app keeps running."""
    app = start_app(work_dir)
    try:
        http_s = await app.wait_http(timeout=300)
        cookies = await login(app.url, CHAT_USER, app.user_password)
        async with ChainlitSession(app.url, CHAT_USER, cookies=cookies, connect_timeout=120) as session:
            await session.update_settings({"max_tokens": FIRST_MAX_TOKENS})
            result = await session.ask(QUESTION, timeout=900)
        if result.first_token_at is None:
            raise RuntimeError(f"no answer token from the app: {result.error} {result.notices[-2:]}")
        first = result.first_token_at - app.launched_at
        engine = (await app.diagnostics())["engine"]
    except BaseException:
        app.stop()
        raise
    first_epoch = app.launched_epoch + first
    spawn_at = (engine.get("started_at") or app.launched_epoch) - app.launched_epoch
    vllm_s = (engine.get("ready_at") or 0) - (engine.get("started_at") or 0)
    ready_to_token = first_epoch - (engine.get("ready_at") or first_epoch)
    ctx.facts["app_first_token_s"] = first
    bare_first = ctx.facts.get("bare_first_token_s")
    ratio = first / bare_first if bare_first else None
    same = same_command(launch_line(app.engine_log), bare_argv)
    ctx.say(f"    app: web up after {http_s:.1f} s, vLLM spawned at {spawn_at:.1f} s, vLLM ready after "
            f"{vllm_s:.1f} s, first token {ready_to_token:.2f} s after ready; total {first:.1f} s")
    ctx.report.add(Row(
        SECTION, "app launch → first token ÷ bare vLLM launch → first token",
        f"{ratio:.3f} ({first:.1f} s vs {bare_first:.1f} s)" if ratio else "n/a", "<= 1.05",
        None if ratio is None else ratio <= 1.05,
        f"app: web server up at {http_s:.1f} s, vLLM spawned at {spawn_at:.1f} s (chainlit import, model "
        f"resolution, preflight), vLLM ready {vllm_s:.1f} s later, first token {ready_to_token:.2f} s after ready; "
        f"bare: /health at {ctx.facts.get('bare_health_s', float('nan')):.1f} s; "
        f"same vLLM command line as the app's (port aside): {'yes' if same else 'NO'}; the engine-facts cache "
        f"was warm (every start after an install's first; the first adds the preflight's vLLM import, "
        f"{ctx.facts.get('engine_facts_probe_s', float('nan')):.0f} s here)",
    ))
    return app


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
