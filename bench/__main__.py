"""`python -m bench [--full]`: measure the app against bare vLLM, print the table, write results/latest.md.

Order of a run (one bare vLLM and one app of ours at a time, each stopped before the next starts):

1. warm-up (import vLLM once, read the weights, fill the preflight's cache) so no launch pays for a
   cold disk;
2. bare vLLM, launched with the app's command line: cold start to first token; then the app in attach
   mode on that same server: streaming overhead, concurrency, the app's memory under 32 sessions;
3. `chainlit run app.py` spawning its own vLLM: cold start to first token, idle memory, diagnosis
   latency on its engine log, restart after `kill -9` of its vLLM;
4. in a separate process: the CPU cost of tailing and classifying 5,000 log lines per second;
5. GPU token rates without a GPU: a replay upstream (bench/replay.py) streams recorded vLLM answers at
   200 tokens/s each to 1, 32 and 128 sessions (`--full`: 1 to 512) and one answer at 2,000 tokens/s,
   through this app, the seed 002 app and a bare openai client side by side; then a real Chromium page
   follows a 2,000 tokens/s answer (bench/sections/gpu_rate.py, bench/browser_check.py).

Quick mode (the default) takes about 6 to 10 minutes on a 2-core machine; `--full` repeats more.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import signal
import sys
import tempfile
import time
from pathlib import Path

from bench import browser_check
from bench.apps import MAX_MODEL_LEN, attach_env, bench_settings, start_app
from bench.direct import make_client
from bench.machine import ENGINE_PYTHON, LoadLog, machine_info, other_activity, wait_for_quiet
from bench.report import Report
from bench.sections import Context, coldstart, concurrency, diagnosis, gpu_rate, memory, streaming, tailing
from chainlit_app.engine.facts import load_engine_facts
from chainlit_app.models import resolve_model

RESULTS = Path(__file__).resolve().parent / "results" / "latest.md"


def say(text: str) -> None:
    print(text, flush=True)


def warm_up(ctx: Context) -> float:
    """Untimed: read what every vLLM launch reads (its packages, the weights), so that no launch pays for
    a cold disk and the order of launches does not pick the winner; and fill the app's engine-facts cache
    (the preflight's one vLLM import, cached in CHAT_DATA_DIR), so the app's cold start is that of every
    start after the first. Returns the probe's seconds: what the very first start of an install adds."""
    started = time.perf_counter()
    load_engine_facts(ENGINE_PYTHON, ctx.work_dir / "spawn" / "cache" / "engine_facts.json")
    probe_s = time.perf_counter() - started
    model = Path(resolve_model(bench_settings(ctx.work_dir / "warm")).model)
    for weights in model.glob("*.safetensors"):
        with weights.open("rb") as handle:
            while handle.read(16 * 2**20):
                pass
    return probe_s


async def check_quiet(ctx: Context, label: str) -> None:
    """Machine etiquette: do not measure beside other people's test runs if waiting can avoid it (the
    waiting budget is shared by the whole run)."""
    budget = ctx.facts.get("wait_budget", 0.0)
    if budget > 0:
        waited, still = await wait_for_quiet(budget, say=say)
        ctx.facts["wait_budget"] = budget - waited
        if waited:
            ctx.report.notes.append(f"{label}: waited {waited:.0f} s for other test runs to finish")
        if still:
            ctx.report.notes.append(f"{label}: measured while {len(still)} foreign test/server processes ran")
    elif other_activity():
        ctx.report.notes.append(f"{label}: measured while {len(other_activity())} foreign test/server processes ran")
    ctx.load.note(label)


async def side_by_side(ctx: Context) -> list[str]:
    """Phase 2: bare vLLM, and the app attached to it. Returns the bare command line for comparison."""
    say("[2/5] bare vLLM cold start, then the app attached to the same server")
    bare, ctx.facts["bare_health_s"], ctx.facts["bare_first_token_s"] = await coldstart.bare_cold_start(
        ctx, ctx.work_dir / "bare", MAX_MODEL_LEN)
    ctx.say(f"  bare vLLM: {' '.join(bare.shown_argv)}")
    try:
        app = start_app(ctx.work_dir / "attach", **attach_env(bare))
        client = make_client(bare.supervisor.base_url, bare.supervisor.api_key)
        try:
            await app.wait_engine(("attached",), timeout=300)
            await asyncio.sleep(3.0)
            memory.sample(ctx, app, "rss_idle_attach")
            ctx.facts["engine_rss"] = float(bare.rss_bytes())
            ctx.load.note("streaming")
            await streaming.run(ctx, app, bare, client, MAX_MODEL_LEN)
            ctx.load.note("concurrency")
            await concurrency.run(ctx, app, bare, client, MAX_MODEL_LEN)
            await asyncio.sleep(3.0)
            memory.sample(ctx, app, "rss_after_load_attach")
            app.stop()
            await concurrency.direct_without_app(ctx, bare, client, MAX_MODEL_LEN)
        finally:
            await client.close()
            app.stop()
    finally:
        await bare.stop()
    return bare.shown_argv


async def app_alone(ctx: Context, bare_argv: list[str]) -> None:
    """Phase 3: the app as a user starts it, spawning its own vLLM."""
    say("[3/5] chainlit run app.py: cold start, idle memory, diagnosis latency, restart after kill -9")
    app = await coldstart.app_cold_start(ctx, ctx.work_dir / "spawn", bare_argv)
    try:
        await asyncio.sleep(5.0)
        memory.sample(ctx, app, "rss_idle_spawn")
        ctx.load.note("diagnosis")
        await diagnosis.run(ctx, app)
        ctx.load.note("restart")
        await coldstart.restart_after_crash(ctx, app)
    finally:
        app.stop()


async def run(full: bool, max_wait: float) -> Report:
    # SIGTERM (e.g. from `timeout`) cancels like Ctrl-C does, so every process we started is stopped.
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    report = Report()
    started = time.perf_counter()
    info = machine_info()
    report.header += info.lines()
    report.header.append(f"date: {dt.datetime.now().astimezone().isoformat(timespec='seconds')}; mode: "
                         f"{'full' if full else 'quick'}; model: demo (SmolLM2-135M-Instruct, float32), "
                         f"max_model_len {MAX_MODEL_LEN}, temperature 0")
    for line in report.header:
        say(line)
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        ctx = Context(full=full, work_dir=Path(tmp), report=report, load=LoadLog([]), say=say)
        ctx.facts["wait_budget"] = max_wait
        await check_quiet(ctx, "start")
        say("[1/5] warm-up (untimed): page cache, the preflight's engine facts")
        probe_s = warm_up(ctx)
        ctx.facts["engine_facts_probe_s"] = probe_s
        say(f"  engine facts probe {probe_s:.0f} s")
        bare_argv = await side_by_side(ctx)
        await check_quiet(ctx, "app cold start")
        await app_alone(ctx, bare_argv)
        if full:
            say("[3b] more alternating cold starts (full mode)")
            await coldstart.repeated_pairs(ctx, 2, MAX_MODEL_LEN)
        say("[4/5] tailing cost")
        await check_quiet(ctx, "tailing")
        await asyncio.to_thread(tailing.run, ctx)
        memory.run(ctx)
        say("[5/5] GPU token rates against the replay upstream; a browser at 2,000 tokens/s")
        await check_quiet(ctx, "gpu rates")
        await gpu_rate.run(ctx)
        await browser_check.run(ctx)
        ctx.load.note("end")
    foreign = other_activity()
    report.notes.append("machine load (1/5-min load averages on 2 cores) at each step: " + "; ".join(ctx.load.entries))
    if foreign:
        report.notes.append(f"foreign test/server processes at the end: {len(foreign)}")
    report.notes.append(f"run time {(time.perf_counter() - started) / 60:.1f} min")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="more repetitions and longer answers (about 25 min)")
    parser.add_argument("--max-wait", type=float, default=900.0,
                        help="seconds in all to wait for other test runs to finish before measuring (0: do not wait)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the Markdown table")
    args = parser.parse_args()
    if not ENGINE_PYTHON.exists():
        say(f"engine environment missing: {ENGINE_PYTHON} (run `make install`)")
        return 1
    try:
        report = asyncio.run(run(args.full, args.max_wait))
    except (KeyboardInterrupt, asyncio.CancelledError):
        say("interrupted: every process the benchmark started has been stopped")
        return 130
    say("")
    say(report.text())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report.markdown())
    say(f"\nwritten: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
