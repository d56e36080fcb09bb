"""Start and stop what the benchmark measures: `chainlit run app.py` as a user starts it, and a bare vLLM
launched with the very command line and environment the app would use (chainlit_app.engine builds both).

Only one app and one bare vLLM of ours run at a time; every process started here is stopped (group-wide)
in `stop()`, and vLLM children die with their parent (PR_SET_PDEATHSIG) even if the bench is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.processes import stop_process
from chainlit_app.engine.command import LaunchSpec, redacted_argv
from chainlit_app.engine.supervisor import Supervisor, SupervisorConfig, free_port
from chainlit_app.models import resolve_model
from chainlit_app.remedies import OverridesStore
from chainlit_app.settings import PROJECT_ROOT, Settings

ADMIN_USER = "admin"
MODELS_DIR = Path(os.environ.get("CHAT_MODELS_DIR", PROJECT_ROOT / ".data" / "models"))
MAX_MODEL_LEN = 2048
CHAT_USER = "bench"  # an ordinary user (not admin) for the chat sessions, as most users are
# Our own settings; everything else a user put in CHAT_* (e.g. CHAT_EXTRA_ARGS) reaches both sides alike.
_OURS = ("CHAT_MODE", "CHAT_MODEL", "CHAT_MODELS_DIR", "CHAT_DATA_DIR", "CHAT_LOG_DIR", "CHAT_LOG_FILE",
         "CHAT_ADMIN_USER", "CHAT_ADMIN_PASSWORD", "CHAT_TEMPERATURE", "CHAT_MAX_MODEL_LEN", "CHAT_VLLM_URL",
         "CHAT_API_KEY", "CHAT_SERVED_MODEL_NAME", "CHAT_PORT", "CHAT_USERS")


def bench_settings(data_dir: Path) -> Settings:
    """The settings the app gets from the environment below, built in-process for the bare vLLM."""
    return Settings(model="demo", models_dir=MODELS_DIR, data_dir=data_dir, log_dir=data_dir / "logs",
                    max_model_len=MAX_MODEL_LEN, temperature=0.0, port=0)


def same_command(a: list[str] | None, b: list[str] | None) -> bool:
    """Equal argv apart from the port (free per launch)."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(x == y or (i > 0 and a[i - 1] == "--port") for i, (x, y) in enumerate(zip(a, b, strict=True)))


class BareVllm:
    """vLLM on its own, started by the app's own supervisor with the app's command line and environment
    (LaunchSpec.from_settings), and nothing else: no app, no monitor, no restarts."""

    def __init__(self, data_dir: Path):
        data_dir.mkdir(parents=True, exist_ok=True)
        self.settings = bench_settings(data_dir)
        self.log_file = data_dir / "bare-vllm.log"
        self.supervisor = Supervisor(SupervisorConfig(
            python=self.settings.engine.python,
            # The app's launch including any remedy overrides in the data folder, as the app would start it.
            spec=LaunchSpec.from_settings(self.settings, resolve_model(self.settings),
                                          OverridesStore.in_data_dir(self.settings.storage.data_dir).launch_overrides()),
            log_file=self.log_file,
            max_restarts=0,
        ))
        self.launched_at: float | None = None  # perf_counter, to compare with the clients' first-token times
        self._started: asyncio.Task[None] | None = None

    @property
    def shown_argv(self) -> list[str]:
        return redacted_argv(self.supervisor.argv)

    async def start(self) -> None:
        """Spawn now (as the app's early launch does); `wait_healthy` then waits for the same launch."""
        self.launched_at = time.perf_counter()
        self.supervisor.launch_early()
        self._started = asyncio.create_task(self.supervisor.start(), name="bare-vllm-start")

    async def wait_healthy(self, timeout: float = 900.0) -> float:
        """Seconds from launch until /health answered 200 (the supervisor polls every 0.1 s)."""
        assert self._started is not None
        async with asyncio.timeout(timeout):
            await self._started
        status = self.supervisor.status
        if not self.supervisor.is_ready() or status.ready_at is None or status.started_at is None:
            raise RuntimeError(f"bare vLLM did not become healthy: {status.error}; see {self.log_file}")
        return status.ready_at - status.started_at

    def rss_bytes(self) -> int:
        process = self.supervisor.process
        return process.rss_bytes() if process is not None else 0

    async def stop(self) -> None:
        await self.supervisor.stop()


