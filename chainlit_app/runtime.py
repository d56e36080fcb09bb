"""The one application state object: settings, the engine (spawned or attached) and its client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from chainlit_app import applog
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.handles import EngineHandle, engine_handle_for
from chainlit_app.monitor import Monitor
from chainlit_app.pacing import StreamPace
from chainlit_app.private_files import secure_storage
from chainlit_app.remedy_desk import RemedyDesk
from chainlit_app.settings import Settings

if TYPE_CHECKING:
    import openai  # imported when the first client is made: the app can launch vLLM before this import

log = logging.getLogger(__name__)


class Runtime:
    """Starts and stops the engine for the app, and hands the chat a client for the current launch. Which
    kind of engine it is (spawned or attached) is the handle's business, never asked here."""

    def __init__(self, settings: Settings):
        self.settings = settings
        secure_storage(settings)  # owner-only folders before the first launch writes its log or a secret
        self._start_task: asyncio.Task[None] | None = None
        self._client: openai.AsyncOpenAI | None = None
        self._client_key: tuple[str, str] | None = None
        self.started_at = time.time()
        engine_settings = settings.engine
        self.monitor = Monitor(lambda: self.engine.log_file, lambda: self.engine.endpoint,
                               health_probe_seconds=engine_settings.health_probe_seconds,
                               health_probe_timeout=engine_settings.health_probe_timeout,
                               degraded_restart_after=engine_settings.degraded_restart_after,
                               tokens_seen_at=lambda: self.pace.last_token_at)
        self.engine: EngineHandle = engine_handle_for(settings, self.monitor.store)
        self.engine.add_listener(self.monitor.on_engine_status)
        if self.engine.process_control:  # a degraded engine we own may be restarted; an attached one is reported
            self.monitor.completion.restart_hook = self.engine.restart
        # The key of the current launch is masked as a literal in the app's log, as in the panel.
        applog.mask_also("engine api key", self.monitor.secrets)
        self.pace = StreamPace()  # the answers' token rates under load: how many tokens per chunk to ask for
        self.remedies = RemedyDesk(self)  # apply/undo from the panel, and CHAT_AUTO_REMEDY=safe

    # -- lifecycle --------------------------------------------------------------------------------
    def share_findings(self, database_url: str, process: str) -> None:
        """In a cluster (CHAT_SHARED_FINDINGS, set by chainlit_app.cluster) the findings go to the history's
        PostgreSQL too, named by `process` (host:port); before start_background. Imported here: SQLAlchemy
        is not needed before vLLM's early launch."""
        from chainlit_app.diagnostics.shared_store import shared_findings_for

        if self.monitor.shared is None:
            self.monitor.shared = shared_findings_for(self.settings.storage.shared_findings, database_url, process,
                                                      self.monitor.store, self.monitor.secrets)

    def start_background(self) -> None:
        """Begin start-up without blocking the web server (vLLM needs 1 to 3 minutes on a CPU)."""
        self.monitor.start()
        self._start_task = asyncio.create_task(self.engine.start(), name="engine-start")
        self.remedies.start()

    async def interrupt_start(self) -> None:
        """End a start-up still in progress (e.g. retrying settings a remedy is about to correct): the remedy
        relaunches the engine itself, and two starts of one supervisor must not run side by side."""
        task = self._start_task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def launch_early(self) -> bool:
        """Start the engine while the app is still importing, where the handle can (see SpawnedEngine)."""
        return self.engine.launch_early()

    def after_chat_failure(self) -> None:
        self.engine.after_chat_failure()

    async def stop(self) -> None:
        await self.remedies.stop()
        await self.monitor.stop()
        if self._start_task is not None and not self._start_task.done():
            self._start_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._start_task
        await self.engine.stop()
        if self._client is not None:
            await self._client.close()
            self._client = None

    # -- what the chat needs -------------------------------------------------------------------------
    @property
    def status(self) -> EngineStatus:
        return self.engine.status

    def is_ready(self) -> bool:
        return self.engine.is_ready()

    def shown_state(self) -> str:
        """The state people see: `degraded` instead of ready (or attached) while the probe's completion fails."""
        state = self.status.state
        if self.monitor.degraded and state in (EngineState.READY, EngineState.ATTACHED):
            return str(EngineState.DEGRADED)
        return str(state)

    def has_given_up(self) -> bool:
        return self.status.state in (EngineState.FAILED, EngineState.STOPPED)

    async def wait_ready(self, timeout: float) -> bool:
        return await self.engine.wait_ready(timeout)

    @property
    def base_url(self) -> str:
        return self.engine.base_url

    @property
    def api_key(self) -> str:
        return self.engine.api_key

    def default_temperature(self) -> float:
        """A 135M demo model rambles at 0.7; it answers sensibly at 0.2."""
        if self.settings.chat.temperature is not None:
            return self.settings.chat.temperature
        resolved = self.engine.resolved
        return 0.2 if resolved is not None and resolved.source == "demo" else 0.7

    def default_repetition_penalty(self) -> float:
        return self.engine.repetition_penalty()

    def context_length(self) -> int:
        return self.engine.context_length()

    @property
    def served_model_name(self) -> str:
        return self.engine.resolved.served_name if self.engine.resolved else ""

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
                timeout=openai.Timeout(self.settings.chat.request_timeout, connect=5.0),
                max_retries=0,
            )
            self._client_key = key
        return self._client
