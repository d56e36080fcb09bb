"""The replay upstream (bench/replay.py) as a process of its own, and the seed app (bench/seed_app) beside it.

Its CPU is read from its own process (psutil) and reported apart from the app's and the clients'.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.processes import stop_process
from chainlit_app.engine.supervisor import free_port
from chainlit_app.settings import PROJECT_ROOT

MODEL = "replay-smollm2"
SEED_APP = Path(__file__).resolve().parent / "seed_app" / "app.py"


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process (0 once it is gone)."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system)


async def _wait_served(process: subprocess.Popen[bytes], url: str, log_path: Path, what: str, timeout: float,
                       interval: float) -> bool:
    """Until `url` answers 200 (True) or `timeout` passes (False); a child that exits meanwhile is an error
    with the end of its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited: {log_path.read_text()[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            async with httpx.AsyncClient(timeout=1.0) as http:
                if (await http.get(url)).status_code == 200:
                    return True
        await asyncio.sleep(interval)
    return False


@dataclass
class Upstream:
    process: subprocess.Popen[bytes]
    url: str
    api_key: str
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    async def call(self, path: str, body: dict[str, Any] | None = None) -> Any:
        async with httpx.AsyncClient(base_url=self.url, timeout=30.0) as http:
            response = await (http.post(path, json=body) if body is not None else http.get(path))
            response.raise_for_status()
            return response.json()

    async def configure(self, **pace: float) -> None:
        await self.call("/replay/config", dict(pace))

    async def take_records(self) -> list[dict[str, Any]]:
        """The requests served since the last call (then forgotten)."""
        records: list[dict[str, Any]] = (await self.call("/replay/stats"))["requests"]
        await self.call("/replay/reset", {})
        return records

    def stop(self) -> None:
        stop_process(self.process, timeout=10)


async def start_upstream(work_dir: Path, rate: float, first_token_delay: float,
                         streams: Path | None = None) -> Upstream:
    """`streams`: a folder of .sse bodies to replay instead of the recorded ones (bench/answer_markup.py)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    port, key = free_port(), secrets.token_urlsafe(16)
    log_path = work_dir / "replay.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.replay", "--port", str(port), "--model", MODEL, "--api-key", key,
             "--rate", str(rate), "--first-token-delay", str(first_token_delay),
             *(["--streams", str(streams)] if streams is not None else [])],
            cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    upstream = Upstream(process, f"http://127.0.0.1:{port}", key, log_path)
    if await _wait_served(process, upstream.url + "/health", log_path, "the replay upstream", 30, 0.1):
        return upstream
    upstream.stop()
    raise TimeoutError("the replay upstream did not answer /health within 30 s")


@dataclass
class SeedApp:
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        stop_process(self.process, timeout=20)


async def start_seed_app(work_dir: Path, upstream: Upstream) -> SeedApp:
    """`chainlit run bench/seed_app/app.py` in a folder of its own (Chainlit writes .chainlit/ there)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log_path = work_dir / "seed.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHAT_", "CHAINLIT_"))}
    env.update(SEED_API_BASE_URL=upstream.url + "/v1", SEED_API_KEY=upstream.api_key, SEED_MODEL=MODEL)
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(PROJECT_ROOT / ".venv" / "bin" / "chainlit"), "run", str(SEED_APP), "--headless",
             "--host", "127.0.0.1", "--port", str(port)],
            cwd=work_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
    seed = SeedApp(process, f"http://127.0.0.1:{port}", log_path)
    if await _wait_served(process, seed.url + "/", log_path, "the seed app", 120, 0.2):
        return seed
    seed.stop()
    raise TimeoutError("the seed app did not serve within 120 s")
