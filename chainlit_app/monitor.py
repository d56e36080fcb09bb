"""Live diagnosis: follows the engine's log into the classifier, probes /health and /metrics, and
collects what the chat observes, into one findings store the panel reads. No Chainlit here."""

from __future__ import annotations

import asyncio
import logging
import math
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chainlit_app.completion_probe import CompletionProbe
from chainlit_app.diagnostics import (
    Finding,
    FindingsStore,
    FirstTokenWatch,
    LineClassifier,
    LogFollower,
    LogRing,
    from_answer,
    from_exception,
    from_history_failure,
    from_metrics,
)
from chainlit_app.diagnostics.disproved import ServingDisproves
from chainlit_app.diagnostics.redact import redact_tree
from chainlit_app.diagnostics.store import cause_key, entry_id
from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.engine.http import EngineClient, MetricsSnapshot
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.i18n import Msg

if TYPE_CHECKING:  # SQLAlchemy is imported after vLLM's early launch (app.py), not with the monitor
    from chainlit_app.diagnostics.shared_store import SharedFindings

log = logging.getLogger(__name__)

HISTORY_POINTS = 120
NO_KEY = "EMPTY"  # what the openai client sends to a server without a key: nothing to mask


@dataclass(frozen=True)
class Endpoint:
    """Where the engine is right now (the port and key change at every launch)."""

    base_url: str
    api_key: str
    model: str = ""  # the served name the completion probe asks for ("" while unknown: no probe)


# Signals that mean the process itself faulted (a crash of vLLM's own code or its kernels), as opposed to
# being killed from outside (SIGKILL: an admin, the OOM killer) or stopped (SIGTERM, SIGINT).
_FAULT_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGILL, signal.SIGFPE})


def exit_finding(code: int | None) -> Finding:
    """What the supervisor saw when the server it watched died while serving (source: probe)."""
    if code is not None and code < 0 and -code in {s.value for s in _FAULT_SIGNALS}:
        name = signal.Signals(-code).name
        return Finding(
            kind=Kind.ENGINE_ERROR.value, line=0, source="probe", rule="engine_fatal_signal", basis="phase",
            text=f"vLLM died of a fatal signal ({name}) while serving; requests in flight were lost",
            hint=Msg("hint.engine_fatal_signal"),
        )
    how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"code {code}"
    return Finding(
        kind=Kind.CONNECTION.value, line=0, source="probe", rule="engine_exited", basis="phase",
        text=f"vLLM stopped unexpectedly (exit {how}); requests in flight lost their connection",
        hint=Msg("hint.engine_exited"),
    )


