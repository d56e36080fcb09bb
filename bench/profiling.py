"""Where the app's CPU goes during a run: py-spy attached to the app process, and a text summary.

`py-spy record --format raw` writes collapsed stacks (`frame;frame;... count`, idle samples left out
with `--idle` off); `summary()` turns them into the share of busy samples spent under each library
or function, which is what docs/PERFORMANCE.md quotes. A flame graph (SVG) is written beside it.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

from chainlit_app.settings import PROJECT_ROOT

PY_SPY = PROJECT_ROOT / ".venv" / "bin" / "py-spy"
# (label, substrings of a frame "function (file:line)"): a sample counts for the area of its deepest frame
# that matches one (py-spy writes paths from the package folder on, e.g. "sqlalchemy/orm/session.py").
AREAS = (
    ("history (SQLAlchemy data layer, aiosqlite)", ("sqlalchemy/", "aiosqlite/", "chainlit/data/",
                                                    "chainlit_app/history")),
    ("openai client + httpx (request, SSE read)", ("openai/", "httpx/", "httpx2/", "httpcore/", "h11/", "anyio/")),
    ("websocket frames (wsproto/websockets, deflate)", ("wsproto/", "websockets/", "zlib")),
    ("socket.io / engine.io", ("socketio/", "engineio/")),
    ("JSON encoding/decoding", ("json/",)),
    ("Chainlit message/step/emitter", ("chainlit/message.py", "chainlit/step.py", "chainlit/context.py",
                                       "chainlit/emitter.py", "chainlit/socket.py", "chainlit/session.py")),
    ("chat relay (answer_stream, pacing, saving, cleaning)", ("chainlit_app/answer_stream", "chainlit_app/pacing",
                                                             "chainlit_app/answer_saving", "chainlit_app/engine/stream",
                                                             "chainlit_app/cleaning")),
    ("monitor (log tail, probes, findings)", ("chainlit_app/monitor", "chainlit_app/diagnostics",
                                              "chainlit_app/engine/http")),
    ("uvicorn / starlette HTTP", ("uvicorn/", "starlette/", "fastapi/")),
    ("other app code (chat.py, app.py)", ("chainlit_app/", "app.py")),
)


def available() -> bool:
    return PY_SPY.exists() or shutil.which("py-spy") is not None


@contextlib.asynccontextmanager
async def recording(pid: int, out: Path, fmt: str = "raw", rate: int = 250) -> AsyncIterator[None]:
    """py-spy samples `pid` while the block runs (SIGINT then makes it write `out`)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    spy = subprocess.Popen([str(PY_SPY), "record", "--pid", str(pid), "--rate", str(rate), "--format", fmt,
                            "--output", str(out), "--nonblocking", "--gil"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        try:
            spy.wait(timeout=60)
        except subprocess.TimeoutExpired:
            spy.kill()


def _area(frames: list[str]) -> str:
    for frame in reversed(frames):
        for label, needles in AREAS:
            if any(needle in frame for needle in needles):
                return label
    return "event loop, selectors, asyncio and the rest"


def summary(collapsed: Path, top: int = 25) -> str:
    """Shares of busy samples per area and the functions with the most inclusive samples."""
    areas: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    total = 0
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        if frames and ("select (selectors.py" in frames[-1] or "epoll" in frames[-1]):
            continue  # waiting for I/O: not CPU
        total += count
        areas[_area(frames)] += count
        for frame in set(frames):
            functions[frame] += count
    if not total:
        return "no busy samples"
    lines = [f"busy samples: {total} (each counted once, for its deepest recognised frame)"]
    lines += [f"{100 * n / total:5.1f} %  {label}" for label, n in areas.most_common()]
    lines.append("")
    lines.append("functions by inclusive samples:")
    lines += [f"{100 * n / total:5.1f} %  {frame}" for frame, n in functions.most_common(top)]
    return "\n".join(lines)
