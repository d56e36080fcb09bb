"""Where a burst of first questions spends the app's CPU: N new chats ask at once, answers kept short.

With 16-token answers the run is almost all question handling (the chat's thread and history, Chainlit's
message and task events, the request to the upstream), so py-spy's samples and the app's CPU per
question show what delays the last of a burst's requests. `python -m bench.burst_profile --levels 32,128
--out DIR [--before CHECKOUT]`: per level and app, the app's CPU per question, when the requests reached
the upstream (p50/p95 after the question was sent), and a profile summary (collapsed stacks in DIR).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from bench import profiling
from bench.gpu_figures import RunFigures
from bench.machine import LoadLog
from bench.report import Report
from bench.sections import Context
from bench.sections.gpu_rate import RATE, measure, start_clients, stop_clients

TOKENS = 16
# (stage, substrings of a frame): a busy sample counts for the first stage one of its frames matches
STAGES = (
    ("request: openai builds it (URL, headers, body)", ("_build_request (openai/",)),
    ("request: sent (httpx, connection pool, response headers)", ("open_chat_stream (",)),
    ("answer: relayed (SSE read, stream_token)", ("AnswerStream._relay (",)),
    ("answer: hooks (notices.mark/remark)", ("mark (chainlit_app/notices",)),
    ("answer: ended (send, monitor, log)", ("stream_answer (chainlit_app/chat",)),
    ("question: our on_message before the answer", ("on_message (app.py", "handle_message (chainlit_app/chat")),
    ("question: Chainlit's handling (task events, run step)", ("process_message (chainlit/socket.py",)),
    ("thread: created, named, queued messages flushed", ("init_thread (", "flush_method_queue (",
                                                         "queue_until_user_message", "create_step (chainlit_app")),
    ("history: batched writes", ("WriteBatcher.",)),
    ("history: other SQL (reads, driver thread)", ("sqlalchemy/", "aiosqlite/")),
    ("socket.io and websocket frames", ("socketio/", "engineio/", "websockets/", "wsproto/")),
    ("monitor", ("chainlit_app/monitor", "chainlit_app/diagnostics")),
)


def stages(collapsed: Path) -> str:
    """Busy samples per stage of a question, as shares and as ms per question (at py-spy's rate)."""
    counts = dict.fromkeys([label for label, _ in STAGES] + ["event loop and the rest"], 0)
    total = 0
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        frames = stack.split(";")
        if not count_text.isdigit() or (frames and ("select (selectors.py" in frames[-1] or "epoll" in frames[-1])):
            continue
        total += int(count_text)
        label = next((label for label, needles in STAGES if any(n in f for f in frames for n in needles)),
                     "event loop and the rest")
        counts[label] += int(count_text)
    return "\n".join(f"{100 * n / max(total, 1):5.1f} %  {n:4d} samples  {label}" for label, n in counts.items())


async def burst(ctx: Context, kinds: list[str], levels: list[int], out: Path, before: Path | None) -> None:
    clients = await start_clients(ctx, kinds, before)
    clients.profile_dir = out
    try:
        for kind in kinds:  # untimed: lazy imports, first SQL statements, connection pools
            await measure(clients, kind, 2, RATE, 64)
        for n in levels:
            for kind in kinds:
                run: RunFigures = await measure(clients, kind, n, RATE, TOKENS)
                ctx.say(f"{kind} {n} questions at once: app CPU {run.serving_cpu_s / n * 1000:.1f} ms per question, "
                        f"request at the upstream p95 {run.request_p95_ms:.0f} ms, first-token overhead p50/p95 "
                        f"{run.overhead_p50_ms:.0f}/{run.overhead_p95_ms:.0f} ms, {run.failed} failed")
                await asyncio.sleep(1.0)
    finally:
        stop_clients(clients)
    for path in sorted(out.glob("*.collapsed.txt")):
        path.with_suffix(".summary").write_text(profiling.summary(path, top=60) + "\n")
        ctx.say(f"profile {path.name}:\n" + profiling.summary(path, top=30))
        ctx.say(f"stages {path.name}:\n" + stages(path))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.burst_profile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="32,128", help="comma-separated session counts")
    parser.add_argument("--before", type=Path, help="another checkout of this app, profiled beside it")
    parser.add_argument("--out", type=Path, required=True, help="folder for the collapsed stacks and summaries")
    args = parser.parse_args()
    kinds = ["app"] + (["before"] if args.before else [])
    with tempfile.TemporaryDirectory(prefix="bench-burst-") as tmp:
        ctx = Context(full=False, work_dir=Path(tmp), report=Report(), load=LoadLog([]),
                      say=lambda text: print(text, flush=True))
        asyncio.run(burst(ctx, kinds, [int(x) for x in args.levels.split(",") if x], args.out, args.before))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