class Monitor:
    """Owns the findings store and the log ring; fed by the tail, the probe and the chat."""

    def __init__(
        self,
        log_file: Callable[[], Path | None],
        endpoint: Callable[[], Endpoint | None],
        probe_interval: float = 1.0,
        stall_seconds: float = 30.0,
        unwatched_metrics_interval: float = 5.0,
        health_probe_seconds: float = 0.0,
        health_probe_timeout: float = 30.0,
        degraded_restart_after: int = 0,
        tokens_seen_at: Callable[[], float] = lambda: -math.inf,
    ):
        self._log_file = log_file
        self._endpoint = endpoint
        self._tokens_seen_at = tokens_seen_at  # monotonic time of the last token any answer received
        self.probe_interval = probe_interval
        self.stall_seconds = stall_seconds
        # /metrics costs vLLM a rendering and us a Prometheus parse, on the cores the engine computes on:
        # every probe while an admin has the panel open, every few seconds otherwise (stall detection).
        self.unwatched_metrics_interval = unwatched_metrics_interval
        self._watched_until = 0.0
        self._next_metrics_at = 0.0
        self._keys: deque[str] = deque(maxlen=8)  # this and the last launches' keys (older logs hold them)
        self.store = FindingsStore()
        # The idle one-token completion (off with 0 s); its restart hook is set by whoever owns the process.
        self.completion = CompletionProbe(self.store, health_probe_seconds, health_probe_timeout,
                                          degraded_restart_after)
        self._restart_task: asyncio.Task[None] | None = None
        self.ring = LogRing(500, secrets=self.secrets)
        self.first_token = FirstTokenWatch()
        self.metrics: dict[str, Any] = {}
        self.history: deque[dict[str, float]] = deque(maxlen=HISTORY_POINTS)
        self.healthy: bool | None = None
        self.version: str | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._follower: LogFollower | None = None
        self._classifier: LineClassifier | None = None
        self._last_snapshot: tuple[float, MetricsSnapshot] | None = None
        self._idle_since_tokens: float | None = None
        self._last_state: EngineState | None = None
        self._stopping = False
        self.shared: SharedFindings | None = None  # the cluster's table (CHAT_SHARED_FINDINGS), set before start

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        self._stopping = False
        self._tasks = [
            asyncio.create_task(self._tail_loop(), name="diag-tail"),
            asyncio.create_task(self._probe_loop(), name="diag-probe"),
            asyncio.create_task(self._completion_loop(), name="diag-completion-probe"),
        ]
        if self.shared is not None:
            self.shared.start()

    async def stop(self) -> None:
        self._stopping = True
        if self._follower is not None:
            self._follower.stop()
        for task in self._tasks:
            task.cancel()
        if self._restart_task is not None:
            self._restart_task.cancel()
            await asyncio.gather(self._restart_task, return_exceptions=True)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self.shared is not None:
            await self.shared.stop()

    # -- engine events ------------------------------------------------------------------------------
    def on_engine_status(self, status: EngineStatus) -> None:
        """Crashes become findings; a ready engine after a restart resolves what was open."""
        previous, self._last_state = self._last_state, status.state
        if status.state == previous:
            return
        if status.state == EngineState.CRASHED and previous == EngineState.READY:
            self.store.add(exit_finding(status.last_exit_code))
        if status.state in (EngineState.CRASHED, EngineState.FAILED):
            self._settle_log()
        if status.state in (EngineState.READY, EngineState.ATTACHED):
            self.completion.note_started()
        elif previous in (EngineState.READY, EngineState.ATTACHED):
            self.completion.note_stopped()
        if status.state == EngineState.READY and status.restarts > 0:
            self.store.resolve_all(Msg("resolved.restarted", restarts=status.restarts))

    def _settle_log(self) -> None:
        """The server's log ended (it exited, or a new launch starts a new log): name what is still open,
        such as a traceback whose exception line was the last thing the process wrote."""
        if self._classifier is not None:
            self.store.add_all(self._classifier.finish())

    # -- chat observations ---------------------------------------------------------------------------
    def observe_exception(self, exc: BaseException) -> Finding | None:
        self.completion.note_chat()
        finding = from_exception(exc)
        if finding is not None:
            self.store.add(finding)
        return finding

    def observe_history_failure(self, operation: str, error: str) -> None:
        """A history statement failed after its retries (history_writes): the admin sees the gap."""
        self.store.add(from_history_failure(operation, error))

    def observe_history_recovered(self) -> None:
        """A history write succeeded after failures: the finding closes, saying the gap stays in the threads."""
        self.store.resolve_kind(Kind.HISTORY_WRITE_FAILED.value, Msg("resolved.history_writes_again"))

    def observe_answer(self, text: str, finish_reason: str | None, completion_tokens: int | None,
                       eos_hint: str = "", first_token_seconds: float | None = None) -> list[Finding]:
        self.completion.note_chat()
        findings = from_answer(text, finish_reason, completion_tokens, eos_hint)
        if first_token_seconds is not None:
            slow = self.first_token.observe(first_token_seconds)
            if slow is not None:
                findings.append(slow)
        self.store.add_all(findings)
        return findings

    # -- the panel's view ----------------------------------------------------------------------------
    def secrets(self) -> tuple[str, ...]:
        """The engine's API keys, to be masked as literals wherever text is shown: the current launch's
        (a spawned server gets a new one at every launch) and the last few."""
        endpoint = self._endpoint()
        key = endpoint.api_key if endpoint is not None else ""
        if key and key != NO_KEY and key not in self._keys:
            self._keys.append(key)
        return tuple(self._keys)

    def snapshot(self) -> dict[str, Any]:
        """Findings (each string redacted once more: chat and probe findings carry URLs and errors), the
        log tail (redacted by the ring) and the metrics. In a cluster sharing its findings, the others'
        are merged in, each entry naming the processes that saw it."""
        findings = self.store.snapshot()
        shared: dict[str, Any] = {}
        if self.shared is not None:
            findings = self.shared.findings(findings)
            shared = {"shared_findings": self.shared.status()}
        return {
            **shared,
            "findings": redact_tree(findings, self.secrets()),
            "log_tail": self.ring.tail(200),
            "metrics": {**self.metrics, "history": list(self.history)},
            "probe": redact_tree(self.completion.snapshot(), self.secrets()),
        }

    @property
    def degraded(self) -> bool:
        """/health answers but the probe's completion does not."""
        return self.completion.degraded

    def trusted_health(self) -> bool | None:
        """What the panel may call healthy: /health OK and no failed completion probe since the last success."""
        return False if self.completion.degraded else self.healthy

    # -- loops ----------------------------------------------------------------------------------------
    async def _tail_loop(self) -> None:
        """Follow the current log file; a restart rotates it, and line numbers start again at 1."""
        while not self._stopping:
            path = self._log_file()
            if path is None:
                await asyncio.sleep(0.5)
                continue
            self._follower = LogFollower(path, from_start=True, poll_interval=0.1)
            self._classifier, notes = LineClassifier(self.secrets), ServingDisproves()
            last_lineno = 0
            try:
                async for lineno, line in self._follower.lines():
                    if lineno <= last_lineno:  # truncated or rotated: a new launch, a fresh classifier
                        self._settle_log()
                        self._classifier, notes = LineClassifier(self.secrets), ServingDisproves()
                    last_lineno = lineno
                    self.ring.append(lineno, line)
                    for finding in self._classifier.feed(line, lineno):
                        self.store.add(finding)
                        notes.feed(finding)
                    if self._classifier.served:
                        self._withdraw(notes.withdrawn())
                    self.store.add_all(notes.reinstated())  # a later failure named what a withdrawn note was about
            except Exception:
                log.exception("log tail failed; retrying")
            await asyncio.sleep(0.5)

    def _withdraw(self, notes: list[Finding]) -> None:
        """Resolve the warnings a server that then served disproves, as `classify` drops them (`disproved.py`)."""
        for note in notes:
            self.store.resolve_entry(entry_id(note.kind, cause_key(note)), Msg("resolved.disproved_by_serving"),
                                     time.time())

    async def _probe_loop(self) -> None:
        probe: EngineClient | None = None
        try:
            while not self._stopping:
                endpoint = self._endpoint()
                if endpoint is not None:
                    if probe is None or probe.base_url != endpoint.base_url:
                        if probe is not None:
                            await probe.aclose()
                        probe = EngineClient(endpoint.base_url, endpoint.api_key, timeout=2.0)
                        self._last_snapshot = None
                        self.version = None
                    try:
                        if self.version is None:  # asked again until known: a server may answer later
                            self.version = await probe.version()
                        await self._probe_once(probe)
                    except Exception:
                        log.exception("probe failed")
                await asyncio.sleep(self.probe_interval)
        finally:
            if probe is not None:
                await probe.aclose()

    async def _completion_loop(self) -> None:
        """The idle one-token probe: its own task, so a slow completion never delays /health and /metrics."""
        while not self._stopping:
            endpoint = self._endpoint()
            if endpoint is not None and endpoint.model and self.completion.due():
                try:
                    await self.completion.probe(endpoint.base_url, endpoint.api_key, endpoint.model)
                except Exception:
                    log.exception("completion probe failed")
                if self.completion.restart_due() and self.completion.restart_hook is not None:
                    log.warning("restarting vLLM: %d probe completions failed in a row while /health was OK",
                                self.completion.failures)
                    self._restart_task = asyncio.create_task(self.completion.restart_hook(), name="degraded-restart")
            await asyncio.sleep(1.0)

    def panel_viewed(self) -> None:
        """Someone reads the panel: keep its metrics fresh for a while."""
        self._watched_until = time.monotonic() + 10.0
        if self.shared is not None:
            self.shared.viewed()

    def _metrics_due(self) -> bool:
        now = time.monotonic()
        if now < self._watched_until or now >= self._next_metrics_at:
            self._next_metrics_at = now + self.unwatched_metrics_interval
            return True
        return False

    def _tokens_prove_health(self) -> bool:
        """An answer's tokens arrived within the last probe interval: the engine answers, which is all /health
        would say, so the poll is skipped (it was a request a second on the cores the answers need). Asked as
        before once tokens stop for a second, while /health was not OK, and while the panel is watched."""
        now = time.monotonic()
        recent = now - self._tokens_seen_at() < self.probe_interval
        return self.healthy is True and recent and now >= self._watched_until

    async def _probe_once(self, probe: EngineClient) -> None:
        if not self._tokens_prove_health():
            self.healthy = await probe.health()
            self.completion.note_health(self.healthy)
        snap = await probe.metrics() if self.healthy and self._metrics_due() else None
        if snap is None:
            return
        now = time.time()
        gen_tps = 0.0
        if self._last_snapshot is not None:
            then, previous = self._last_snapshot
            elapsed = max(1e-6, now - then)
            delta = snap.generation_tokens_total - previous.generation_tokens_total
            gen_tps = max(0.0, delta / elapsed)
            self._check_stall(snap, delta, now)
        self._last_snapshot = (now, snap)
        self.metrics = {
            "running": snap.running,
            "waiting": snap.waiting,
            "kv_cache_usage": snap.kv_cache_usage,
            "generation_tokens_per_s": round(gen_tps, 1),
            "generation_tokens_total": snap.generation_tokens_total,
            "prompt_tokens_total": snap.prompt_tokens_total,
            "mean_ttft_s": snap.mean_ttft,
            "version": self.version,
        }
        self.history.append({"t": round(now, 1), "running": snap.running, "waiting": snap.waiting,
                             "tps": round(gen_tps, 1), "kv": snap.kv_cache_usage})

    def _check_stall(self, snap: MetricsSnapshot, delta: float, now: float) -> None:
        """Requests present and no token generated for stall_seconds: slow_or_stalled."""
        busy = snap.running > 0 or snap.waiting > 0
        if not busy or delta > 0:
            self._idle_since_tokens = None
            return
        if self._idle_since_tokens is None:
            self._idle_since_tokens = now
            return
        finding = from_metrics(snap.running, snap.waiting, 0.0, now - self._idle_since_tokens,
                               self.stall_seconds)
        if finding is not None:
            self.store.add(finding)
            self._idle_since_tokens = now
