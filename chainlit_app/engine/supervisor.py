"""Spawn vLLM, wait until /health says ready, watch it, restart it with backoff, stop the group."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from tenacity import AsyncRetrying, RetryError, retry_if_exception_type, stop_after_attempt, wait_exponential

from chainlit_app.engine.command import LaunchSpec, build_argv, build_env, redacted_argv
from chainlit_app.engine.http import EngineClient
from chainlit_app.engine.logfiles import latest_progress, launch_banner, read_tail, rotate
from chainlit_app.engine.process import GroupProcess
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.i18n import Msg
from chainlit_app.private_files import open_private

log = logging.getLogger(__name__)
HEALTH_POLL_SECONDS = 0.1


class EngineStartError(RuntimeError):
    """The server exited (or never became ready) during start-up; carries the log's last lines."""

    def __init__(self, message: str, tail: list[str], returncode: int | None):
        super().__init__(message)
        self.tail = tail
        self.returncode = returncode


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class SupervisorConfig:
    python: Path
    spec: LaunchSpec
    log_file: Path
    log_keep: int = 5
    stop_grace: float = 10.0
    max_restarts: int = 3
    startup_timeout: float = 900.0
    backoff_max: float = 30.0
    fixed_port: bool = False


Listener = Callable[[EngineStatus], None]


