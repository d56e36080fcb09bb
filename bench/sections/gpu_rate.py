"""Section 6: GPU token rates against the replay upstream (bench/replay.py), three clients side by side.

One upstream process replays a recorded vLLM stream at 200 tokens/s per answer (and one answer at
2,000 tokens/s); the same N questions at once go (1) straight to it with the openai client, (2) through
this app in attach mode, as browsers over socket.io, (3) through the seed 002 app (bench/seed_app), in
an order that rotates between levels. `--before DIR` adds a fourth client: this app run from another
checkout (e.g. `git archive main`), for before/after figures in one run. `--app-processes 1,2` adds
this app on a throwaway PostgreSQL as one process (`app-1p`) and as N processes behind haproxy
(`app-Np`, `python -m chainlit_app.cluster`), the CPU of the app processes summed, haproxy's apart; the
client `before-1p` is the `--before` checkout as one process on that PostgreSQL.

`python -m bench.sections.gpu_rate [--full] [--levels 1,32] [--clients app,seed,direct] [--app-processes 1,2]`
runs it alone (no vLLM needed); `make bench` runs it in quick mode, `python -m bench --full` fully.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from bench import profiling
from bench.apps import CHAT_USER, AppServer, start_app_with_flags
from bench.chainlit_client import login
from bench.cluster_apps import ClusterApp, bench_postgres, machine_busy_s, postgres_pids, spread, start_cluster
from bench.gpu_clients import app_answers, close_sessions, direct_answers, open_sessions
from bench.gpu_figures import RunFigures, figures, knee
from bench.machine import LoadLog
from bench.replay_streams import load_streams
from bench.report import Report, Row
from bench.sections import Context
from bench.upstream import MODEL, SeedApp, Upstream, cpu_seconds, start_seed_app, start_upstream
from chainlit_app.settings import PROJECT_ROOT

SECTION = "6 GPU rates"
RATE = 200.0
FAST_RATE = 2000.0
FIRST_TOKEN_DELAY = 0.05


@dataclass
class Clients:
    upstream: Upstream
    apps: dict[str, AppServer | SeedApp | ClusterApp] = field(default_factory=dict)  # "app", "seed", "app-2p"...
    cookies: dict[str, dict[str, str]] = field(default_factory=dict)
    profile_dir: Path | None = None  # py-spy on our app(s) during every measured run, when set
    database_url: str = ""  # the throwaway PostgreSQL of the `app-Np` clients (its CPU is reported apart)


def processes_of(kind: str) -> int:
    """`app-2p` -> 2, `before-1p` (the --before checkout as one process on PostgreSQL) -> 1; 0 for the others."""
    if kind == "before-1p":
        return 1
    return int(kind[4:-1]) if kind.startswith("app-") and kind.endswith("p") and kind[4:-1].isdigit() else 0


def _serving_pids(server: AppServer | SeedApp | ClusterApp) -> list[int]:
    return server.app_pids if isinstance(server, ClusterApp) else [server.pid]


def _rss_sum(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            total += psutil.Process(pid).memory_info().rss / 2**20
    return total


async def _rss_peak(pids: list[int], peak: list[float], stop: asyncio.Event) -> None:
    """The peak of the processes' summed RSS, sampled every 200 ms."""
    while not stop.is_set():
        peak[0] = max(peak[0], _rss_sum(pids))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.2):
                await stop.wait()


