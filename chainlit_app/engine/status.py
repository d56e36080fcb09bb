"""What the chat and the panel show of the engine: one vocabulary of states for a spawned and an
attached server (the status JSON's `state` is part of the contract outside checks rely on)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from enum import StrEnum


class EngineState(StrEnum):
    """The supervisor moves a spawned server through STARTING ... STOPPED; PREPARING (model resolution,
    the doctor) and ATTACHED (a server we did not start answers) are set by the engine handles only."""

    IDLE = "idle"
    PREPARING = "preparing"
    STARTING = "starting"
    READY = "ready"
    CRASHED = "crashed"
    RESTARTING = "restarting"
    FAILED = "failed"
    STOPPING = "stopping"
    STOPPED = "stopped"
    ATTACHED = "attached"
    # Shown only (panel, /healthz), never the supervisor's own state: ready or attached, but the idle
    # one-token probe's completion fails while /health answers.
    DEGRADED = "degraded"


@dataclass
class EngineStatus:
    """What the chat and the panel show of the engine."""

    state: EngineState = EngineState.IDLE
    model: str = ""
    served_model_name: str = ""
    host: str = "127.0.0.1"
    port: int | None = None
    pid: int | None = None
    restarts: int = 0
    launches: int = 0
    started_at: float | None = None
    ready_at: float | None = None
    startup_seconds: float | None = None
    progress: str | None = None
    error: str | None = None
    last_exit_code: int | None = None
    log_file: str | None = None
    notice: str | None = None

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["state"] = str(self.state)
        data["uptime"] = round(time.time() - self.ready_at, 1) if self.ready_at else None
        return data
