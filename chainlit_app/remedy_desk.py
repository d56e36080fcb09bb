"""Where the app's web routes and the automatic mode meet the remedies (issue 13): one apply or undo at a time,
what each finding's remedies are right now, how the last try went, and what the app did by itself.

Why a desk beside the engine handle: an apply restarts vLLM and takes 20 s to minutes; the HTTP request that
asked may be gone by then (a reload, a proxy's timeout), so the work runs in a task of its own and the panel
follows it through /api/diagnostics. A refused request says why in a sentence (`RemedyRefused`), with the HTTP
status the route answers. No Chainlit here: the chat is told through `add_notice_listener`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from chainlit_app.diagnostics.redact import redact_tree
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.i18n import Msg
from chainlit_app.remedies import BY_ID, REMEDIES, Proposal, RemedyResult, finding_from_entry
from chainlit_app.remedies.table import AUTOMATIC

if TYPE_CHECKING:
    from chainlit_app.runtime import Runtime

log = logging.getLogger(__name__)
REMEDY_KINDS = frozenset(r.kind for r in REMEDIES)
AUTO_POLL_SECONDS = 1.0


class RemedyRefused(Exception):
    """A request the desk will not carry out: `status` is the HTTP answer, the message says why (a Msg, so the
    route answers in the reader's language; str(exc) is the English sentence for the log)."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


@dataclass
class Outcome:
    """The latest remedy tried on one finding: running, then verified or failed (with the new evidence)."""

    finding: str
    kind: str
    remedy: str
    state: str  # running | verified | failed
    auto: bool
    started: float
    seconds: float | None = None
    evidence: list[str] = field(default_factory=list)
    answer: str = ""


@dataclass(frozen=True)
class Notice:
    """What the app did by itself, in words for admins (the change) and for everyone else (that it happened)."""

    at: float
    admin_text: str
    user_text: str
    state: str = "applying"  # "applying", "verified" or "failed": the chat's data-state (README test ids)


NoticeListener = Callable[[Notice], Awaitable[None]]


def proposal_json(proposal: Proposal) -> dict[str, Any]:
    """What the panel draws a button from (the finding itself is listed beside it already)."""
    data = proposal.to_json()
    data.pop("finding", None)
    return data


def describe_change(proposal: Proposal) -> str:
    return ", ".join(f"{proposal.remedy.changes.split(' ')[0]} {proposal.previous.get(name)!s} → {value!s}"
                     for name, value in proposal.overrides.items())


class RemedyDesk:
    """One per app (Runtime.remedies)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.outcomes: dict[str, Outcome] = {}  # finding id -> latest try
        self.running: dict[str, Any] | None = None  # the apply or undo in progress
        self.last: dict[str, Any] | None = None  # the last RemedyResult, as JSON
        self.notices: deque[Notice] = deque(maxlen=5)
        self._task: asyncio.Task[RemedyResult] | None = None
        self._auto_task: asyncio.Task[None] | None = None
        self._auto_done: set[str] = set()  # kinds the automatic mode has tried in this run of the app
        self._listeners: list[NoticeListener] = []
        self._cache: dict[tuple[str, str, str], list[Proposal]] = {}

    # -- what there is --------------------------------------------------------------------------------------
    @property
    def engine(self) -> SpawnedEngine | None:
        """The engine when the app owns it; remedies change a launch, which an attached server is not."""
        engine = self.runtime.engine
        return engine if isinstance(engine, SpawnedEngine) else None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def auto_mode(self) -> str:
        return self.runtime.settings.engine.auto_remedy

    def overrides_json(self) -> dict[str, Any]:
        engine = self.engine
        return engine.overrides.to_json() if engine is not None else {"overrides": [], "problem": None}

    def state_json(self) -> dict[str, Any]:
        return {"auto": self.auto_mode, "running": self.running, "last": self.last,
                "available": self.engine is not None,
                "notices": [asdict(n) for n in self.notices]}

    async def proposals_for(self, entry: dict[str, Any]) -> list[Proposal]:
        """The remedies for a finding of the store, for the launch they would change now. Cached per finding,
        evidence and launch: the panel asks every second and some remedies read the model folder."""
        engine = self.engine
        if engine is None or entry["kind"] not in REMEDY_KINDS:
            return []
        ctx = await asyncio.to_thread(engine.remedy_context)
        if ctx is None:
            return []
        evidence = entry["evidence"][-1]["text"] if entry.get("evidence") else ""
        key = (str(entry["id"]), evidence, repr(ctx.spec))
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            finding = finding_from_entry(entry)
            self._cache[key] = await asyncio.to_thread(engine.proposals, finding)
        return self._cache[key]

    async def annotate(self, findings: list[dict[str, Any]], secrets: tuple[str, ...] = ()) -> None:
        """Give each open finding its remedies, and each finding the outcome of a remedy tried on it (both
        redacted: a reason quotes the evidence, an outcome the new launch's error)."""
        for entry in findings:
            proposals = [] if entry["resolved"] else [proposal_json(p) for p in await self.proposals_for(entry)]
            outcome = self.outcomes.get(str(entry["id"]))
            entry["remedies"] = redact_tree(proposals, secrets)
            entry["remedy_outcome"] = redact_tree(asdict(outcome), secrets) if outcome is not None else None

    # -- apply and undo -------------------------------------------------------------------------------------
    def _owned(self) -> SpawnedEngine:
        engine = self.engine
        if engine is None:
            raise RemedyRefused(409, Msg("remedy_api.attached"))
        return engine

    def _not_busy(self) -> None:
        if self.busy and self.running is not None:
            since = round(time.time() - self.running["since"])
            raise RemedyRefused(409, Msg("remedy_api.busy", action=self.running["action"],
                                         remedy=self.running["remedy"], seconds=since))

    def _finding(self, finding_id: str | None, kind: str | None) -> dict[str, Any]:
        entries = [e for e in self.runtime.monitor.store.snapshot() if not e["resolved"]]
        if finding_id:
            match = next((e for e in entries if e["id"] == finding_id), None)
            if match is None:
                raise RemedyRefused(404, Msg("remedy_api.no_finding_id", id=repr(finding_id)))
            return match
        match = next((e for e in entries if e["kind"] == kind), None)
        if match is None:
            raise RemedyRefused(404, Msg("remedy_api.no_finding_kind", kind=repr(kind)))
        return match

    async def apply(self, remedy_id: str, finding_id: str | None = None, kind: str | None = None,
                    confirm: bool = False, auto: bool = False) -> RemedyResult:
        """Carry out one remedy on one open finding; returns once verified or failed (the work goes on if the
        caller goes away)."""
        engine = self._owned()
        self._not_busy()
        remedy = BY_ID.get(remedy_id)
        if remedy is None:
            raise RemedyRefused(404, Msg("remedy_api.unknown_remedy", remedy=repr(remedy_id),
                                         remedies=", ".join(sorted(BY_ID))))
        entry = self._finding(finding_id, kind)
        proposal = next((p for p in await self.proposals_for(entry) if p.remedy.id == remedy_id), None)
        if proposal is None:
            raise RemedyRefused(409, Msg("remedy_api.does_not_apply", remedy=remedy_id, kind=entry["kind"]))
        if not remedy.safe and (auto or not confirm):
            raise RemedyRefused(400, Msg("remedy_api.needs_confirmation", remedy=remedy_id, risk=remedy.risk),
                                risk=remedy.risk, needs_confirmation=True)
        self._not_busy()  # again: the proposals were computed in a thread, another request may have started
        outcome = Outcome(str(entry["id"]), entry["kind"], remedy_id, "running", auto, time.time())
        self.outcomes[outcome.finding] = outcome
        self.running = {"action": "apply", "remedy": remedy_id, "finding": outcome.finding, "auto": auto,
                        "since": outcome.started}
        log.info("remedy %s: applying to %s finding %s (%s)", remedy_id, entry["kind"], outcome.finding,
                 "automatic" if auto else "an admin's request")
        self._task = asyncio.create_task(self._run(engine.apply_remedy(proposal, confirmed=True, auto=auto),
                                                   remedy_id, "apply", outcome), name=f"remedy-{remedy_id}")
        return await asyncio.shield(self._task)

    async def undo(self, remedy_id: str) -> RemedyResult:
        """Remove a remedy's overrides and restart with the previous settings (verified like an apply)."""
        engine = self._owned()
        self._not_busy()
        if not any(o.remedy == remedy_id for o in engine.overrides.entries()):
            raise RemedyRefused(404, Msg("remedy_api.nothing_to_undo", remedy=repr(remedy_id)))
        # The fix is gone: its cards no longer say "fixed by" (the fault, if it returns, is offered the fix again).
        self.outcomes = {key: o for key, o in self.outcomes.items() if o.remedy != remedy_id}
        self.running = {"action": "undo", "remedy": remedy_id, "finding": None, "auto": False, "since": time.time()}
        log.info("remedy %s: undo requested", remedy_id)
        self._task = asyncio.create_task(self._run(engine.undo_remedy(remedy_id), remedy_id, "undo", None),
                                         name=f"undo-{remedy_id}")
        return await asyncio.shield(self._task)

    async def _run(self, work: Awaitable[RemedyResult], remedy_id: str, action: str,
                   outcome: Outcome | None) -> RemedyResult:
        started = time.monotonic()
        try:
            await self.runtime.interrupt_start()  # a start still retrying the old settings must not run beside it
            result = await work
        except Exception as exc:  # the answer says what went wrong; the engine's state says the rest
            log.exception("remedy %s %s failed", remedy_id, action)
            result = RemedyResult(remedy_id, action, False, evidence=[f"{type(exc).__name__}: {exc}"],
                                  seconds=time.monotonic() - started)
        finally:
            self.running = None
        if result.fixed:  # a verified completion answered: the probe need not wait for its own to say so
            self.runtime.monitor.completion.note_answered(result.answer, result.seconds)
        if outcome is not None:
            outcome.state = "verified" if result.fixed else "failed"
            outcome.seconds = round(result.seconds, 1)
            outcome.evidence = list(result.evidence)
            outcome.answer = result.answer
        self.last = result.to_json()
        self._cache.clear()
        return result

    # -- the automatic mode (CHAT_AUTO_REMEDY=safe) ---------------------------------------------------------
    def add_notice_listener(self, listener: NoticeListener) -> None:
        self._listeners.append(listener)

    def start(self) -> None:
        if self.auto_mode == "safe" and self.engine is not None and self._auto_task is None:
            self._auto_task = asyncio.create_task(self._auto_loop(), name="auto-remedy")

    async def stop(self) -> None:
        for task in (self._auto_task, self._task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._auto_task = None

    async def _auto_loop(self) -> None:
        while True:
            await asyncio.sleep(AUTO_POLL_SECONDS)
            try:
                await self.auto_once()
            except Exception:
                log.exception("automatic remedy failed")

    async def auto_once(self) -> RemedyResult | None:
        """Apply the first automatic remedy (remedies.table.AUTOMATIC) of an open finding whose kind was not
        tried yet in this run of the app:
        at most once per kind, so a remedy that does not help is not tried again and again."""
        if self.busy or self.engine is None:
            return None
        for entry in self.runtime.monitor.store.snapshot():
            if entry["resolved"] or entry["kind"] in self._auto_done:
                continue
            automatic = [p for p in await self.proposals_for(entry) if p.remedy.safe and p.remedy.id in AUTOMATIC]
            proposal = next(iter(automatic), None)
            if proposal is None:
                continue
            self._auto_done.add(entry["kind"])
            change = describe_change(proposal)
            await self._tell(Msg("remedy_notice.applying", title=entry["title"], remedy=proposal.remedy.id,
                                 change=change, reason=proposal.reason),
                             Msg("remedy_notice.applying_user"), "applying")
            try:
                result = await self.apply(proposal.remedy.id, finding_id=str(entry["id"]), auto=True)
            except RemedyRefused as exc:
                log.info("automatic remedy %s not applied: %s", proposal.remedy.id, exc)
                return None
            if result.fixed:
                await self._tell(Msg("remedy_notice.verified", remedy=proposal.remedy.id, change=change,
                                     seconds=f"{result.seconds:.0f}"),
                                 Msg("remedy_notice.verified_user"), "verified")
            else:
                await self._tell(Msg("remedy_notice.failed", remedy=proposal.remedy.id,
                                     evidence="; ".join(result.evidence)[:300]),
                                 Msg("remedy_notice.failed_user"), "failed")
            return result
        return None

    async def _tell(self, admin_text: str, user_text: str, state: str) -> None:
        notice = Notice(time.time(), admin_text, user_text, state)
        self.notices.append(notice)
        log.info("%s", admin_text)
        for listener in list(self._listeners):
            try:
                await listener(notice)
            except Exception:  # a chat that cannot be told must not stop the fix
                log.exception("remedy notice listener failed")