@dataclass
class AppServer:
    """One `chainlit run app.py` process of ours, with an admin login for /api/diagnostics."""

    url: str
    process: subprocess.Popen[bytes]
    data_dir: Path
    log_path: Path
    password: str
    user_password: str
    launched_at: float  # perf_counter
    launched_epoch: float  # time.time(), to compare with the engine status' epoch times
    _admin_cookies: dict[str, str] | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def engine_log(self) -> Path:
        """CHAT_LOG_DIR/vllm.log: the file the app's vLLM writes and the app's monitor follows."""
        return self.data_dir / "logs" / "vllm.log"

    def rss_bytes(self) -> int:
        """Resident memory of the chainlit process alone (vLLM is a separate process group)."""
        return int(psutil.Process(self.process.pid).memory_info().rss)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def admin_cookies(self) -> dict[str, str]:
        if self._admin_cookies is None:
            from bench.chainlit_client import login

            self._admin_cookies = await login(self.url, ADMIN_USER, self.password)
        return self._admin_cookies

    async def diagnostics(self, http: httpx.AsyncClient | None = None) -> dict[str, Any]:
        """GET /api/diagnostics as the admin (engine state, pid, findings, log tail, metrics)."""
        cookies = await self.admin_cookies()
        if http is None:
            async with httpx.AsyncClient(timeout=10.0) as own:
                response = await own.get(self.url + "/api/diagnostics", cookies=cookies)
        else:
            response = await http.get(self.url + "/api/diagnostics", cookies=cookies)
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    async def engine_state(self) -> str:
        async with httpx.AsyncClient(timeout=2.0) as http:
            try:
                return str((await http.get(self.url + "/healthz")).json()["engine"])
            except (httpx.HTTPError, ValueError, KeyError):
                return ""

    async def wait_http(self, timeout: float = 120.0) -> float:
        """Seconds from launch until the web server answers /healthz."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            if await self.engine_state():
                return time.perf_counter() - self.launched_at
            await asyncio.sleep(0.1)
        raise TimeoutError(f"the app did not serve within {timeout:.0f} s:\n{self.log_text()[-2000:]}")

    async def wait_engine(self, states: tuple[str, ...], timeout: float = 900.0, poll: float = 0.5) -> str:
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            self._check_alive()
            state = await self.engine_state()
            if state in states:
                return state
            if state == "failed":
                break
            await asyncio.sleep(poll)
        raise RuntimeError(f"engine state {state!r}, wanted {states}:\n{self.log_text()[-2000:]}")

    def _check_alive(self) -> None:
        if self.process.poll() is not None:
            raise RuntimeError(f"the app exited with {self.process.returncode}:\n{self.log_text()[-3000:]}")

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM (the app's shutdown hook stops its vLLM), SIGKILL after `timeout`; then make sure no
        process of the app's vLLM group is left."""
        engine_groups = _engine_groups(self.process.pid)
        stop_process(self.process, timeout)
        for pgid in engine_groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)


def _engine_groups(app_pid: int) -> set[int]:
    """Process groups of the app's children (its vLLM leads its own group)."""
    groups = set()
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(app_pid).children(recursive=True):
            with contextlib.suppress(psutil.Error, ProcessLookupError):
                pgid = os.getpgid(child.pid)
                if pgid != os.getpgid(app_pid):
                    groups.add(pgid)
    return groups


def start_app(data_dir: Path, *, admin_password: str | None = None, chat_user: str = CHAT_USER,
              user_password: str | None = None, **env_overrides: str) -> AppServer:
    """`chainlit run app.py --headless` on a free port with the demo model, as a user starts it; returns at
    once (not ready). The benchmarks and the browser tests both start the app here."""
    return start_app_with_flags(data_dir, (), admin_password=admin_password, chat_user=chat_user,
                                user_password=user_password, env_overrides=env_overrides)


def start_app_with_flags(data_dir: Path, flags: tuple[str, ...], *, admin_password: str | None = None,
                         chat_user: str = CHAT_USER, user_password: str | None = None,
                         env_overrides: dict[str, str] | None = None, root: Path = PROJECT_ROOT) -> AppServer:
    """`start_app` with more `chainlit run` flags (e.g. `-w`, which reloads app.py on every change); `root`:
    another checkout of the app to run (before/after figures side by side)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    password = admin_password or secrets.token_urlsafe(16)
    user_password = user_password or secrets.token_urlsafe(16)
    port = free_port()
    env = app_env(data_dir, password, chat_user, user_password, env_overrides, root)
    log_path = data_dir / "app.log"
    with log_path.open("wb") as log:
        epoch = time.time()
        started = time.perf_counter()
        process = subprocess.Popen(
            [str(PROJECT_ROOT / ".venv" / "bin" / "chainlit"), "run", "app.py", "--headless", "--host", "127.0.0.1",
             "--port", str(port), *flags],
            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    return AppServer(f"http://127.0.0.1:{port}", process, data_dir, log_path, password, user_password, started,
                     epoch)


def app_env(data_dir: Path, password: str, chat_user: str, user_password: str,
            env_overrides: dict[str, str] | None = None, root: Path = PROJECT_ROOT) -> dict[str, str]:
    """The environment of an app of ours: the caller's, less our own settings, plus the bench's."""
    env = {k: v for k, v in os.environ.items() if k not in _OURS}
    env.pop("CHAINLIT_AUTH_SECRET", None)
    env.update(
        CHAT_MODEL="demo",
        CHAT_MODELS_DIR=str(MODELS_DIR),
        CHAT_DATA_DIR=str(data_dir),
        CHAT_LOG_DIR=str(data_dir / "logs"),
        CHAT_ADMIN_USER=ADMIN_USER,
        CHAT_ADMIN_PASSWORD=password,
        CHAT_USERS=f"{chat_user}:{user_password}:user",
        CHAT_TEMPERATURE="0",
        CHAT_MAX_MODEL_LEN=str(MAX_MODEL_LEN),
    )
    if root != PROJECT_ROOT:
        env["PYTHONPATH"] = str(root)
    env.update(env_overrides or {})
    return env


def attach_env(bare: BareVllm) -> dict[str, str]:
    """The app in attach mode on the bare vLLM: both paths then measure the very same server."""
    engine = bare.supervisor
    return {"CHAT_MODE": "attach", "CHAT_VLLM_URL": engine.base_url + "/v1", "CHAT_API_KEY": engine.api_key,
            "CHAT_SERVED_MODEL_NAME": engine.spec.served_model_name, "CHAT_LOG_FILE": str(bare.log_file)}
