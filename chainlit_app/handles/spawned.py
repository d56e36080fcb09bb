"""A vLLM server the app owns: resolve the model, run the doctor, spawn and supervise it."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from pathlib import Path

import psutil

from chainlit_app.diagnostics import Finding, FindingsStore, classify_file
from chainlit_app.doctor import Check, config_from_settings, is_blocking, run_preflight
from chainlit_app.engine.command import LaunchSpec, redacted_argv
from chainlit_app.engine.facts import facts_are_cached
from chainlit_app.engine.hardware import has_nvidia_gpu
from chainlit_app.engine.launch_records import LaunchRecords
from chainlit_app.engine.process import GroupProcess
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.engine.supervisor import Supervisor, SupervisorConfig
from chainlit_app.handles.base import StatusListener, wait_until_ready
from chainlit_app.handles.launch_recorder import LaunchFacts, LaunchRecorder
from chainlit_app.i18n import Msg
from chainlit_app.models import DEMO_NAME, ResolvedModel, resolve_model, resolve_model_at_once
from chainlit_app.monitor import Endpoint
from chainlit_app.remedies import (
    REQUEST_FIELDS,
    OverridesStore,
    Proposal,
    RemedyContext,
    RemedyResult,
    remedies_for,
    verify_completion,
)
from chainlit_app.remedies.table import PENALTY_FIRST
from chainlit_app.remedies.verify import ANSWER_KINDS
from chainlit_app.settings import Settings

log = logging.getLogger(__name__)


class SpawnedEngine:
    """The supervisor does the process work; this adds what comes before it (model, doctor, early launch)."""

    process_control = True
    waiting_for = None

    def __init__(self, settings: Settings, store: FindingsStore):
        self.settings = settings
        self.store = store
        self.overrides = OverridesStore.in_data_dir(settings.storage.data_dir)
        self._remedy_lock = asyncio.Lock()  # one apply or undo at a time: each one restarts the engine
        self.resolved: ResolvedModel | None = None
        self.supervisor: Supervisor | None = None
        self._prepare_status = EngineStatus(state=EngineState.PREPARING, progress=Msg("progress.resolving"))
        self._early_checks: list[Check] = []
        self._early_launched: bool | None = None  # tried already: at interpreter start (prelaunch) or in app.py
        self._listeners: list[StatusListener] = []
        self.launches: LaunchRecords | None = LaunchRecords(settings.storage.data_dir / "launches",
                                                            settings.logging.launch_records)
        self._recorder = LaunchRecorder(self.launches, self._launch_facts, store.snapshot, self._secrets)

    # -- where it is ----------------------------------------------------------------------------------
    @property
    def status(self) -> EngineStatus:
        return self.supervisor.status if self.supervisor is not None else self._prepare_status

    @property
    def base_url(self) -> str:
        assert self.supervisor is not None, "no launch yet"
        return self.supervisor.base_url

    @property
    def api_key(self) -> str:
        assert self.supervisor is not None, "no launch yet"
        return self.supervisor.api_key

    @property
    def log_file(self) -> Path | None:
        return self.supervisor.config.log_file if self.supervisor is not None else None

    @property
    def process(self) -> GroupProcess | None:
        return self.supervisor.process if self.supervisor is not None else None

    @property
    def endpoint(self) -> Endpoint | None:
        """Where the monitor probes: known once a launch has chosen its port."""
        if self.supervisor is None or not self.supervisor.spec.port:
            return None
        return Endpoint(self.supervisor.base_url, self.supervisor.api_key, self.supervisor.spec.served_model_name)

    def is_ready(self) -> bool:
        return self.supervisor is not None and self.supervisor.is_ready()

    def add_listener(self, listener: StatusListener) -> None:
        self._listeners.append(listener)
        if self.supervisor is not None:
            self.supervisor.add_listener(listener)

    async def wait_ready(self, timeout: float) -> bool:
        """The supervisor's ready event once there is a supervisor, short sleeps before."""
        return await wait_until_ready(self, timeout, self._wait_a_while)

    async def _wait_a_while(self, seconds: float) -> None:
        if self.supervisor is not None:
            await self.supervisor.wait_ready(timeout=seconds)
        else:
            await asyncio.sleep(min(0.25, seconds))

    # -- bringing it up -------------------------------------------------------------------------------
    def launch_early(self) -> bool:
        """Spawn vLLM while the app is still importing (vLLM's start is the long pole of a cold start),
        when nothing slow comes first: the model is at hand (no build, download or hub probe) and the
        preflight answers from its cache. Otherwise, or when the preflight would refuse, start-up does
        it all in the background as usual. Call from the main thread (see GroupProcess). Tries once."""
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
        if self.settings.engine.preflight:
            config = config_from_settings(self.settings, model=resolved.model,
                                          overrides=self.overrides.launch_overrides())
            if not facts_are_cached(config.engine_python, config.facts_cache):
                return False
            checks = run_preflight(config)
            if is_blocking(checks):
                return False  # start-up runs it again and reports it in the chat and the panel
        self.resolved = resolved
        self._early_checks = checks
        self._use_supervisor(self._make_supervisor(resolved))
        assert self.supervisor is not None
        self.supervisor.launch_early()
        return True

    async def start(self) -> None:
        try:
            await self._start()
        except Exception as exc:
            log.exception("engine start-up failed")
            self._prepare_status = replace(self._prepare_status, state=EngineState.FAILED, error=str(exc))

    async def _start(self) -> None:
        if self.supervisor is None:
            self._prepare_status = replace(self._prepare_status, progress=Msg("progress.resolving_demo"))
            self.resolved = await asyncio.to_thread(resolve_model, self.settings)
            if self.settings.engine.preflight and not await self._preflight_allows(self.resolved.model):
                return
            gpu_present = await asyncio.to_thread(has_nvidia_gpu)  # nvidia-smi may take seconds
            self._use_supervisor(self._make_supervisor(self.resolved, gpu_present))
        else:
            self._record_checks(self._early_checks)
        assert self.resolved is not None and self.supervisor is not None
        if self.resolved.notice:
            self.supervisor.status = replace(self.supervisor.status, notice=self.resolved.notice)
        await self.supervisor.start()

    def _use_supervisor(self, supervisor: Supervisor) -> None:
        self.supervisor = supervisor
        for listener in self._listeners:
            supervisor.add_listener(listener)
        supervisor.add_listener(self._recorder.on_status)  # after the monitor's: its exit finding is recorded too

    def _secrets(self) -> tuple[str, ...]:
        """Keys a launch record must not hold: this launch's and a configured one."""
        keys = [self.supervisor.api_key] if self.supervisor is not None else []
        if self.settings.engine.api_key is not None:
            keys.append(self.settings.engine.api_key.get_secret_value())
        return tuple(k for k in keys if k)

    def _launch_facts(self) -> LaunchFacts:
        """The launch being recorded: its command (key-free), the settings and overrides in effect."""
        assert self.supervisor is not None
        spec = self.supervisor.spec
        launch = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(spec).items()
                  if k not in ("api_key", "extra_env")}
        launch["extra_env"] = sorted(spec.extra_env)  # names only: values may be tokens
        settings = {"model": self.settings.model.model_dump(mode="json"),
                    "engine": self.settings.engine.model_dump(mode="json", exclude={"api_key"}),
                    "launch": launch}
        return LaunchFacts(redacted_argv(self.supervisor.argv), settings, self.overrides.launch_overrides(),
                           self.supervisor.config.log_file)

    def _make_supervisor(self, resolved: ResolvedModel, gpu_present: bool | None = None) -> Supervisor:
        settings = self.settings
        spec = self.launch_spec(resolved, gpu_present)
        return Supervisor(
            SupervisorConfig(
                python=settings.engine.python,
                spec=spec,
                log_file=settings.logging.engine_log,
                log_keep=settings.logging.log_keep,
                stop_grace=settings.engine.stop_grace,
                max_restarts=settings.engine.max_restarts,
                startup_timeout=settings.engine.startup_timeout,
                fixed_port=spec.port != 0,
            )
        )

    def launch_spec(self, resolved: ResolvedModel, gpu_present: bool | None = None) -> LaunchSpec:
        """The settings with the remedies' overrides (chainlit_app/remedies/overrides.py) applied."""
        return LaunchSpec.from_settings(self.settings, resolved, self.overrides.launch_overrides(),
                                        gpu_present=gpu_present)

    async def _preflight_allows(self, model: str) -> bool:
        """Run the doctor before spawning: a blocking finding stops here, in seconds, with its fix."""
        self._prepare_status = replace(self._prepare_status, progress=Msg("progress.doctor"))
        checks: list[Check] = await asyncio.to_thread(
            lambda: run_preflight(config_from_settings(self.settings, model=model,
                                                       overrides=self.overrides.launch_overrides()))
        )
        self._record_checks(checks)
        if not is_blocking(checks):
            return True
        reasons = [Msg("engine.check_reason", name=c.name, message=c.message, fix=c.fix) for c in checks if c.blocking]
        log.error("preflight refused to start vLLM: %s", "; ".join(reasons))
        self._prepare_status = replace(
            self._prepare_status, state=EngineState.FAILED, progress=None,
            error=Msg("engine.preflight_refused", reasons=reasons),
            notice=self.resolved.notice if self.resolved else None,
        )
        return False

    def _record_checks(self, checks: list[Check]) -> None:
        for check in checks:
            finding = check.to_finding()
            if finding is not None:
                self.store.add(finding)

    # -- after start-up -------------------------------------------------------------------------------
    def after_chat_failure(self) -> None:
        """The supervisor already watches the process; a failed request needs nothing more here."""

    async def restart(self) -> None:
        if self.supervisor is not None:
            await self.supervisor.restart()

    async def stop(self) -> None:
        if self.supervisor is not None:
            await self.supervisor.stop()

    # -- remedies (issue 13) ------------------------------------------------------------------------------
    def remedy_context(self) -> RemedyContext | None:
        """The launch a remedy would change (the running one, else the one the settings make); None before
        the model is resolved."""
        if self.supervisor is not None:
            spec = self.supervisor.spec
        elif self.resolved is not None:
            spec = self.launch_spec(self.resolved)
        else:
            return None
        folder = Path(spec.model)
        return RemedyContext(spec, folder if folder.is_dir() else None, psutil.virtual_memory().available,
                             repetition_penalty=self.repetition_penalty(), data_dir=self.settings.storage.data_dir)

    def context_length(self) -> int:
        """The running launch's --max-model-len (fit_max_model_len may have lowered the configured one)."""
        if self.supervisor is not None:
            return self.supervisor.spec.max_model_len
        return int(self.overrides.launch_overrides().get("max_model_len") or self.settings.engine.max_model_len)

    def repetition_penalty(self) -> float:
        """What the chat's requests send by default: a remedy's override, else CHAT_REPETITION_PENALTY, else
        1.1 for the demo model (it loops without; see remedies/table.py) and vLLM's 1.0 for others."""
        value = self.overrides.request_overrides().get("repetition_penalty")
        if value is None:
            value = self.settings.chat.repetition_penalty
        if value is None:
            demo = self.resolved.source == "demo" if self.resolved is not None else \
                self.settings.model.name.strip() == DEMO_NAME  # a session opened while the model resolves
            value = PENALTY_FIRST if demo else 1.0
        return float(value)

    def proposals(self, finding: Finding) -> list[Proposal]:
        ctx = self.remedy_context()
        return remedies_for(finding, ctx) if ctx is not None else []

    def last_launch_finding(self) -> Finding | None:
        """The root cause in the current log file, by the classifier the CLI uses."""
        log_file = self.log_file or self.settings.logging.engine_log
        return classify_file(str(log_file)).root if log_file.exists() else None

    async def apply_remedy(self, proposal: Proposal, confirmed: bool = False, auto: bool = False) -> RemedyResult:
        """Write the override, restart vLLM with it, and verify with a one-token chat completion. An unsafe
        remedy (trust_remote_code) needs `confirmed`, which the caller may only set after showing its risk;
        `auto` marks an override the automatic mode wrote (never an unsafe one)."""
        if not proposal.remedy.safe and (auto or not confirmed):
            raise PermissionError(f"remedy {proposal.remedy.id} needs an explicit confirmation: {proposal.remedy.risk}")
        async with self._remedy_lock:
            started, started_at = time.monotonic(), time.time()
            self.overrides.add(proposal, auto=auto)
            judge = proposal.finding.kind in ANSWER_KINDS
            relaunched = not (set(proposal.overrides) <= REQUEST_FIELDS and self.is_ready())
            if not relaunched:
                result = await self._verify(proposal.remedy.id, "apply", started, judge)  # no restart needed
            else:
                result = await self._relaunch_and_verify(proposal.remedy.id, "apply", started, judge)
        if result.fixed:
            self.store.resolve_kind(proposal.finding.kind, Msg("resolved.remedy", remedy=proposal.remedy.id),
                                    since=started_at)
            if relaunched:
                # What the failed launch reported besides its cause ("the server stopped before it was ready") is
                # over too: the engine now answers. What the new launch reports stays open.
                self.store.resolve_all(Msg("resolved.remedy", remedy=proposal.remedy.id), seen_before=started_at)
        return result

    async def undo_remedy(self, remedy_id: str) -> RemedyResult:
        """Remove the remedy's overrides (back to the previous values) and restart; verified like an apply."""
        async with self._remedy_lock:
            started = time.monotonic()
            removed = self.overrides.remove(remedy_id)
            if not removed:
                raise LookupError(f"no override of remedy {remedy_id} to undo")
            if {e.field for e in removed} <= REQUEST_FIELDS and self.is_ready():
                return await self._verify(remedy_id, "undo", started)
            return await self._relaunch_and_verify(remedy_id, "undo", started)

    async def _relaunch_and_verify(self, remedy_id: str, action: str, started: float,
                                   judge: bool = False) -> RemedyResult:
        if self.supervisor is None:
            await self.start()  # the preflight refused (or never ran): again, with the overrides; errors -> status
        else:
            assert self.resolved is not None
            await self.supervisor.restart(self.launch_spec(self.resolved))
        return await self._verify(remedy_id, action, started, judge)

    async def _verify(self, remedy_id: str, action: str, started: float, judge: bool = False) -> RemedyResult:
        """A real completion, with the request settings the chat now sends, against the current launch."""
        result = RemedyResult(remedy_id, action, False, overrides=self.overrides.values())
        if self.supervisor is None or not self.supervisor.is_ready():
            result.evidence = [self.status.error or f"vLLM is {self.status.state.value}"]
            root = await asyncio.to_thread(self.last_launch_finding) if self.supervisor is not None else None
            if root is not None:
                result.evidence.append(f"{root.kind} (line {root.line}): {root.text}")
        else:
            ok, said = await verify_completion(self.base_url, self.api_key, self.supervisor.spec.served_model_name,
                                               judge=judge, extra=self.overrides.request_overrides())
            result.fixed = ok
            if ok:
                result.answer = said
            else:
                result.evidence = [said]
        result.seconds = time.monotonic() - started
        log.info("remedy %s %s: %s after %.1f s", remedy_id, action, "verified" if result.fixed else "not fixed",
                 result.seconds)
        return result
