"""Figure 4b: CPU cost of live diagnosis at a busy server's log rate.

A fresh process runs the app's own `Monitor` (LogFollower -> LineClassifier -> FindingsStore + LogRing,
exactly as the app wires them; no engine endpoint, so the probe loop idles) on a file that a separate
writer process fills with realistic vLLM INFO and access lines at a fixed rate. The monitor process
measures its own CPU (time.process_time, getrusage); the writer's CPU is not counted. The run ends
when every written line has been consumed.

    python -m bench.sections.tailing [--rate 5000] [--seconds 10] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import Row
from bench.sections import Context

SECTION = "4 diagnosis"
TARGET_PERCENT = 5.0

# A busy vLLM 0.32 with --enable-log-requests writes three lines per chat request (vllm/entrypoints/serve/
# utils/request_logger.py, v1/engine/async_llm.py, uvicorn's access log); one line in a hundred is
# something else: the periodic stats line (every 10 s in reality, far rarer than here), an abort, a
# /v1/models call, the chat template notice.
_REQUEST = (
    "(APIServer pid=4100) INFO 11-30 14:{mm:02d}:{ss:02d} [request_logger.py:66] Received request chatcmpl-{rid}: "
    "params: SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, "
    "temperature=0.0, top_p=0.95, top_k=0, min_p=0.0, seed=None, stop=[], stop_token_ids=[], bad_words=[], "
    "include_stop_str_in_output=False, ignore_eos=False, max_tokens=256, min_tokens=0, logprobs=None, "
    "prompt_logprobs=None, skip_special_tokens=True, spaces_between_special_tokens=True, "
    "truncate_prompt_tokens=None, structured_outputs=None, extra_args=None), lora_request: None.",
    "(APIServer pid=4100) INFO 11-30 14:{mm:02d}:{ss:02d} [async_llm.py:578] Added request chatcmpl-{rid}.",
    '(APIServer pid=4100) INFO:     127.0.0.1:{port} - "POST /v1/chat/completions HTTP/1.1" 200 OK',
)
_OTHER = (
    "(APIServer pid=4100) INFO 11-30 14:{mm:02d}:{ss:02d} [loggers.py:335] Engine 000: Avg prompt throughput: "
    "16.9 tokens/s, Avg generation throughput: 54.1 tokens/s, Running: {run} reqs, Waiting: 0 reqs, "
    "CPU KV cache usage: 0.4%, Prefix cache hit rate: 25.0%",
    "(APIServer pid=4100) INFO 11-30 14:{mm:02d}:{ss:02d} [async_llm.py:922] Aborted request(s) chatcmpl-{rid}.",
    '(APIServer pid=4100) INFO:     127.0.0.1:{port} - "GET /v1/models HTTP/1.1" 200 OK',
    "(APIServer pid=4100) INFO 11-30 14:{mm:02d}:{ss:02d} [chat_utils.py:560] Detected the chat template "
    "content format to be 'string'. You can set `--chat-template-content-format` to override this.",
)


def log_line(i: int) -> str:
    """The i-th line of the synthetic busy log (ids, ports and times vary as in a real one)."""
    k = i % 100
    template = _OTHER[(i // 100) % len(_OTHER)] if k == 99 else _REQUEST[k % 3]
    request = i // 3
    return template.format(port=30000 + request % 30000, rid=f"{request:032x}", mm=i // 300000 % 60,
                           ss=i // 5000 % 60, run=request % 32)


def writer(path: str, rate: int, seconds: float, start_at: float) -> None:
    """From `start_at` (time.time()), append `rate` lines/s for `seconds`, one write(2) per line as an
    unbuffered server does."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    time.sleep(max(0.0, start_at - time.time()))
    batch = max(1, rate // 100)
    total = int(rate * seconds)
    start = time.perf_counter()
    i = 0
    while i < total:
        for _ in range(min(batch, total - i)):
            os.write(fd, (log_line(i) + "\n").encode())
            i += 1
        ahead = start + i / rate - time.perf_counter()
        if ahead > 0:
            time.sleep(ahead)
    os.close(fd)
    print(json.dumps({"lines": total, "seconds": time.perf_counter() - start}))


async def measure(rate: int, seconds: float, profile: bool) -> dict[str, float | str]:
    """Run the Monitor's tail on a file filled by a writer process; CPU of this process only."""
    from chainlit_app.monitor import Monitor

    with tempfile.TemporaryDirectory(prefix="bench-tail-") as tmp:
        path = Path(tmp) / "vllm.log"
        path.write_text("")
        monitor = Monitor(lambda: path, lambda: None)
        monitor.start()
        await asyncio.sleep(1.0)  # the follower has opened the file and idles
        idle_cpu0, idle_wall0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(2.0)
        idle_percent = (time.process_time() - idle_cpu0) / (time.perf_counter() - idle_wall0) * 100
        profiler = cProfile.Profile() if profile else None
        start_at = time.time() + 2.0  # the writer's interpreter start-up stays out of the window
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.sections.tailing", "--writer", str(path), "--rate", str(rate),
            "--seconds", str(seconds), "--start-at", repr(start_at), stdout=subprocess.PIPE,
        )
        await asyncio.sleep(max(0.0, start_at - time.time()))
        usage0 = resource.getrusage(resource.RUSAGE_SELF)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if profiler:
            profiler.enable()
        out, _ = await proc.communicate()
        written = json.loads(out)["lines"]
        writer_done = time.perf_counter()
        while True:
            tail = monitor.ring.tail(1)
            if tail and tail[-1]["n"] >= written:
                break
            if time.perf_counter() - writer_done > 60:
                break
            await asyncio.sleep(0.01)
        drained = time.perf_counter()
        if profiler:
            profiler.disable()
        cpu1 = time.process_time()
        usage1 = resource.getrusage(resource.RUSAGE_SELF)
        consumed = monitor.ring.tail(1)[-1]["n"] if monitor.ring.tail(1) else 0
        await monitor.stop()
    wall = drained - wall0
    result: dict[str, float | str] = {
        "lines": written,
        "consumed": consumed,
        "wall_s": wall,
        "cpu_s": cpu1 - cpu0,
        "user_s": usage1.ru_utime - usage0.ru_utime,
        "sys_s": usage1.ru_stime - usage0.ru_stime,
        "percent": (cpu1 - cpu0) / wall * 100,
        "lag_s": drained - writer_done,
        "rate": written / (writer_done - wall0),
        "idle_percent": idle_percent,
        "findings": len(monitor.store),
    }
    if profiler:
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats("tottime").print_stats(18)
        result["profile"] = buf.getvalue()
    return result