class Supervisor:
    """Owns one vLLM server: the only place that starts, restarts or stops it."""

    def __init__(self, config: SupervisorConfig):
        self.config = config
        self.spec = config.spec
        self.status = EngineStatus(
            model=config.spec.model,
            served_model_name=config.spec.served_model_name,
            host=config.spec.host,
            log_file=str(config.log_file),
        )
        self._process: GroupProcess | None = None
        self._log_handle: BinaryIO | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._early_started: float | None = None
        self._stopping = False
        self._listeners: list[Listener] = []
        self.argv: list[str] = []  # the last launch's command line (the key goes by environment, never here)

    # -- public API -------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return self.spec.base_url

    @property
    def api_key(self) -> str:
        return self.spec.api_key

    @property
    def process(self) -> GroupProcess | None:
        return self._process

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    async def start(self) -> None:
        """Launch and wait until ready, retrying failed starts with backoff; FAILED when all fail."""
        self._stopping = False
        try:
            await self._launch_with_retries(first=True)
        except EngineStartError:
            return
        self._watch_task = asyncio.create_task(self._watch(), name="vllm-watch")

    async def wait_ready(self, timeout: float | None = None) -> bool:
        """True once ready; False on timeout or when the engine has given up."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._ready.is_set():
            if self.status.state in (EngineState.FAILED, EngineState.STOPPED):
                return False
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(1.0, remaining or 1.0)):
                    await self._ready.wait()
        return True

    def is_ready(self) -> bool:
        return self._ready.is_set()

    async def stop(self) -> None:
        """SIGTERM the group, SIGKILL it after the grace period; no process is left behind."""
        self._stopping = True
        if self._watch_task is not None:
            self._watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch_task
            self._watch_task = None
        if self._process is not None and (self._process.alive() or await self._process.has_members()):
            self._set(state=EngineState.STOPPING)
            code = await self._process.stop(self.config.stop_grace)
            self._set(last_exit_code=code)
        if self._process is not None:
            self._process.stop_reaper()
        self._ready.clear()
        self._close_log()
        self._set(state=EngineState.STOPPED, pid=None)

    async def restart(self, spec: LaunchSpec | None = None) -> None:
        """Stop the server and launch it again, with a fresh port and key (an admin's restart); with `spec`,
        the next launches use it (a remedy's corrected settings; its port, if any, is kept fixed)."""
        await self.stop()
        if spec is not None:
            self.spec = self.config.spec = spec
            self.config.fixed_port = bool(spec.port)
            self.status = replace(self.status, model=spec.model, served_model_name=spec.served_model_name)
        await self.start()

    # -- internals --------------------------------------------------------------------------------
    def _set(self, **changes: object) -> None:
        self.status = replace(self.status, **changes)  # type: ignore[arg-type]
        for listener in list(self._listeners):
            try:
                listener(self.status)
            except Exception:  # a listener's bug must not kill supervision
                log.exception("engine status listener failed")

    async def _launch_with_retries(self, first: bool) -> None:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(max(1, self.config.max_restarts + (1 if first else 0))),
            wait=wait_exponential(multiplier=1, min=1, max=self.config.backoff_max),
            retry=retry_if_exception_type(EngineStartError),
            reraise=False,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    if self._stopping:
                        raise asyncio.CancelledError
                    if attempt.retry_state.attempt_number > 1 or not first:
                        self._set(state=EngineState.RESTARTING, restarts=self.status.restarts + 1)
                    await self._launch_once()
        except RetryError as exc:
            last = exc.last_attempt.exception()
            message = str(last) if last else Msg("engine.did_not_start")
            tries = exc.last_attempt.attempt_number
            log.error("vLLM gave up after %d failed start(s): %s", tries, message)
            self._set(
                state=EngineState.FAILED,
                error=Msg("engine.gave_up", message=message, tries=tries, log=self.config.log_file),
                pid=None,
            )
            raise last if isinstance(last, EngineStartError) else EngineStartError(message, [], None) from exc

    def launch_early(self) -> None:
        """Spawn vLLM now, synchronously, before any event loop runs (the app calls this while it is still
        importing; vLLM's own start-up is the long pole). `start()` then waits for this launch."""
        try:
            self._early_started = self._spawn()
        except EngineStartError as exc:
            log.warning("early launch failed (%s); start() will launch again", exc)

    async def _launch_once(self) -> None:
        started, self._early_started = self._early_started, None
        if started is None:
            started = self._spawn()
        try:
            await self._wait_healthy(started)
        except EngineStartError:
            await self._end_group()
            raise

    async def _end_group(self) -> None:
        """A start failed: whatever its group still runs goes now, with its reaper, before any retry.
        The server may exit and leave its engine core running (on a GPU, holding the memory the next
        start needs)."""
        if self._process is None:
            return
        await self._process.stop(grace=min(2.0, self.config.stop_grace))
        self._process.stop_reaper()

    def _spawn(self) -> float:
        """A fresh port and key, the log rotated and headed, the process spawned; returns the launch time."""
        if not self.config.fixed_port or not self.spec.port:
            self.spec = replace(self.spec, port=free_port(self.spec.host))
        self.spec = replace(self.spec, api_key=secrets.token_urlsafe(24))
        self._close_log()
        rotate(self.config.log_file, self.config.log_keep)
        handle = os.fdopen(open_private(self.config.log_file), "ab", buffering=0)  # 0600: it names paths, requests
        self._log_handle = handle
        argv = self.argv = build_argv(self.config.python, self.spec)
        handle.write(launch_banner(redacted_argv(argv)))
        env = build_env(self.spec)
        if self._process is not None:
            self._process.kill_now()  # never two groups: a leftover of the last launch goes first
        self._process = GroupProcess(argv, env, handle)
        self._ready.clear()
        started = time.time()
        self._set(
            state=EngineState.STARTING if self.status.launches == 0 else EngineState.RESTARTING,
            port=self.spec.port,
            pid=None,
            started_at=started,
            ready_at=None,
            progress=Msg("progress.launching"),
            error=None,
            launches=self.status.launches + 1,
        )
        try:
            self._process.spawn()
        except OSError as exc:
            raise EngineStartError(f"cannot run {self.config.python}: {exc}", [], None) from exc
        self._set(pid=self._process.pid)
        log.info("vLLM launched (pid %s, port %s), log: %s", self._process.pid, self.spec.port,
                 self.config.log_file)
        return started

    async def _wait_healthy(self, started: float) -> None:
        assert self._process is not None
        server = EngineClient(self.base_url, None, timeout=2.0)
        next_progress_at = 0.0
        try:
            while True:
                if not self._process.alive():
                    code = await self._process.wait()
                    tail = read_tail(self.config.log_file, 30)
                    self._set(state=EngineState.CRASHED, last_exit_code=code, pid=None,
                              error=f"vLLM exited with code {code} before it was ready")
                    raise EngineStartError(f"vLLM exited with code {code} before it was ready", tail, code)
                if await server.health() and self._process.alive():
                    now = time.time()
                    self._set(state=EngineState.READY, ready_at=now, startup_seconds=round(now - started, 1),
                              progress=Msg("progress.ready"), error=None)
                    self._ready.set()
                    log.info("vLLM ready on port %s after %.1f s", self.spec.port, now - started)
                    return
                if time.time() - started > self.config.startup_timeout:
                    tail = read_tail(self.config.log_file, 30)
                    await self._process.stop(self.config.stop_grace)
                    raise EngineStartError(
                        f"vLLM was not ready after {self.config.startup_timeout:.0f} s", tail, None
                    )
                if time.monotonic() >= next_progress_at:
                    next_progress_at = time.monotonic() + 0.5
                    progress = latest_progress(read_tail(self.config.log_file, 40))
                    if progress and progress != self.status.progress:
                        self._set(progress=progress)
                # A refused connection to localhost costs microseconds; polling often means the app
                # knows vLLM is ready within 0.1 s of it (cold start is measured against bare vLLM).
                await asyncio.sleep(HEALTH_POLL_SECONDS)
        finally:
            await server.aclose()

    async def _watch(self) -> None:
        """Restart the server when it exits on its own; give up after repeated failed starts."""
        while not self._stopping:
            assert self._process is not None
            code = await self._process.wait()
            if self._stopping:
                return
            self._ready.clear()
            log.warning("vLLM exited unexpectedly with code %s; restarting", code)
            self._set(state=EngineState.CRASHED, last_exit_code=code, pid=None,
                      error=f"vLLM exited unexpectedly with code {code}")
            # Reap what is left of the group (engine core, workers) before the next launch.
            await self._process.stop(grace=2.0)
            self._process.stop_reaper()
            try:
                await self._launch_with_retries(first=False)
            except (EngineStartError, asyncio.CancelledError):
                return

    def _close_log(self) -> None:
        handle = self._log_handle
        self._log_handle = None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()
