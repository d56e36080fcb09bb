"""The idle completion probe (issue 13, item 4) against a real local HTTP server that answers /health and
fails completions in the ways a server does (an error status, no answer in time, an empty answer); the real
vLLM fault (a stopped engine core) is in tests/e2e/test_health_and_launches.py."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from chainlit_app.completion_probe import CompletionProbe, ProbeResult
from chainlit_app.diagnostics import FindingsStore
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.handles import AttachedEngine
from chainlit_app.models import ResolvedModel
from chainlit_app.monitor import Endpoint, Monitor
from chainlit_app.runtime import Runtime
from tests.conftest import settings_for_tests
from tests.local_http import JsonHandler, serving


class Engine(JsonHandler):
    """/health always 200; /v1/chat/completions as `mode` says."""

    mode: ClassVar[str] = "ok"
    release: ClassVar[threading.Event] = threading.Event()
    completions: ClassVar[int] = 0

    def do_GET(self) -> None:
        if self.path == "/health":
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_json(404, {"error": "no"})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).completions += 1
        if self.mode == "hang":
            self.release.wait(10)
        if self.mode == "error":
            self.send_json(500, {"error": {"message": "EngineCore encountered an issue"}})
        elif self.mode == "no_template":  # vLLM's own 400 for a tokenizer without a chat template
            self.send_json(400, {"error": {"message": "As of transformers v4.44, default chat template is no "
                                                      "longer allowed, so you must provide a chat template"}})
        else:
            content = "" if self.mode == "empty" else "OK"
            self.send_json(200, {"choices": [{"message": {"role": "assistant", "content": content}}]})


@pytest.fixture
def engine() -> type[Engine]:
    Engine.mode, Engine.completions = "ok", 0
    Engine.release = threading.Event()
    return Engine


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _open(store: FindingsStore) -> list[dict[str, Any]]:
    return [e for e in store.snapshot() if e["kind"] == "degraded" and not e["resolved"]]


async def test_failures_make_one_degraded_finding_updated_and_a_success_clears_it(engine: type[Engine]) -> None:
    store, clock = FindingsStore(), Clock()
    probe = CompletionProbe(store, interval=60, timeout=0.5, restart_after=0, clock=clock)
    probe.note_health(True)
    with serving(engine) as url:
        for mode in ("error", "hang", "empty", "error"):
            engine.mode = mode
            result = await probe.probe(url, "key", "demo")
            assert not result.ok
        engine.release.set()
        [entry] = _open(store)
        assert entry["count"] == 4 and entry["source"] == "probe" and len(entry["evidence"]) == 1
        text = entry["evidence"][0]["text"]
        assert "/health OK for" in text and "4 probe(s) in a row" in text and "HTTP 500" in text
        assert probe.degraded

        engine.mode = "ok"
        assert (await probe.probe(url, "key", "demo")).ok
    assert not probe.degraded and not _open(store)
    resolved = [e for e in store.snapshot() if e["kind"] == "degraded"]
    assert resolved[0]["resolved_reason"] == "a probe completion succeeded again"


async def test_a_refusal_is_not_degraded_and_never_asks_a_restart(engine: type[Engine]) -> None:
    """A 400 (no chat template) means the server answers: the chat names the cause; a restart would not mend it."""
    store = FindingsStore()
    probe = CompletionProbe(store, interval=60, timeout=0.5, restart_after=1)
    probe.restart_hook = _never_restart
    probe.note_health(True)
    with serving(engine) as url:
        engine.mode = "no_template"
        for _ in range(3):
            result = await probe.probe(url, "key", "demo")
            assert not result.ok and result.refused and result.detail.startswith("HTTP 400"), result
    assert not probe.degraded and not _open(store) and not probe.restart_due()
    assert probe.snapshot()["last"]["refused"] is True  # type: ignore[index]


async def test_a_verified_remedy_answer_clears_degraded_at_once(engine: type[Engine]) -> None:
    store = FindingsStore()
    probe = CompletionProbe(store, interval=60, timeout=0.5, restart_after=0)
    probe.note_health(True)
    with serving(engine) as url:
        engine.mode = "error"
        await probe.probe(url, "key", "demo")
    assert probe.degraded and _open(store)
    probe.note_answered("Paris", 25.3)
    assert not probe.degraded and not _open(store)


async def test_a_probe_that_failed_while_a_remedy_verified_an_answer_is_dropped(engine: type[Engine]) -> None:
    """The fresh-clone failure of test_free_port_moves_vllm_off_a_port_another_program_holds: after the remedy's
    restart the probe (due at once) and the remedy's verification both asked the engine; the verification
    answered, the probe's wait ran out behind it on a busy 2-core machine, and the engine was shown `degraded`
    right after a verified fix. A failure newer proof has overtaken is dropped; the next probe decides."""
    store = FindingsStore()
    probe = CompletionProbe(store, interval=60, timeout=5, restart_after=0)
    probe.note_health(True)
    with serving(engine) as url:
        engine.mode = "hang"
        in_flight = asyncio.create_task(probe.probe(url, "key", "demo"))
        await asyncio.sleep(0.2)
        probe.note_answered("Paris", 12.5)  # the remedy's verification answered meanwhile
        engine.mode = "error"
        engine.release.set()
        assert not (await in_flight).ok
        assert not probe.degraded and not _open(store), "an overtaken probe failure counted"
        # a failure with no newer answer still counts
        assert not (await probe.probe(url, "key", "demo")).ok
    assert probe.degraded and _open(store)


async def test_a_refusal_ends_a_degraded_episode_and_a_stale_probe_is_dropped(engine: type[Engine]) -> None:
    """A probe in flight while the engine restarts (a remedy) failed against the old launch: it is dropped, and
    a 400 from the new launch proves it answers."""
    store = FindingsStore()
    probe = CompletionProbe(store, interval=60, timeout=5, restart_after=0)
    probe.note_health(True)
    with serving(engine) as url:
        engine.mode = "error"
        await probe.probe(url, "key", "demo")
        assert probe.degraded
        engine.mode = "no_template"
        assert (await probe.probe(url, "key", "demo")).refused
        assert not probe.degraded and not _open(store)

        engine.mode = "hang"
        in_flight = asyncio.create_task(probe.probe(url, "key", "demo"))
        await asyncio.sleep(0.2)
        probe.note_health(False)  # the restart: /health fails, then the new launch is ready
        probe.note_health(True)
        probe.note_started()
        engine.mode = "error"  # the old launch's answer to the probe in flight: a 500
        engine.release.set()
        assert not (await in_flight).ok
    assert not probe.degraded and not _open(store), "a probe of the old launch counted against the new one"


async def test_a_probe_cut_by_a_deliberate_restart_is_dropped_and_none_runs_until_ready(
        engine: type[Engine], tmp_path: Path) -> None:
    """The CI failure of test_remedy_chat_template: a probe sent just before a remedy's restart got the old
    launch's refused connection while the last /health poll still said OK, and the engine was shown `degraded`
    after the undo. The supervisor's STOPPING state, through the monitor's status listener, drops it."""
    runtime = Runtime(settings_for_tests(mode="spawn", data_dir=tmp_path))
    monitor, probe = runtime.monitor, runtime.monitor.completion
    monitor.on_engine_status(EngineStatus(state=EngineState.READY))
    probe.note_health(True)
    with serving(engine) as url:
        engine.mode = "hang"
        in_flight = asyncio.create_task(probe.probe(url, "key", "demo"))
        await asyncio.sleep(0.2)
        monitor.on_engine_status(EngineStatus(state=EngineState.STOPPING))  # before the process is signalled
        engine.mode = "error"  # what the stopping launch answers the probe in flight
        engine.release.set()
        assert not (await in_flight).ok
    assert not probe.degraded and not _open(monitor.store), "a probe cut by a restart counted as a fault"
    assert not probe.due(), "probed a stopping engine"
    probe.note_health(True)  # a late poll of the old launch says nothing of the next one
    assert not probe.due()
    monitor.on_engine_status(EngineStatus(state=EngineState.READY, restarts=1))
    probe.note_health(True)
    assert probe.due()


async def _never_restart() -> None:
    raise AssertionError("a refusal asked for a restart")


async def test_timeouts_and_empty_answers_say_what_happened(engine: type[Engine]) -> None:
    probe = CompletionProbe(FindingsStore(), interval=60, timeout=0.3, restart_after=0)
    with serving(engine) as url:
        engine.mode = "hang"
        hung = await probe.probe(url, "key", "demo")
        engine.release.set()
        engine.mode = "empty"
        empty = await probe.probe(url, "key", "demo")
    assert hung.detail.endswith("ReadTimeout: no answer within 0.3 s") and hung.seconds >= 0.3
    assert empty.detail == "the one-token completion came back empty"


def test_due_only_when_idle_healthy_and_after_a_start() -> None:
    clock = Clock()
    probe = CompletionProbe(FindingsStore(), interval=60, timeout=1, restart_after=2, clock=clock)
    assert not probe.due()  # /health not seen OK yet
    probe.note_health(True)
    assert probe.due()  # nothing ran ever
    probe._last_probe = clock.now  # as a probe does
    assert not probe.due()
    clock.now += 61
    probe.note_chat()
    assert not probe.due()  # the chat itself just proved the engine
    clock.now += 61
    assert probe.due()
    probe._last_probe = clock.now
    probe.note_started()
    assert probe.due()  # once after every (re)start, whatever the timers say
    probe.note_health(False)
    assert not probe.due()
    off = CompletionProbe(FindingsStore(), interval=0, timeout=1, restart_after=2)
    off.note_health(True)
    assert not off.due()


async def test_a_restart_is_asked_once_per_degraded_episode_and_only_with_a_hook(engine: type[Engine]) -> None:
    probe = CompletionProbe(FindingsStore(), interval=60, timeout=0.5, restart_after=2)
    probe.note_health(True)
    engine.mode = "error"
    with serving(engine) as url:
        await probe.probe(url, "k", "demo")
        await probe.probe(url, "k", "demo")
        assert not probe.restart_due()  # no hook: an attached server is only reported

        async def restart() -> None:
            return None

        probe.restart_hook = restart
        assert probe.restart_due() and not probe.restart_due()
        probe.note_started()  # the restarted engine is ready: a new episode may ask again
        await probe.probe(url, "k", "demo")
        await probe.probe(url, "k", "demo")
    assert probe.restart_due() and probe.restarts_asked == 2


async def test_the_monitor_probes_when_idle_and_never_calls_a_degraded_engine_healthy(engine: type[Engine]) -> None:
    """The monitor's own loops: /health every second, the completion probe after the (simulated) start."""
    with serving(engine) as url:
        monitor = Monitor(lambda: None, lambda: Endpoint(url, "key", "demo"), probe_interval=0.1,
                          health_probe_seconds=3600, health_probe_timeout=0.5, degraded_restart_after=1)
        restarted = asyncio.Event()

        async def restart() -> None:
            restarted.set()

        monitor.completion.restart_hook = restart
        engine.mode = "error"
        monitor.start()
        try:
            deadline = time.monotonic() + 20
            while not monitor.degraded and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert monitor.degraded and monitor.healthy is True  # /health says OK ...
            assert monitor.trusted_health() is False  # ... and the panel does not believe it
            await asyncio.wait_for(restarted.wait(), 20)
            assert monitor.snapshot()["probe"]["restarts_asked"] == 1
            calls = engine.completions
            await asyncio.sleep(1.5)
            assert engine.completions == calls  # idle interval one hour: no second probe, no spam
        finally:
            await monitor.stop()


