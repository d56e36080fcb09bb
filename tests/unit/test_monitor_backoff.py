"""The monitor's /health poll against a real local HTTP server: skipped while answers' tokens prove the engine
answers, asked again as soon as they stop, and never skipped while /health was not OK or the panel is watched."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest

from chainlit_app.monitor import Endpoint, Monitor
from tests.local_http import JsonHandler, serving

PROBE_INTERVAL = 0.1


class Engine(JsonHandler):
    """Counts /health requests and answers them with `status`; /metrics is empty."""

    status: ClassVar[int] = 200
    health_calls: ClassVar[int] = 0

    def do_GET(self) -> None:
        if self.path == "/health":
            type(self).health_calls += 1
            self.send_response(self.status)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/version":
            self.send_json(200, {"version": "0.0-test"})
        else:
            self.send_json(200 if self.path == "/metrics" else 404, {})


@pytest.fixture
def engine() -> Iterator[type[Engine]]:
    Engine.status, Engine.health_calls = 200, 0
    yield Engine


class Tokens:
    """An answer streaming: while `flowing`, a token has just arrived whenever the monitor asks."""

    def __init__(self) -> None:
        self.flowing = False
        self._last = -math.inf

    def seen_at(self) -> float:
        if self.flowing:
            self._last = time.monotonic()
        return self._last

    def stop(self) -> None:
        self.seen_at()
        self.flowing = False


async def _calls_over(engine: type[Engine], seconds: float) -> int:
    before = engine.health_calls
    await asyncio.sleep(seconds)
    return engine.health_calls - before


async def _watch(engine: type[Engine], url: str) -> tuple[Monitor, Tokens]:
    tokens = Tokens()
    monitor = Monitor(lambda: None, lambda: Endpoint(url, "key", "demo"), probe_interval=PROBE_INTERVAL,
                      tokens_seen_at=tokens.seen_at)
    monitor.start()
    deadline = time.monotonic() + 10
    while monitor.healthy is None and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return monitor, tokens


async def test_health_is_not_polled_while_tokens_flow_and_is_again_once_they_stop(engine: type[Engine]) -> None:
    with serving(engine) as url:
        monitor, tokens = await _watch(engine, url)
        try:
            assert monitor.healthy is True
            assert await _calls_over(engine, 1.0) >= 2, "idle: /health every probe interval"
            tokens.flowing = True
            await asyncio.sleep(0.5)  # a poll in flight when the tokens began
            assert await _calls_over(engine, 1.0) == 0, "tokens arriving: they are the proof, no /health"
            monitor.panel_viewed()
            assert await _calls_over(engine, 1.0) >= 2, "an admin watching the panel gets /health every second"
            monitor._watched_until = 0.0
            tokens.stop()
            await asyncio.sleep(PROBE_INTERVAL * 2)
            assert await _calls_over(engine, 1.0) >= 2, "tokens stopped (a hang or the end): /health again"
        finally:
            await monitor.stop()


async def test_an_unhealthy_engine_is_polled_even_while_tokens_arrive(engine: type[Engine]) -> None:
    engine.status = 503
    with serving(engine) as url:
        monitor, tokens = await _watch(engine, url)
        try:
            tokens.flowing = True
            assert monitor.healthy is False
            assert await _calls_over(engine, 1.0) >= 2, "/health was not OK: only /health can say it is again"
            engine.status = 200
            deadline = time.monotonic() + 10
            while monitor.healthy is not True and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert monitor.healthy is True
        finally:
            await monitor.stop()
