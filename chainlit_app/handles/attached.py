"""A vLLM server the app did not start: check URL, key and model until it is usable, and again after a
failed request. The app never restarts or stops it."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from pathlib import Path

from chainlit_app.attach import check_server
from chainlit_app.diagnostics import FindingsStore
from chainlit_app.engine.http import normalise_base_url
from chainlit_app.engine.launch_records import LaunchRecords
from chainlit_app.engine.process import GroupProcess
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.handles.base import StatusListener, wait_until_ready
from chainlit_app.i18n import Msg
from chainlit_app.models import ResolvedModel
from chainlit_app.monitor import Endpoint
from chainlit_app.settings import Settings

log = logging.getLogger(__name__)
RECHECK_SECONDS = 5.0


class AttachedEngine:
    """CHAT_VLLM_URL, CHAT_API_KEY and CHAT_SERVED_MODEL_NAME describe the server; checks find the rest."""

    process_control = False
    process: GroupProcess | None = None  # not ours
    launches: LaunchRecords | None = None  # nor its launches

    def __init__(self, settings: Settings, store: FindingsStore):
        self.settings = settings
        self.store = store
        self.resolved: ResolvedModel | None = None
        self._attached_status = EngineStatus(state=EngineState.IDLE)
        self._prepare_status = EngineStatus(state=EngineState.PREPARING, progress=Msg("progress.resolving"))
        self._listeners: list[StatusListener] = []
        self._recheck: asyncio.Task[None] | None = None
        self._checking = False  # a check loop runs (start-up's or a recheck's)

    @property
    def status(self) -> EngineStatus:
        return self._attached_status if self.resolved else self._prepare_status

    @property
    def base_url(self) -> str:
        return normalise_base_url(self.settings.engine.vllm_url or "")

    @property
    def api_key(self) -> str:
        return self.settings.engine.api_key.get_secret_value() if self.settings.engine.api_key else "EMPTY"

    @property
    def endpoint(self) -> Endpoint | None:
        if not self.settings.engine.vllm_url:
            return None
        return Endpoint(self.base_url, self.api_key, self.resolved.served_name if self.resolved else "")

    @property
    def log_file(self) -> Path | None:
        return self.settings.logging.log_file

    @property
    def waiting_for(self) -> str | None:
        return self.base_url

    def is_ready(self) -> bool:
        return self._attached_status.state == EngineState.ATTACHED

    def context_length(self) -> int:
        return self.settings.engine.max_model_len

    def repetition_penalty(self) -> float:
        """CHAT_REPETITION_PENALTY, else vLLM's own 1.0: a server we attach to keeps its own defaults."""
        return self.settings.chat.repetition_penalty or 1.0

    def add_listener(self, listener: StatusListener) -> None:
        self._listeners.append(listener)

    async def wait_ready(self, timeout: float) -> bool:
        return await wait_until_ready(self, timeout)

    def launch_early(self) -> bool:
        """Nothing to launch: the server is someone else's."""
        return False

    async def start(self) -> None:
        """Check the server until it is usable (it may come up after us)."""
        self._checking = True
        try:
            if not self.settings.engine.vllm_url:
                raise RuntimeError("CHAT_MODE=attach needs CHAT_VLLM_URL (for example http://127.0.0.1:8000/v1)")
            self._prepare_status = replace(self._prepare_status, state=EngineState.STARTING,
                                           progress=Msg("progress.connecting", url=self.base_url))
            while not await self._check_once():
                await asyncio.sleep(RECHECK_SECONDS)
        except Exception as exc:
            log.exception("engine start-up failed")
            self._prepare_status = replace(self._prepare_status, state=EngineState.FAILED, error=str(exc))
        finally:
            self._checking = False

    async def _check_once(self) -> bool:
        """One check; an answer we did not expect (a proxy's page, a half-started server) is "not usable
        yet", shown with its cause, and checked again: only configuration errors end the loop."""
        try:
            return await self.recheck()
        except Exception as exc:
            log.warning("check of the attached server failed: %s: %s", type(exc).__name__, exc)
            error = Msg("engine.attach_unexpected", url=self.base_url, error=f"{type(exc).__name__}: {exc}")
            self._prepare_status = replace(self._prepare_status, state=EngineState.STARTING, error=error)
            return False

    async def recheck(self) -> bool:
        """Reachability, key and model of the attached server; each failure becomes a finding."""
        key = self.settings.engine.api_key.get_secret_value() if self.settings.engine.api_key else None
        result = await check_server(self.base_url, key, self.settings.model.served_name)
        self.store.add_all(result.findings)
        if not result.ok or result.chosen is None:
            problem = result.findings[0] if result.findings else None
            error = Msg("engine.attach_problem", text=problem.text, fix=problem.hint) if problem else Msg(
                "engine.attach_not_usable")
            self._prepare_status = replace(self._prepare_status, state=EngineState.STARTING, error=error,
                                           progress=Msg("progress.waiting_usable", url=self.base_url))
            self._set(replace(self._attached_status, state=EngineState.CRASHED, error=error))
            return False
        if self._attached_status.state != EngineState.ATTACHED:
            self.store.resolve_all(Msg("resolved.attached_again"))
        self.resolved = ResolvedModel("attach", result.chosen, result.chosen, result.notice)
        self._set(EngineStatus(
            state=EngineState.ATTACHED, model=result.chosen, served_model_name=result.chosen,
            ready_at=self._attached_status.ready_at or time.time(), notice=result.notice, progress=result.version,
        ))
        return True

    def _set(self, status: EngineStatus) -> None:
        changed = status.state != self._attached_status.state
        self._attached_status = status
        if changed:
            for listener in list(self._listeners):
                listener(status)

    def after_chat_failure(self) -> None:
        """A failed request re-checks URL, key and model until the server is usable again."""
        if not self._checking:
            self._recheck = asyncio.get_running_loop().create_task(self.start(), name="attach-recheck")

    async def restart(self) -> None:
        """Not ours to restart: check it again."""
        await self._check_once()

    async def stop(self) -> None:
        if self._recheck is not None and not self._recheck.done():
            self._recheck.cancel()
            await asyncio.gather(self._recheck, return_exceptions=True)
