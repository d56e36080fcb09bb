"""One session's CPU, averaged: an idle app's background rate, then many one-session answers in a row.

The GPU-rate section measures one session with ONE 256-token answer, about 60 ms of CPU read in the
kernel's 10 ms ticks, so its "CPU s per 1,000 tokens" at one session moves in steps of 0.039 and by a
tick or two from run to run. Here the same clients answer `--answers` questions one after the other
(each in a new session, as in that section), the CPU summed over all of them, and the idle process is
measured over `--idle` seconds first: the background rate that every answer pays for its 1.3 s.
py-spy records both phases of each client (collapsed stacks and summaries in `--out`).

`python -m bench.one_session [--clients app,before] [--before DIR] [--answers 15] [--idle 30] [--out DIR]`
(`app-1p` and `before-1p`: the same on a throwaway PostgreSQL; run it under the heavy-run lock).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
from pathlib import Path

from bench import profiling
from bench.cluster_apps import ClusterApp, bench_postgres
from bench.machine import LoadLog
from bench.report import Report
from bench.sections import Context, gpu_rate
from bench.upstream import cpu_seconds

TOKENS = 256


def _pid(clients: gpu_rate.Clients, kind: str) -> int:
    server = clients.apps[kind]
    if isinstance(server, ClusterApp):
        raise SystemExit(f"{kind}: one process at a time here (app-1p, before-1p), not a cluster")
    return server.pid


async def _idle(clients: gpu_rate.Clients, kinds: list[str], seconds: float, out: Path) -> None:
    """Every client idle at once over the same seconds (no session open, the engine attached)."""
    pids = {kind: _pid(clients, kind) for kind in kinds}
    before = {kind: cpu_seconds(pid) for kind, pid in pids.items()}
    async with contextlib.AsyncExitStack() as spies:
        for kind, pid in pids.items():
            await spies.enter_async_context(profiling.recording(pid, out / f"{kind}-idle.collapsed.txt"))
        await asyncio.sleep(seconds)
    for kind, pid in pids.items():
        used = cpu_seconds(pid) - before[kind]
        print(f"{kind:>10} idle: {used:.2f} s of CPU over {seconds:.0f} s = {1000 * used / seconds:.1f} ms a second")


async def _answers(clients: gpu_rate.Clients, kind: str, count: int, out: Path) -> None:
    pid = _pid(clients, kind)
    cpu0, wall0 = cpu_seconds(pid), time.monotonic()
    async with profiling.recording(pid, out / f"{kind}-answers.collapsed.txt"):
        runs = [await gpu_rate.measure(clients, kind, 1, gpu_rate.RATE, TOKENS) for _ in range(count)]
    used, wall = cpu_seconds(pid) - cpu0, time.monotonic() - wall0
    single = sorted(run.per_1k(run.serving_cpu_s) for run in runs)
    print(f"{kind:>10} {count} one-session answers of {TOKENS} tokens in {wall:.1f} s: {used:.2f} s of CPU, "
          f"{1000 * used / count:.1f} ms an answer, {1000 * used / (count * TOKENS):.3f} s per 1,000 tokens "
          f"(sessions opened and closed included); each answer alone as the GPU-rate section reads it: "
          f"min {single[0]:.3f}, median {single[len(single) // 2]:.3f}, max {single[-1]:.3f}; "
          f"events per answer {runs[-1].events_per_answer:.0f}")


async def run(kinds: list[str], before: Path | None, answers: int, idle: float, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-one-") as tmp, contextlib.ExitStack() as stack:
        database_url = stack.enter_context(bench_postgres()) if any(map(gpu_rate.processes_of, kinds)) else ""
        ctx = Context(full=False, work_dir=Path(tmp), report=Report(), load=LoadLog([]),
                      say=lambda text: print(text, flush=True))
        clients = await gpu_rate.start_clients(ctx, kinds, before, database_url)
        clients.database_url = database_url
        try:
            for kind in kinds:  # untimed, as in the GPU-rate section: imports, first statements, pools
                await gpu_rate.measure(clients, kind, 2, gpu_rate.RATE, 64)
            await asyncio.sleep(3.0)
            await _idle(clients, kinds, idle, out)
            for kind in kinds:
                await _answers(clients, kind, answers, out)
        finally:
            gpu_rate.stop_clients(clients)
    for path in sorted(out.glob("*.collapsed.txt")):
        path.with_suffix(".summary").write_text(profiling.summary(path, top=60) + "\n")
        print(f"profile {path.name}:\n" + profiling.summary(path, top=0))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.one_session", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="app,before", help="comma-separated: app, before, app-1p, before-1p")
    parser.add_argument("--before", type=Path, help="another checkout of this app (client `before`, `before-1p`)")
    parser.add_argument("--answers", type=int, default=15)
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle measurement")
    parser.add_argument("--out", type=Path, default=Path("bench/results/profiles/one-session"))
    args = parser.parse_args()
    kinds = [kind for kind in args.clients.split(",") if kind]
    if any(kind.startswith("before") for kind in kinds) and args.before is None:
        parser.error("clients `before` and `before-1p` need --before DIR")
    asyncio.run(run(kinds, args.before, args.answers, args.idle, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
