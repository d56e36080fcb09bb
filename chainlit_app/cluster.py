"""Several app processes behind haproxy, for attach mode on a fast (GPU) vLLM.

One Python process runs every session's turn on one event loop: a burst of first questions is served one
after another (docs/PERFORMANCE.md, "Fifth round"). N `chainlit run` processes with the same settings share
the chat history through PostgreSQL (DATABASE_URL) and sit behind haproxy, which keeps each browser on one
process (Chainlit's socket.io session lives in the process that opened it) with a cookie it inserts.

    CHAT_MODE=attach CHAT_VLLM_URL=... DATABASE_URL=postgresql://... python -m chainlit_app.cluster --processes 2

Spawn mode stays one process: there the app owns its vLLM, and an engine has one owner. The processes share
their findings through the same PostgreSQL (CHAT_SHARED_FINDINGS, set here for them: every panel shows what
any process saw, naming it). This module imports no Chainlit: it only starts, watches and stops processes.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import httpx

from chainlit_app.settings import PROJECT_ROOT

STICKY_COOKIE = "chat_process"  # haproxy's cookie naming the process a browser stays on
POSTGRES_SCHEMES = ("postgres://", "postgresql://", "postgresql+asyncpg://")
START_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 20.0
SHARED_FINDINGS = "CHAT_SHARED_FINDINGS"  # on for the apps unless the operator turned it off
_PR_SET_PDEATHSIG = 1


class ClusterError(RuntimeError):
    """A reason the cluster cannot start, worded for the operator."""


@dataclass(frozen=True)
class Layout:
    """Where the balancer listens and where its processes do (loopback, consecutive ports)."""

    host: str
    port: int
    processes: int
    first_port: int

    @property
    def backend_ports(self) -> list[int]:
        return [self.first_port + i for i in range(self.processes)]


def haproxy_config(layout: Layout, *, check_interval_s: float = 2.0) -> str:
    """The balancer's configuration: round-robin for a browser's first request, then a cookie (inserted by
    haproxy, never seen by the app) keeps it on that process; websockets pass as tunnels; X-Forwarded-For
    tells the app the browser's address (uvicorn trusts it from 127.0.0.1), so the login throttle and
    Chainlit's local-cookie check see the real client. /healthz answers 200 once a process serves. No
    maxconn: haproxy then derives it from the open-files limit it is given."""
    servers = "\n".join(
        f"    server app{i + 1} 127.0.0.1:{port} cookie app{i + 1} check inter {int(check_interval_s * 1000)}ms"
        for i, port in enumerate(layout.backend_ports))
    return f"""global
    log stderr format short local0 warning

defaults
    mode http
    log global
    option httplog
    option dontlognull
    timeout connect 5s
    timeout client 60s
    timeout server 300s
    timeout tunnel 1h
    timeout client-fin 10s
    timeout http-keep-alive 10s

frontend chat
    bind {layout.host}:{layout.port}
    option forwardfor
    default_backend app_processes

backend app_processes
    balance roundrobin
    cookie {STICKY_COOKIE} insert indirect nocache httponly
    option httpchk GET /healthz
    http-check expect status 200
{servers}
"""


def problems(environ: Mapping[str, str], haproxy: str | None, layout: Layout) -> list[str]:
    """Everything that stops the cluster, each said with its fix (empty: go)."""
    found = []
    if haproxy is None:
        found.append("haproxy is not installed (or not on PATH; Debian puts it in /usr/sbin); the cluster needs "
                     "it as its sticky load balancer (Debian/Ubuntu: apt-get install haproxy, or make haproxy).")
    url = environ.get("DATABASE_URL", "").strip()
    if not url.startswith(POSTGRES_SCHEMES):
        shown = "unset" if not url else f"'{url.split(':', 1)[0]}:...'"
        found.append(f"DATABASE_URL must point at PostgreSQL (postgresql://user@host/db), it is {shown}: the "
                     "processes share the chat history through it, and a SQLite file belongs to one process.")
    if environ.get("CHAT_MODE", "spawn").strip() != "attach":
        found.append("CHAT_MODE must be attach (with CHAT_VLLM_URL): in spawn mode the app owns its vLLM, "
                     "and an engine has one owner, so spawn mode runs as one process (make run).")
    if not 1 <= layout.processes <= 64:
        found.append(f"--processes must be between 1 and 64, not {layout.processes}.")
    ports = [layout.port, *layout.backend_ports]
    if min(ports) < 1 or max(ports) > 65535:
        found.append(f"ports out of range: {layout.port} and {layout.backend_ports[0]}..{layout.backend_ports[-1]}.")
    elif layout.port in layout.backend_ports:
        found.append(f"the balancer's port {layout.port} is among the processes' ports; give --first-port.")
    return found


def _die_with_parent() -> None:
    """In the child before exec (this parent runs no threads): SIGTERM when the cluster process dies."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]