def measure_in_child(rate: int, seconds: float, profile: bool = False) -> dict[str, float | str]:
    """A clean process, so that nothing else of the benchmark is in its CPU time."""
    argv = [sys.executable, "-m", "bench.sections.tailing", "--rate", str(rate), "--seconds", str(seconds), "--json"]
    if profile:
        argv.append("--profile")
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=seconds + 180)
    data: dict[str, float | str] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def run(ctx: Context) -> None:
    rate = 5000
    seconds = float(ctx.pick(10, 30))
    ctx.say(f"  tailing cost: {rate} lines/s for {seconds:.0f} s")
    r = measure_in_child(rate, seconds, profile=False)
    percent = float(r["percent"])
    ctx.report.add(Row(
        SECTION, f"tail + classify at {rate:,} lines/s: % of one core", f"{percent:.1f} %",
        f"< {TARGET_PERCENT:.0f} %", percent < TARGET_PERCENT,
        f"{int(r['lines']):,} lines at {float(r['rate']):,.0f} lines/s, all consumed: "
        f"{'yes' if r['consumed'] == r['lines'] else 'no (' + str(r['consumed']) + ')'}; CPU {float(r['cpu_s']):.2f} s "
        f"(user {float(r['user_s']):.2f}, sys {float(r['sys_s']):.2f}) over {float(r['wall_s']):.1f} s; "
        f"lag at the end {float(r['lag_s']) * 1000:.0f} ms; idle follower {float(r['idle_percent']):.2f} %",
    ))
    ctx.facts["tail_percent"] = percent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writer", metavar="FILE")
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--start-at", type=float, default=0.0, help="writer: time.time() to begin at")
    parser.add_argument("--profile", action="store_true", help="print where the monitor's CPU goes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.writer:
        writer(args.writer, args.rate, args.seconds, args.start_at)
        return 0
    result = asyncio.run(measure(args.rate, args.seconds, args.profile))
    if "profile" in result and not args.json:
        print(result.pop("profile"))
    elif "profile" in result:
        print(result["profile"], file=sys.stderr)
        result.pop("profile")
    print(json.dumps(result) if args.json else "\n".join(f"{k}: {v}" for k, v in result.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