def test_the_runtime_lets_the_probe_restart_only_an_engine_it_owns(tmp_path: Path) -> None:
    spawned = Runtime(settings_for_tests(mode="spawn", data_dir=tmp_path / "s", health_probe_seconds=30,
                                         health_probe_timeout=7, degraded_restart_after=2))
    assert spawned.monitor.completion.restart_hook is not None and spawned.engine.launches is not None
    assert (spawned.monitor.completion.interval, spawned.monitor.completion.timeout) == (30, 7)
    attached = Runtime(settings_for_tests(mode="attach", vllm_url="http://127.0.0.1:9/v1", data_dir=tmp_path / "a"))
    assert attached.monitor.completion.restart_hook is None and attached.engine.launches is None
    assert attached.monitor.completion.interval == 60  # the default: on, once a minute


def test_a_degraded_engine_is_never_shown_ready_or_healthy(tmp_path: Path) -> None:
    runtime = Runtime(settings_for_tests(mode="attach", vllm_url="http://127.0.0.1:9/v1", data_dir=tmp_path))
    engine = runtime.engine
    assert isinstance(engine, AttachedEngine)
    engine.resolved = ResolvedModel("attach", "m", "m")
    engine._attached_status = EngineStatus(state=EngineState.ATTACHED)
    runtime.monitor.healthy = True
    assert runtime.shown_state() == "attached" and runtime.monitor.trusted_health() is True
    runtime.monitor.completion.note_health(True)
    runtime.monitor.completion.record(ProbeResult(False, "HTTP 500", 0.1, 0.0))
    assert runtime.shown_state() == "degraded" and runtime.monitor.trusted_health() is False
    engine._attached_status = EngineStatus(state=EngineState.CRASHED)
    assert runtime.shown_state() == "crashed"  # a worse state is shown as it is
