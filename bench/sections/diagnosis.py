"""Figure 4a: diagnosis latency. A decisive vLLM line appended to the log the app's engine writes
(CHAT_LOG_DIR/vllm.log) until its finding is visible in GET /api/diagnostics, as the panel polls it."""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import time

import httpx

from bench.apps import AppServer
from bench.report import Row
from bench.sections import Context
from bench.stats import quantile, summarise

SECTION = "4 diagnosis"
LINE = ("(APIServer pid=1) ERROR 11-30 14:00:00 [serving.py:274] Error with model error=ErrorInfo(message='The model "
        "`{name}` does not exist. Valid aliases: x.', type='NotFoundError', param='model', code=404)\n")
POLL_SECONDS = 0.02  # the panel polls every second; the benchmark polls faster to see the real latency


async def run(ctx: Context, app: AppServer) -> None:
    samples = ctx.pick(20, 100)
    run_id = secrets.token_hex(3)
    log_file = app.engine_log
    if not log_file.exists():
        ctx.report.add(Row(SECTION, "log line → finding in /api/diagnostics", "n/a", detail=f"{log_file} missing"))
        return
    ctx.say(f"  diagnosis latency: {samples} lines appended to {log_file}")
    cookies = await app.admin_cookies()
    latencies_ms: list[float] = []
    call_ms: list[float] = []
    missed = 0
    async with httpx.AsyncClient(timeout=10.0, cookies=cookies) as http:
        for i in range(samples):
            name = f"bench-{run_id}-{i}"
            with log_file.open("a") as handle:
                handle.write(LINE.format(name=name))
            written = time.perf_counter()
            seen = None
            while time.perf_counter() - written < 5.0:
                asked = time.perf_counter()
                response = await http.get(app.url + "/api/diagnostics")
                done = time.perf_counter()
                call_ms.append((done - asked) * 1000)
                if name in json.dumps(response.json().get("findings", [])):
                    seen = done
                    break
                await asyncio.sleep(POLL_SECONDS)
            if seen is None:
                missed += 1
            else:
                latencies_ms.append((seen - written) * 1000)
            await asyncio.sleep(random.uniform(0.1, 0.3))  # do not stay in phase with the tail's poll
    if not latencies_ms:
        ctx.report.add(Row(SECTION, "log line → finding (p95)", "never seen", "<= 250 ms", False))
        return
    p50 = quantile(latencies_ms, 0.5)
    p95 = quantile(latencies_ms, 0.95)
    calls = summarise(call_ms)
    ctx.report.add(Row(
        SECTION, "log line → finding in /api/diagnostics: p50 / p95", f"{p50:.0f} / {p95:.0f} ms", "p95 <= 250 ms",
        p95 <= 250.0,
        f"n={len(latencies_ms)}, max {max(latencies_ms):.0f} ms, {missed} not seen within 5 s; one GET "
        f"/api/diagnostics takes {calls.median:.1f} ms median (polled every {POLL_SECONDS * 1000:.0f} ms)"
        if calls else "",
    ))