async def measure(clients: Clients, kind: str, n: int, rate: float, tokens: int, fmt: str = "raw") -> RunFigures:
    upstream = clients.upstream
    await upstream.configure(rate=rate, max_tokens=tokens)
    await upstream.take_records()
    run_id = secrets.token_hex(3)
    tags = [f"{kind}-{n}-{i}-{run_id}" for i in range(n)]
    server = clients.apps.get(kind)
    sessions = []
    if server is not None:
        welcome = kind != "seed"
        sessions = await open_sessions(server.url, CHAT_USER if welcome else None, clients.cookies.get(kind, {}),
                                       n, welcome=welcome, settings={"max_tokens": tokens} if welcome else None)
    peak = [float("nan")]
    stop = asyncio.Event()
    pids = _serving_pids(server) if server is not None else []
    balancer = server.balancer_pid if isinstance(server, ClusterApp) else None
    sampler = asyncio.create_task(_rss_peak(pids, peak, stop)) if server is not None else None
    if server is not None:
        peak[0] = 0.0
    serving0 = [cpu_seconds(pid) for pid in pids]
    balancer0 = cpu_seconds(balancer) if balancer is not None else 0.0
    database = postgres_pids(clients.database_url) if processes_of(kind) else []
    database0 = {pid: cpu_seconds(pid) for pid in database}
    up0, bench0 = cpu_seconds(upstream.pid), time.process_time()
    busy0, wall0 = machine_busy_s(), time.monotonic()
    spy: contextlib.AbstractAsyncContextManager[None] = contextlib.nullcontext()
    if clients.profile_dir is not None and isinstance(server, AppServer):
        suffix = "svg" if fmt == "flamegraph" else "collapsed.txt"
        spy = profiling.recording(server.pid, clients.profile_dir / f"{kind}-{n}x{rate:.0f}.{suffix}", fmt)
    try:
        timeout = 120 + 3 * tokens / rate
        async with spy:
            if server is None:
                answers = await direct_answers(upstream.url, upstream.api_key, MODEL, tags, tokens)
            else:
                answers = await app_answers(sessions, tags, timeout)
    finally:
        stop.set()
        if sampler is not None:
            await sampler
    bench_cpu = time.process_time() - bench0
    busy, wall = machine_busy_s() - busy0, time.monotonic() - wall0
    result = figures(kind, n, rate, answers, await upstream.take_records(), load_streams(MODEL)[0])
    result.upstream_cpu_s = cpu_seconds(upstream.pid) - up0
    result.client_cpu_s = bench_cpu
    split = [cpu_seconds(pid) - before for pid, before in zip(pids, serving0, strict=True)]
    result.serving_cpu_s = sum(split) if server is not None else bench_cpu
    result.serving_split = tuple(split) if len(split) > 1 else ()
    result.balancer_cpu_s = cpu_seconds(balancer) - balancer0 if balancer is not None else None
    if database:
        result.database_cpu_s = sum(max(0.0, cpu_seconds(pid) - before) for pid, before in database0.items())
    result.machine_busy = busy / (wall * (psutil.cpu_count() or 1)) if wall > 0 else float("nan")
    result.rss_peak_mb = peak[0]
    await close_sessions(sessions)
    return result


async def start_clients(ctx: Context, kinds: list[str], before: Path | None, database_url: str = "") -> Clients:
    upstream = await start_upstream(ctx.work_dir / "replay", RATE, FIRST_TOKEN_DELAY)
    clients = Clients(upstream)
    log_file = ctx.work_dir / "replay" / "replay.log"
    attach = {"CHAT_MODE": "attach", "CHAT_VLLM_URL": upstream.url + "/v1", "CHAT_API_KEY": upstream.api_key,
              "CHAT_SERVED_MODEL_NAME": MODEL, "CHAT_LOG_FILE": str(log_file)}
    try:
        for kind in kinds:
            if kind == "seed":
                clients.apps[kind] = await start_seed_app(ctx.work_dir / "seed", upstream)
            elif kind in ("app", "before"):
                root = before if kind == "before" and before is not None else PROJECT_ROOT
                app = start_app_with_flags(ctx.work_dir / kind, (), env_overrides=attach, root=root)
                clients.apps[kind] = app
                await app.wait_engine(("attached",), timeout=300)
                clients.cookies[kind] = await login(app.url, CHAT_USER, app.user_password)
            elif processes_of(kind):
                shared = {**attach, "DATABASE_URL": database_url}
                if processes_of(kind) == 1:  # one process, no balancer: the single-process case on PostgreSQL
                    root = before if kind == "before-1p" and before is not None else PROJECT_ROOT
                    single = start_app_with_flags(ctx.work_dir / kind, (), env_overrides=shared, root=root)
                    clients.apps[kind] = single
                    await single.wait_engine(("attached",), timeout=300)
                    clients.cookies[kind] = await login(single.url, CHAT_USER, single.user_password)
                else:
                    cluster = start_cluster(ctx.work_dir / kind, processes_of(kind), shared)
                    clients.apps[kind] = cluster
                    await cluster.wait_engine(("attached",), timeout=600)
                    clients.cookies[kind] = spread(await login(cluster.url, CHAT_USER, cluster.user_password))
    except BaseException:
        stop_clients(clients)
        raise
    return clients