class Cluster:
    """The processes of one cluster: N apps, then haproxy in front; stopped together."""

    def __init__(self, layout: Layout, haproxy: str, config_path: Path, environ: Mapping[str, str]):
        self.layout = layout
        self.haproxy = haproxy
        self.config_path = config_path
        self.environ = dict(environ)
        self.environ.setdefault(SHARED_FINDINGS, "true")
        self.children: list[Child] = []

    def _spawn(self, name: str, argv: Sequence[str]) -> Child:
        process = subprocess.Popen(list(argv), cwd=PROJECT_ROOT, env=self.environ, preexec_fn=_die_with_parent)
        child = Child(name, process)
        self.children.append(child)
        return child

    def start_app(self, index: int) -> Child:
        chainlit = Path(sys.executable).with_name("chainlit")
        port = self.layout.backend_ports[index]
        return self._spawn(f"app{index + 1} (port {port})",
                           [str(chainlit), "run", "app.py", "--headless", "--host", "127.0.0.1", "--port", str(port)])

    def wait_serving(self, child: Child, port: int, timeout: float = START_TIMEOUT_S) -> None:
        """Until the process answers /healthz: the first one alone creates the schema and the secrets."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2.0).status_code == 200:
                    return
            time.sleep(0.3)
        raise ClusterError(f"{child.name} did not serve within {timeout:.0f} s")

    def start(self) -> None:
        first = self.start_app(0)
        self.wait_serving(first, self.layout.backend_ports[0])
        rest = [self.start_app(i) for i in range(1, self.layout.processes)]
        for child, port in zip(rest, self.layout.backend_ports[1:], strict=True):
            self.wait_serving(child, port)
        self._spawn("haproxy", [self.haproxy, "-db", "-f", str(self.config_path)])

    def check_alive(self) -> None:
        for child in self.children:
            code = child.process.poll()
            if code is not None:
                raise ClusterError(f"{child.name} exited with {code}")

    def stop(self) -> None:
        """SIGTERM to all (the balancer first, so no new request reaches a stopping app), SIGKILL after
        STOP_TIMEOUT_S."""
        for child in reversed(self.children):
            if child.process.poll() is None:
                child.process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for child in self.children:
            try:
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait(timeout=10)


def check_config(haproxy: str, config_path: Path) -> None:
    done = subprocess.run([haproxy, "-c", "-q", "-f", str(config_path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ClusterError(f"haproxy refused the configuration {config_path}:\n{done.stdout}{done.stderr}")


class _Stop(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum: int, _frame: FrameType | None) -> None:
    raise _Stop(signum)


def run(layout: Layout, environ: Mapping[str, str]) -> int:
    """Start, watch until a signal (0) or a process's exit (1), stop everything."""
    haproxy = shutil.which("haproxy", path=environ.get("PATH"))
    found = problems(environ, haproxy, layout)
    if found or haproxy is None:
        print("cannot start the cluster:\n" + "\n".join(f"  - {p}" for p in found), file=sys.stderr)
        return 2
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    with tempfile.TemporaryDirectory(prefix="chat-cluster-") as folder:
        config_path = Path(folder) / "haproxy.cfg"
        config_path.write_text(haproxy_config(layout))
        cluster = Cluster(layout, haproxy, config_path, environ)
        try:
            check_config(haproxy, config_path)
            cluster.start()
            print(f"\n  Chat console: http://{layout.host}:{layout.port} ({layout.processes} app processes on "
                  f"127.0.0.1:{layout.backend_ports[0]}..{layout.backend_ports[-1]}, haproxy in front)\n",
                  flush=True)
            while True:
                cluster.check_alive()
                time.sleep(0.5)
        except _Stop as stop:
            print(f"cluster: {signal.Signals(stop.signum).name}, stopping {len(cluster.children)} processes",
                  file=sys.stderr, flush=True)
            return 0
        except ClusterError as exc:
            print(f"cluster: {exc}; stopping the others", file=sys.stderr, flush=True)
            return 1
        finally:
            for sig in previous:
                signal.signal(sig, signal.SIG_IGN)  # a second Ctrl-C must not cut the stopping short
            cluster.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def parse_layout(argv: Sequence[str] | None = None) -> tuple[Layout, bool]:
    parser = argparse.ArgumentParser(prog="python -m chainlit_app.cluster", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=2, help="app processes (default 2)")
    parser.add_argument("--host", default="127.0.0.1", help="the balancer's address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")),
                        help="the balancer's port (default $PORT or 8000)")
    parser.add_argument("--first-port", type=int, default=0,
                        help="the first app process's loopback port (default: --port + 1, then consecutive)")
    parser.add_argument("--print-config", action="store_true",
                        help="print the haproxy configuration and exit (to run haproxy yourself)")
    args = parser.parse_args(argv)
    return Layout(args.host, args.port, args.processes, args.first_port or args.port + 1), args.print_config


def main(argv: Sequence[str] | None = None) -> int:
    layout, print_only = parse_layout(argv)
    if print_only:
        print(haproxy_config(layout), end="")
        return 0
    return run(layout, os.environ)


if __name__ == "__main__":
    raise SystemExit(main())
