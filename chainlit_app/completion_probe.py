"""Health you can trust: while the chat is idle, ask the engine for one real token now and then.

vLLM's `/health` says only that the API server does not consider its engine dead; an engine core that is
stopped or hangs still passes it while every chat waits. A one-token completion is the cheapest proof that
the server answers. A failure (error, timeout, empty answer) while `/health` is OK is `degraded`: one finding,
updated at each failed probe and resolved by the first probe that succeeds. A 4xx is not a failure of the
engine: the server answered and refused the request (no chat template, a wrong model name or key), which the
chat and the log name as their own kind and which no restart mends; it proves the server answers (it ends a
degraded episode) and is kept as the last result. A probe that was in flight while the engine stopped, restarted
or failed /health says nothing of the launch that answers next and is dropped; none is sent until the engine is
ready again (a remedy's or an admin's restart refuses connections for a while, which is not a fault).
After `restart_after` failed probes in a row the owner of the process (a spawned engine) may restart it; an
attached one is only reported.
No Chainlit here.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass

import httpx

from chainlit_app.diagnostics import Finding, FindingsStore
from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.i18n import Msg
from chainlit_app.remedies.verify import verify_completion

log = logging.getLogger(__name__)
RULE = "completion_probe_failed"


@dataclass(frozen=True)
class ProbeResult:
    """One probe: whether a token came back, the token or the error, and when."""

    ok: bool
    detail: str
    seconds: float
    at: float
    refused: bool = False  # the server answered with a 4xx: not an engine failure

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "detail": self.detail, "seconds": round(self.seconds, 2), "at": self.at,
                "refused": self.refused}


def _for_how_long(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


class CompletionProbe:
    """When to probe, what a result means for the findings, and when a restart is due.

    `interval` 0 turns the probe off. The monotonic clock decides timing; the wall clock stamps results."""

    def __init__(self, store: FindingsStore, interval: float, timeout: float, restart_after: int,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:
        self.store = store
        self.interval = interval
        self.timeout = timeout
        self.restart_after = restart_after
        self._clock = clock
        self._wall = wall
        self.failures = 0  # failed probes in a row
        self.last: ProbeResult | None = None
        # Set only where the app owns the process (a spawned engine): restart it after restart_after failures.
        self.restart_hook: Callable[[], Coroutine[object, object, None]] | None = None
        self.restarts_asked = 0
        self._restart_asked = False  # once per degraded episode: the restart itself ends the episode
        self._last_chat = -math.inf
        self._last_probe = -math.inf
        self._due_now = False
        self._health_ok_since: float | None = None  # wall clock
        self._launch = 0  # counts starts, stops and /health failures: a probe begun under another is stale
        self._serving = True  # False from note_stopped to the next note_started (unknown at first: /health decides)
        self._answers = 0  # completions that answered (probes, remedies' verifications): newer proof than a probe

    @property
    def degraded(self) -> bool:
        return self.failures > 0

    # -- what the monitor tells it ------------------------------------------------------------------------
    def note_chat(self) -> None:
        """A chat request ran: the chat itself is the proof for a while."""
        self._last_chat = self._clock()

    def note_started(self) -> None:
        """The engine became ready (first start or restart): probe at once, and allow a new restart."""
        self._due_now = True
        self._restart_asked = False
        self._launch += 1
        self._serving = True

    def note_stopped(self) -> None:
        """The engine left the ready state (stopping, restarting, crashed): a probe in flight is stale, and none
        is due until it is ready again. Called when the state changes, before the process is signalled."""
        self._launch += 1
        self._serving = False
        self._health_ok_since = None

    def note_health(self, ok: bool) -> None:
        if not ok:
            if self._health_ok_since is not None:
                self._launch += 1
            self._health_ok_since = None
        elif self._health_ok_since is None:
            self._health_ok_since = self._wall()

    def due(self) -> bool:
        """Probe only an engine whose /health is OK (otherwise the state says enough), after a start, or
        when neither a chat request nor a probe ran for `interval` seconds."""
        if self.interval <= 0 or not self._serving or self._health_ok_since is None:
            return False
        if self._due_now:
            return True
        now = self._clock()
        return now - self._last_chat >= self.interval and now - self._last_probe >= self.interval

    # -- probing ----------------------------------------------------------------------------------------------
    async def probe(self, base_url: str, api_key: str, model: str) -> ProbeResult:
        """Send the completion (the remedies' verification: one client, one definition of 'answers')."""
        launch, answers = self._launch, self._answers
        result = await self._send(base_url, api_key, model)
        if launch != self._launch:
            log.info("probe result dropped: the engine restarted or failed /health meanwhile (%s)", result.detail[:200])
        elif not result.ok and self._answers != answers:
            # another completion (a remedy's verification right after a restart) answered while this one waited:
            # the engine answers; on a busy CPU the probe's own timeout ran out behind that request
            log.info("probe failure dropped: a completion answered while it ran (%s)", result.detail[:200])
        else:
            self.record(result)
        return result

    async def _send(self, base_url: str, api_key: str, model: str) -> ProbeResult:
        self._due_now = False
        self._last_probe = self._clock()
        started = self._clock()
        try:
            ok, said = await verify_completion(base_url, api_key, model, timeout=self.timeout, raise_refusals=True)
        except httpx.HTTPStatusError as exc:
            detail = f"HTTP {exc.response.status_code} {exc.response.text[:300]}"
            return ProbeResult(False, detail, self._clock() - started, self._wall(), refused=True)
        seconds = self._clock() - started
        if ok and not said.strip():
            ok, said = False, "the one-token completion came back empty"
        elif not ok and said.endswith(": "):  # httpx's timeouts carry no message
            said += f"no answer within {self.timeout:g} s"
        return ProbeResult(ok, said, seconds, self._wall())

    def record(self, result: ProbeResult) -> None:
        """A success resolves the finding; a failure adds to the one `degraded` finding (latest evidence)."""
        self.last = result
        if result.refused:
            log.info("probe completion refused by the server (it answers: not degraded): %s", result.detail[:200])
        if result.ok or result.refused:
            self._answers += 1
            if self.failures:
                log.info("engine answers a completion again after %d failed probe(s)", self.failures)
                self.store.resolve_kind(Kind.DEGRADED.value, Msg("resolved.probe_answered"))
            self.failures = 0
            return
        self.failures += 1
        self._last_probe = self._clock()
        health = (f"/health OK for {_for_how_long(self._wall() - self._health_ok_since)}"
                  if self._health_ok_since is not None else "/health OK")
        self.store.add(Finding(
            kind=Kind.DEGRADED.value, line=0, source="probe", rule=RULE, basis="phase",
            text=f"{health}, but a one-token completion failed ({self.failures} probe(s) in a row, "
                 f"{result.seconds:.1f} s): {result.detail}",
            hint=self._hint(),
        ), latest_only=True)
        log.warning("engine degraded: /health OK, probe completion failed (%d in a row): %s", self.failures,
                    result.detail)

    def note_answered(self, answer: str, seconds: float) -> None:
        """Someone else's completion answered (a remedy's verification): the same proof a probe would give."""
        self.record(ProbeResult(True, answer, seconds, self._wall()))

    def _hint(self) -> Msg:
        if self.restart_hook is None:
            return Msg("hint.probe_not_ours")
        if self.restart_after <= 0:
            return Msg("hint.probe_no_restart")
        return Msg("hint.probe_restart_after", count=self.restart_after)

    def restart_due(self) -> bool:
        """True once per degraded episode, when a restart hook exists and enough probes failed in a row."""
        if (self.restart_hook is None or self.restart_after <= 0 or self._restart_asked
                or self.failures < self.restart_after):
            return False
        self._restart_asked = True
        self.restarts_asked += 1
        return True

    def snapshot(self) -> dict[str, object]:
        return {
            "interval": self.interval,
            "degraded": self.degraded,
            "failures_in_a_row": self.failures,
            "restart_after": self.restart_after if self.restart_hook is not None else None,
            "restarts_asked": self.restarts_asked,
            "health_ok_since": self._health_ok_since,
            "last": self.last.to_json() if self.last else None,
        }