def stop_clients(clients: Clients) -> None:
    for server in clients.apps.values():
        server.stop()
    clients.upstream.stop()


async def run(ctx: Context, kinds: list[str] | None = None, levels: list[int] | None = None,
              before: Path | None = None, profile_dir: Path | None = None,
              app_processes: list[int] | None = None) -> list[RunFigures]:
    kinds = kinds or (["app", "seed", "direct"] + (["before"] if before else []))
    kinds = kinds + [f"app-{n}p" for n in app_processes or []]
    with contextlib.ExitStack() as stack:
        database_url = stack.enter_context(bench_postgres()) if any(map(processes_of, kinds)) else ""
        return await _run(ctx, kinds, levels, before, profile_dir, database_url)


async def _run(ctx: Context, kinds: list[str], levels: list[int] | None, before: Path | None,
               profile_dir: Path | None, database_url: str) -> list[RunFigures]:
    levels = levels or ([1, 32, 128] if not ctx.full else [1, 8, 32, 64, 128, 256, 512])
    tokens = ctx.pick(256, 512)
    ctx.say(f"  GPU rates: replay upstream, {tokens}-token answers at {RATE:.0f} tok/s, levels {levels}, "
            f"clients {kinds}")
    clients = await start_clients(ctx, kinds, before, database_url)
    clients.profile_dir = profile_dir
    clients.database_url = database_url
    runs: list[RunFigures] = []
    try:
        for kind in kinds:  # untimed: lazy imports, first SQL statements, connection pools (of every process)
            await measure(clients, kind, 2 * max(1, processes_of(kind)), RATE, 64)
        for index, n in enumerate(levels):
            order = kinds[index % len(kinds):] + kinds[:index % len(kinds)]
            for kind in order:
                runs.append(await measure(clients, kind, n, RATE, tokens))
                ctx.say("    " + runs[-1].line())
                await asyncio.sleep(1.0)
        fast = []
        for kind in kinds:
            fast.append(await measure(clients, kind, 1, FAST_RATE, 1024))
            ctx.say("    " + fast[-1].line())
        if profile_dir is not None:  # flame graphs (not counted): the busiest level again
            for kind in kinds:
                if kind in ("app", "before"):
                    await measure(clients, kind, max(levels), RATE, tokens, fmt="flamegraph")
            for path in sorted(profile_dir.glob("*.collapsed.txt")):
                path.with_suffix(".summary").write_text(profiling.summary(path) + "\n")
                ctx.say(f"  profile {path.name}:\n" + profiling.summary(path, top=12))
    finally:
        stop_clients(clients)
    report_rows(ctx, runs, fast, kinds)
    return runs + fast


def _cells(runs: dict[str, RunFigures], kinds: list[str], value: str) -> str:
    return " / ".join(value.format(r=runs[k], cpu=runs[k].per_1k(runs[k].serving_cpu_s)) for k in kinds if k in runs)


