"""The supervisor against a real vLLM: start, ready, crash and restart, stop with nothing left behind.

Runs on the tiny random ERNIE-4.5 model so that vLLM's Ernie4_5ForCausalLM path is exercised too.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypeVar

import httpx
import openai
import psutil
import pytest

from chainlit_app.diagnostics import from_exception
from chainlit_app.engine.status import EngineState
from tests.conftest import make_supervisor, need_engine
from tests.timing import assert_within

pytestmark = pytest.mark.integration
T = TypeVar("T")


async def _enumerate(stream: AsyncIterator[T]) -> AsyncIterator[tuple[int, T]]:
    index = 0
    async for item in stream:
        yield index, item
        index += 1


def _alive(pids: list[int]) -> list[int]:
    return [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


async def test_lifecycle_on_tiny_ernie(tiny_ernie: Path, tmp_path: Path) -> None:
    need_engine()
    supervisor = make_supervisor(tiny_ernie, tmp_path, served="tiny-ernie", max_model_len=1024,
                                 max_restarts=2)
    try:
        await supervisor.start()
        assert supervisor.status.state == EngineState.READY, supervisor.status.error
        assert supervisor.status.startup_seconds is not None
        first_pid = supervisor.status.pid
        assert first_pid is not None

        # Bound to loopback, /health open, /v1 guarded by the per-launch key.
        async with httpx.AsyncClient() as http:
            assert (await http.get(supervisor.base_url + "/health")).status_code == 200
            assert (await http.get(supervisor.base_url + "/v1/models")).status_code == 401
        conns = [c for c in psutil.net_connections("tcp") if c.laddr and c.laddr.port == supervisor.spec.port
                 and c.status == psutil.CONN_LISTEN]
        assert conns and all(getattr(c.laddr, "ip", None) == "127.0.0.1" for c in conns)

        # The ERNIE code path answers, streamed token by token.
        client = openai.AsyncOpenAI(base_url=supervisor.base_url + "/v1", api_key=supervisor.api_key)
        stream = await client.completions.create(model="tiny-ernie", prompt="Hello", max_tokens=20,
                                                 stream=True, temperature=1.0)
        chunks = [c async for c in stream]
        assert len(chunks) >= 5
        await client.close()

        # kill -9 the server mid-answer: the client sees a dropped connection, named `connection`;
        # the supervisor notices, restarts it, and it is ready again.
        group_before = [p.pid for p in supervisor.process.group_members()]  # type: ignore[union-attr]
        old_key = supervisor.api_key
        client = openai.AsyncOpenAI(base_url=supervisor.base_url + "/v1", api_key=supervisor.api_key,
                                    max_retries=0, timeout=30)
        stream = await client.completions.create(model="tiny-ernie", prompt="Hello", max_tokens=900,
                                                 stream=True, temperature=1.0, extra_body={"ignore_eos": True})
        with pytest.raises((openai.APIError, httpx.HTTPError)) as caught:
            async for index, _chunk in _enumerate(stream):
                if index == 3:
                    os.kill(first_pid, signal.SIGKILL)
        await client.close()
        finding = from_exception(caught.value)
        assert finding is not None and finding.kind == "connection", caught.value
        for _ in range(600):
            await asyncio.sleep(0.5)
            if supervisor.is_ready() and supervisor.status.pid != first_pid:
                break
        assert supervisor.status.state == EngineState.READY
        assert supervisor.status.restarts == 1
        assert supervisor.status.pid != first_pid
        assert supervisor.api_key != old_key, "each launch gets a new random key"
        assert not _alive(group_before), "the crashed launch left processes behind"
        # Previous launch's log was kept beside the new one.
        assert Path(str(supervisor.config.log_file) + ".1").exists()

        group = [p.pid for p in supervisor.process.group_members()]  # type: ignore[union-attr]
        assert group
    finally:
        await supervisor.stop()
    assert supervisor.status.state == EngineState.STOPPED
    await asyncio.sleep(0.5)
    assert not _alive(group), "stop left vLLM processes behind"


async def test_failed_start_is_reported_at_once_and_crash_loop_gives_up(tmp_path: Path) -> None:
    """A model folder that does not exist: each start fails fast with the log's evidence (not a timeout),
    the retries are bounded, and the final state says why."""
    need_engine()
    supervisor = make_supervisor(tmp_path / "no-such-model", tmp_path, max_restarts=1, backoff_max=1)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await supervisor.start()
    elapsed = loop.time() - started
    assert supervisor.status.state == EngineState.FAILED
    assert supervisor.status.launches == 2
    assert "exited with code" in (supervisor.status.error or "")
    assert "gave up after 2 failed start(s)" in (supervisor.status.error or "")
    # an exit before ready must be noticed at once, not after the start-up timeout
    assert_within(elapsed, 240, "two failed starts, each noticed at its exit")
    log_text = Path(supervisor.config.log_file).read_text(errors="replace")
    assert "no-such-model" in log_text
    assert not await supervisor.wait_ready(timeout=1)
    await supervisor.stop()
