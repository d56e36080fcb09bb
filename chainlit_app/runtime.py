"""The one application state object: settings, the engine (spawned or attached) and its client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from chainlit_app.attach import check_server
from chainlit_app.doctor import Check, config_from_settings, is_blocking, run_preflight
from chainlit_app.engine.command import LaunchSpec, split_extra_args
from chainlit_app.engine.facts import facts_are_cached
from chainlit_app.engine.hardware import has_nvidia_gpu
from chainlit_app.engine.probe import normalise_base_url
from chainlit_app.engine.supervisor import EngineState, EngineStatus, Supervisor, SupervisorConfig
from chainlit_app.models import ResolvedModel, resolve_model, resolve_model_at_once
from chainlit_app.monitor import Endpoint, Monitor
from chainlit_app.pacing import StreamPace
from chainlit_app.settings import Settings

if TYPE_CHECKING:
    import openai  # imported when the first client is made: the app can launch vLLM before this import

log = logging.getLogger(__name__)


class Runtime:
    """Starts and stops the engine for the app, and hands the chat a client for the current launch."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.resolved: ResolvedModel | None = None
        self.supervisor: Supervisor | None = None
        self._attached_status = EngineStatus(state=EngineState.IDLE)
        self._prepare_status = EngineStatus(state=EngineState.PREPARING, progress="resolving the model")
        self._start_task: asyncio.Task[None] | None = None
        self._client: openai.AsyncOpenAI | None = None
        self._client_key: tuple[str, str] | None = None
        self._early_checks: list[Check] = []
        self._early_launched: bool | None = None  # tried already: at interpreter start (prelaunch) or in app.py
        self.started_at = time.time()
        self.monitor = Monitor(self._log_path, self._endpoint)
        self.pace = StreamPace()  # the answers' token rates under load: how many tokens per chunk to ask for

    # -- lifecycle --------------------------------------------------------------------------------
    def start_background(self) -> None:
        """Begin start-up without blocking the web server (vLLM needs 1 to 3 minutes on a CPU)."""
        self.monitor.start()
        self._start_task = asyncio.create_task(self._start(), name="engine-start")

    def _log_path(self) -> Path | None:
        if self.settings.mode == "attach":
            return self.settings.log_file
        return self.supervisor.config.log_file if self.supervisor is not None else None

    def _endpoint(self) -> Endpoint | None:
        if self.settings.mode == "attach":
            return Endpoint(self.base_url, self.api_key) if self.settings.vllm_url else None
        if self.supervisor is None or not self.supervisor.spec.port:
            return None
        return Endpoint(self.supervisor.base_url, self.supervisor.api_key)

    async def _start(self) -> None:
        try:
            if self.settings.mode == "attach":
                await self._attach()
            else:
                await self._spawn()
        except Exception as exc:
            log.exception("engine start-up failed")
            self._prepare_status = replace(self._prepare_status, state=EngineState.FAILED, error=str(exc))

    def launch_early(self) -> bool:
        """Spawn vLLM while the app is still importing (vLLM's start is the long pole of a cold start),
        when nothing slow comes first: the model is at hand (no build, download or hub probe) and the
        preflight answers from its cache. Otherwise, or when the preflight would refuse, start-up does
        it all in the background as usual. Call from the main thread (see GroupProcess). Tries once."""
        if self.settings.mode != "spawn":
            return False
        if self._early_launched is None:
            try:
                self._early_launched = self._launch_early()
            except Exception:  # never let an early try break the app's import: start-up does it properly
                log.exception("early launch of vLLM failed; start-up will launch it")
                self.supervisor = None
                self._early_launched = False
        return self._early_launched

    def _launch_early(self) -> bool:
        resolved = resolve_model_at_once(self.settings)
        if resolved is None:
            return False
        checks: list[Check] = []
        if self.settings.preflight:
            config = config_from_settings(self.settings, model=resolved.model)
            if not facts_are_cached(config.engine_python, config.facts_cache):
                return False
            checks = run_preflight(config)
            if is_blocking(checks):
                return False  # start-up runs it again and reports it in the chat and the panel
        self.resolved = resolved
        self._early_checks = checks
        self.supervisor = self._make_supervisor(resolved)
        self.supervisor.launch_early()
        return True

    async def _spawn(self) -> None:
        if self.supervisor is None:
            self._prepare_status = replace(self._prepare_status, progress="resolving the model (and building "
                                           "the demo model on first run)")
            self.resolved = await asyncio.to_thread(resolve_model, self.settings)
            if self.settings.preflight and not await self._preflight_allows(self.resolved.model):
                return
            self.supervisor = self._make_supervisor(self.resolved)
        else:
            self._record_checks(self._early_checks)
        assert self.resolved is not None
        if self.resolved.notice:
            self.supervisor.status = replace(self.supervisor.status, notice=self.resolved.notice)
        self.supervisor.add_listener(self.monitor.on_engine_status)
        await self.supervisor.start()

    def _make_supervisor(self, resolved: ResolvedModel) -> Supervisor:
        on_gpu = self.settings.device == "gpu" or (self.settings.device == "auto" and has_nvidia_gpu())
        spec = LaunchSpec(
            model=resolved.model,
            served_model_name=resolved.served_name,
            host=self.settings.host,
            port=self.settings.port,
            api_key="",
            max_model_len=self.settings.max_model_len,
            dtype=self.settings.dtype,
            enforce_eager=self.settings.enforce_eager,
            on_gpu=on_gpu,
            kv_cache_gib=self.settings.kv_cache_gib,
            gpu_memory_utilization=self.settings.gpu_memory_utilization,
            single_process=self.settings.single_process,
            extra_args=split_extra_args(self.settings.extra_args),
            cache_dir=self.settings.data_dir / "cache",
        )
        log_file = self.settings.log_file or (self.settings.log_dir / "vllm.log")
        return Supervisor(
            SupervisorConfig(
                python=self.settings.engine_python,
                spec=spec,
                log_file=log_file,
                log_keep=self.settings.log_keep,
                stop_grace=self.settings.stop_grace,
                max_restarts=self.settings.max_restarts,
                startup_timeout=self.settings.startup_timeout,
                fixed_port=self.settings.port != 0,
            )
        )

    async def _preflight_allows(self, model: str) -> bool:
        """Run the doctor before spawning: a blocking finding stops here, in seconds, with its fix."""
        self._prepare_status = replace(self._prepare_status, progress="checking the deployment (doctor)")
        checks: list[Check] = await asyncio.to_thread(
            lambda: run_preflight(config_from_settings(self.settings, model=model))
        )
        self._record_checks(checks)
        if not is_blocking(checks):
            return True
        reasons = "; ".join(f"{c.name}: {c.message} (fix: {c.fix})" for c in checks if c.blocking)
        log.error("preflight refused to start vLLM: %s", reasons)
        self._prepare_status = replace(
            self._prepare_status, state=EngineState.FAILED, progress=None,
            error=f"the preflight check refused to start vLLM: {reasons}",
            notice=self.resolved.notice if self.resolved else None,
        )
        return False

    def _record_checks(self, checks: list[Check]) -> None:
        for check in checks:
            finding = check.to_finding()
            if finding is not None:
                self.monitor.store.add(finding)

    async def _attach(self) -> None:
        """Check the server until it is usable (it may come up after us), then keep watching it."""
        if not self.settings.vllm_url:
            raise RuntimeError("CHAT_MODE=attach needs CHAT_VLLM_URL (for example http://127.0.0.1:8000/v1)")
        self._prepare_status = replace(self._prepare_status, state=EngineState.STARTING,
                                       progress=f"connecting to {self.base_url}")
        while not await self.recheck_attached():
            await asyncio.sleep(5.0)

    async def recheck_attached(self) -> bool:
        """Reachability, key and model of the attached server; each failure becomes a finding."""
        key = self.settings.api_key.get_secret_value() if self.settings.api_key else None
        result = await check_server(self.base_url, key, self.settings.served_model_name)
        self.monitor.store.add_all(result.findings)
        if not result.ok or result.chosen is None:
            problem = result.findings[0] if result.findings else None
            error = f"{problem.text} (fix: {problem.hint})" if problem else "the server is not usable"
            self._prepare_status = replace(self._prepare_status, state=EngineState.STARTING, error=error,
                                           progress=f"waiting for a usable vLLM server at {self.base_url}")
            self._attached_status = replace(self._attached_status, state=EngineState.CRASHED, error=error)
            return False
        if self._attached_status.state != EngineState.ATTACHED:
            self.monitor.store.resolve_all("attached server answers again")
        self.resolved = ResolvedModel("attach", result.chosen, result.chosen, result.notice)
        self._attached_status = EngineStatus(
            state=EngineState.ATTACHED, model=result.chosen, served_model_name=result.chosen,
            ready_at=self._attached_status.ready_at or time.time(), notice=result.notice, progress=result.version,
        )
        return True

    def after_chat_failure(self) -> None:
        """In attach mode a failed request re-checks URL, key and model until the server is usable again."""
        if self.settings.mode == "attach" and (self._start_task is None or self._start_task.done()):
            self._start_task = asyncio.get_running_loop().create_task(self._attach(), name="attach-recheck")

    async def stop(self) -> None:
        await self.monitor.stop()
        if self._start_task is not None and not self._start_task.done():
            self._start_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._start_task
        if self.supervisor is not None:
            await self.supervisor.stop()
        if self._client is not None:
            await self._client.close()
            self._client = None

    # -- what the chat needs -------------------------------------------------------------------------
    @property
    def status(self) -> EngineStatus:
        if self.settings.mode == "attach":
            return self._attached_status if self.resolved else self._prepare_status
        if self.supervisor is not None:
            return self.supervisor.status
        return self._prepare_status

    def is_ready(self) -> bool:
        if self.settings.mode == "attach":
            return self._attached_status.state == EngineState.ATTACHED
        return self.supervisor is not None and self.supervisor.is_ready()

    def has_given_up(self) -> bool:
        return self.status.state in (EngineState.FAILED, EngineState.STOPPED)

    async def wait_ready(self, timeout: float) -> bool:
        """True as soon as the engine is ready (the supervisor's event, not a poll: every moment between
        /health answering and the first question being sent is added to a cold start)."""
        deadline = time.monotonic() + timeout
        while not self.is_ready():
            remaining = deadline - time.monotonic()
            if self.has_given_up() or remaining <= 0:
                return False
            if self.settings.mode == "spawn" and self.supervisor is not None:
                await self.supervisor.wait_ready(timeout=min(1.0, remaining))
            else:
                await asyncio.sleep(min(0.25, remaining))
        return True

    @property
    def base_url(self) -> str:
        if self.settings.mode == "attach":
            return normalise_base_url(self.settings.vllm_url or "")
        assert self.supervisor is not None
        return self.supervisor.base_url

    @property
    def api_key(self) -> str:
        if self.settings.mode == "attach":
            return self.settings.api_key.get_secret_value() if self.settings.api_key else "EMPTY"
        assert self.supervisor is not None
        return self.supervisor.api_key

    def default_temperature(self) -> float:
        """A 135M demo model rambles at 0.7; it answers sensibly at 0.2."""
        if self.settings.temperature is not None:
            return self.settings.temperature
        return 0.2 if self.resolved is not None and self.resolved.source == "demo" else 0.7

    @property
    def served_model_name(self) -> str:
        return self.resolved.served_name if self.resolved else ""

    def client(self) -> openai.AsyncOpenAI:
        """An OpenAI client for the current launch (the key changes at every launch)."""
        import openai

        key = (self.base_url, self.api_key)
        if self._client is None or self._client_key != key:
            if self._client is not None:
                stale = self._client
                asyncio.get_running_loop().create_task(stale.close())
            self._client = openai.AsyncOpenAI(
                base_url=self.base_url + "/v1",
                api_key=self.api_key,
                timeout=openai.Timeout(self.settings.request_timeout, connect=5.0),
                max_retries=0,
            )
            self._client_key = key
        return self._client
