"""This app as N processes behind haproxy (`python -m chainlit_app.cluster`), started as an operator starts it,
and a throwaway PostgreSQL for the history they share, for the GPU-rate section's `--app-processes`.

The figures need the processes apart: the app processes' CPU and memory are summed, haproxy's are read
from its own process and reported apart, and the cluster's parent (it only waits) is left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psutil

from bench.apps import CHAT_USER, app_env
from bench.processes import stop_process
from chainlit_app.cluster import STICKY_COOKIE
from chainlit_app.engine.supervisor import free_port
from chainlit_app.settings import PROJECT_ROOT


@contextlib.contextmanager
def bench_postgres() -> Iterator[str]:
    """tests/postgres.py's throwaway server, with a plain error outside pytest when PostgreSQL is missing."""
    from tests.postgres import PG_BIN, throwaway_postgres

    if not (PG_BIN / "initdb").exists():
        raise RuntimeError(f"PostgreSQL's server programs are missing at {PG_BIN} (make postgres)")
    with throwaway_postgres() as url:
        yield url


@dataclass
class ClusterApp:
    """One `python -m chainlit_app.cluster` run: its parent, N app processes and haproxy."""

    process: subprocess.Popen[bytes]
    url: str
    backend_ports: list[int]
    log_path: Path
    password: str
    user_password: str

    @property
    def pid(self) -> int:
        return self.process.pid

    def _children(self) -> list[psutil.Process]:
        with contextlib.suppress(psutil.Error):
            return list(psutil.Process(self.process.pid).children())
        return []

    @property
    def app_pids(self) -> list[int]:
        return [c.pid for c in self._children() if "haproxy" not in c.name()]

    @property
    def balancer_pid(self) -> int | None:
        return next((c.pid for c in self._children() if "haproxy" in c.name()), None)

    async def wait_engine(self, states: tuple[str, ...], timeout: float = 300.0) -> None:
        """Until every process reports one of `states` on its own /healthz and the balancer serves."""
        deadline = time.monotonic() + timeout
        urls = [f"http://127.0.0.1:{port}/healthz" for port in self.backend_ports] + [self.url + "/healthz"]
        async with httpx.AsyncClient(timeout=2.0) as http:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the cluster exited with {self.process.returncode}:\n"
                                       f"{self.log_path.read_text(errors='replace')[-3000:]}")
                shown = []
                for url in urls:
                    with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
                        shown.append(str((await http.get(url)).json()["engine"]))
                if len(shown) == len(urls) and all(state in states for state in shown):
                    return
                await asyncio.sleep(0.5)
        raise TimeoutError(f"the cluster was not {states} within {timeout:.0f} s:\n"
                           f"{self.log_path.read_text(errors='replace')[-3000:]}")

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM to the parent, which stops haproxy and the apps; SIGKILL to what is left after `timeout`."""
        children = self._children()
        stop_process(self.process, timeout)
        for child in children:
            with contextlib.suppress(psutil.Error):
                child.kill()


def start_cluster(data_dir: Path, processes: int, env_overrides: dict[str, str]) -> ClusterApp:
    """`python -m chainlit_app.cluster --processes N` on free ports (the apps on consecutive ones);
    returns at once (not ready)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    password, user_password = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    env = app_env(data_dir, password, CHAT_USER, user_password, env_overrides)
    # the apps' run first, then a balancer port outside it: a port the OS handed out and that was closed again
    # may be handed out again, and a balancer picked first sat on the second app's port (address already in use)
    first = _free_run(processes)
    port = next(p for p in iter(free_port, 0) if not first <= p < first + processes)
    log_path = data_dir / "cluster.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "chainlit_app.cluster", "--processes", str(processes), "--port", str(port),
             "--first-port", str(first)],
            cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    return ClusterApp(process, f"http://127.0.0.1:{port}", [first + i for i in range(processes)], log_path,
                      password, user_password)


def _free_run(count: int) -> int:
    """The first of `count` consecutive free loopback ports."""
    for _ in range(50):
        first = free_port()
        if first + count < 65536 and all(_free(first + i) for i in range(1, count)):
            return first
    raise RuntimeError(f"no {count} consecutive free ports found")


def _free(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def postgres_pids(url: str) -> list[int]:
    """The server processes of the PostgreSQL at `url`'s port on this machine: the postmaster (found by its
    `-p PORT`) and its children (the app processes' pooled connections, the writers)."""
    port = urlsplit(url).port if url else None
    if port is None:
        return []
    for proc in psutil.process_iter(["name", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if proc.info.get("name") == "postgres" and "-p" in cmdline and str(port) in cmdline:
            with contextlib.suppress(psutil.Error):
                return [proc.pid, *(c.pid for c in proc.children())]
    return []


def machine_busy_s() -> float:
    """CPU seconds all cores spent on anything but idling, since boot."""
    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def spread(cookies: dict[str, str]) -> dict[str, str]:
    """A login's cookies without the balancer's: each session then gets a process of its own choosing (round
    robin) at its first request, as separate browsers would."""
    return {name: value for name, value in cookies.items() if name != STICKY_COOKIE}
