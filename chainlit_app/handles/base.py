"""What the app needs of an engine: its state, where it serves, and how to start, restart and stop it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from chainlit_app.engine.launch_records import LaunchRecords
from chainlit_app.engine.process import GroupProcess
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.models import ResolvedModel
from chainlit_app.monitor import Endpoint

StatusListener = Callable[[EngineStatus], None]


class EngineHandle(Protocol):
    """One engine, spawned or attached. Properties may be read at any time; `base_url` and `api_key`
    are meaningful once `status` has left PREPARING (they change at every launch of a spawned server)."""

    resolved: ResolvedModel | None
    # Whether this app owns the process (can restart and stop it; the panel offers process actions).
    process_control: bool
    # Records of the launches of a server we own (None when we own none: attach mode).
    launches: LaunchRecords | None

    @property
    def status(self) -> EngineStatus: ...

    @property
    def base_url(self) -> str: ...

    @property
    def api_key(self) -> str: ...

    @property
    def endpoint(self) -> Endpoint | None:
        """Where the monitor probes /health and /metrics (None while nothing serves)."""

    @property
    def log_file(self) -> Path | None:
        """The log the monitor follows (None while there is none to follow)."""

    @property
    def process(self) -> GroupProcess | None:
        """The server's process group when we own one that runs."""

    @property
    def waiting_for(self) -> str | None:
        """The address of a server we wait for but do not start (people waiting are told where)."""

    def is_ready(self) -> bool: ...

    def context_length(self) -> int:
        """The max_model_len requests must fit (a remedy may have changed the configured one)."""

    def repetition_penalty(self) -> float:
        """The repetition_penalty the chat sends by default (a remedy may have set it)."""

    def add_listener(self, listener: StatusListener) -> None:
        """Called with every new status (the monitor turns crashes into findings)."""

    async def wait_ready(self, timeout: float) -> bool:
        """True as soon as the engine is ready; False on timeout or when it has given up."""

    def launch_early(self) -> bool:
        """Start the engine synchronously while the app is still importing, when that is cheap and safe."""

    async def start(self) -> None:
        """Bring the engine up (in the background task Runtime runs); failures become the status' error."""

    def after_chat_failure(self) -> None:
        """A chat request failed: look at the engine again where that can help."""

    async def restart(self) -> None: ...

    async def stop(self) -> None: ...


GIVEN_UP = (EngineState.FAILED, EngineState.STOPPED)


async def wait_until_ready(handle: EngineHandle, timeout: float,
                           wait_a_while: Callable[[float], Awaitable[object]] | None = None) -> bool:
    """True as soon as `handle` is ready; False on timeout or when it has given up. `wait_a_while(s)`
    waits at most s seconds for a change (an event beats a poll: every moment between ready and the
    first question is added to a cold start); by default a short sleep."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not handle.is_ready():
        remaining = deadline - loop.time()
        if handle.status.state in GIVEN_UP or remaining <= 0:
            return False
        if wait_a_while is not None:
            await wait_a_while(min(1.0, remaining))
        else:
            await asyncio.sleep(min(0.25, remaining))
    return True