def report_rows(ctx: Context, runs: list[RunFigures], fast: list[RunFigures], kinds: list[str]) -> None:
    names = " / ".join(kinds)
    for n in sorted({r.sessions for r in runs}):
        at = {r.client: r for r in runs if r.sessions == n}
        app = at.get("app")
        label = f"{n} × {RATE:.0f} tok/s ({names})"
        ctx.report.add(Row(SECTION, f"{label}: delivered ratio", _cells(at, kinds, "{r.delivered_ratio:.3f}"),
                           ">= 0.98 (app)", app.delivered_ratio >= 0.98 if app else None,
                           "; ".join(r.line() for r in at.values())))
        ctx.report.add(Row(SECTION, f"{label}: first-token overhead p50/p95 ms",
                           _cells(at, kinds, "{r.overhead_p50_ms:.0f}/{r.overhead_p95_ms:.0f}"),
                           "p95 <= 50 ms (app)" if n == 128 else "-",
                           app.overhead_p95_ms <= 50 if app and n == 128 else None))
        target = {1: 0.3, 32: 0.1}.get(n)
        ctx.report.add(Row(SECTION, f"{label}: app CPU s per 1,000 tokens", _cells(at, kinds, "{cpu:.3f}"),
                           f"<= {target} (app)" if target else "-",
                           app.per_1k(app.serving_cpu_s) <= target if app and target else None,
                           "direct: the benchmark process running the openai client"))
        ctx.report.add(Row(SECTION, f"{label}: socket.io events (direct: chunks) per answer / RSS peak MB",
                           _cells(at, kinds, "{r.events_per_answer:.0f} ev, {r.rss_peak_mb:.0f} MB")))
        clustered = [k for k in kinds if processes_of(k) > 1 and k in at]
        if clustered:
            ctx.report.add(Row(SECTION, f"{label}: haproxy CPU s per 1,000 tokens; app CPU s per process "
                               f"({' / '.join(clustered)})",
                               " / ".join(f"{at[k].per_1k(at[k].balancer_cpu_s or 0.0):.3f}; "
                                          + "+".join(f"{c:.2f}" for c in at[k].serving_split) for k in clustered)))
    at = {r.client: r for r in fast}
    ctx.report.add(Row(SECTION, f"1 × {FAST_RATE:.0f} tok/s ({names}): delivered ratio / UI updates per s / tail lag",
                       _cells(at, kinds, "{r.delivered_ratio:.3f}, {r.updates_per_s:.0f}/s, "
                              "{r.tail_lag_p95_ms:.0f} ms")))
    knees = {kind: knee([r for r in runs if r.client == kind]) for kind in kinds if kind != "direct"}
    ctx.report.add(Row(SECTION, "knee: aggregate tok/s where first-token p95 overhead passes 100 ms",
                       " / ".join(f"{k} {v[0]:.0f}" if v[0] else f"{k} none" for k, v in knees.items()),
                       ">= 5 × seed (app)",
                       detail="; ".join(f"{k}: {v[1]}" for k, v in knees.items())))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sections.gpu_rate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--levels", default="", help="comma-separated session counts")
    parser.add_argument("--clients", default="",
                        help="comma-separated: app, seed, direct, before, before-1p (--before on PostgreSQL)")
    parser.add_argument("--before", type=Path, help="another checkout of this app to run as client `before`")
    parser.add_argument("--profile", type=Path, help="folder for py-spy profiles of our app(s) (collapsed + SVG)")
    parser.add_argument("--app-processes", default="",
                        help="comma-separated process counts: this app on PostgreSQL as 1 process, and as N "
                             "processes behind haproxy (python -m chainlit_app.cluster), e.g. 1,2,3")
    args = parser.parse_args()
    report = Report()
    with tempfile.TemporaryDirectory(prefix="bench-gpu-") as tmp:
        ctx = Context(full=args.full, work_dir=Path(tmp), report=report, load=LoadLog([]),
                      say=lambda text: print(text, flush=True))
        levels = [int(x) for x in args.levels.split(",") if x] or None
        kinds = [x for x in args.clients.split(",") if x] or None
        processes = [int(x) for x in args.app_processes.split(",") if x] or None
        asyncio.run(run(ctx, kinds, levels, args.before, args.profile, processes))
    print(report.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
