"""The engine as the app sees it, whether the app spawned it or attached to one it did not start.

`Runtime` holds one `EngineHandle` and never asks which it is: every difference between the two modes
lives in `SpawnedEngine` (supervisor, early launch, preflight) or `AttachedEngine` (the server check loop).
"""

from __future__ import annotations

from collections.abc import Callable

from chainlit_app.diagnostics import FindingsStore
from chainlit_app.handles.attached import AttachedEngine
from chainlit_app.handles.base import EngineHandle
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.settings import Settings

__all__ = ["AttachedEngine", "EngineHandle", "SpawnedEngine", "engine_handle_for"]

_HANDLES: dict[str, Callable[[Settings, FindingsStore], EngineHandle]] = {
    "spawn": SpawnedEngine,
    "attach": AttachedEngine,
}


def engine_handle_for(settings: Settings, store: FindingsStore) -> EngineHandle:
    """The handle for CHAT_MODE; `store` receives what the handle finds (doctor checks, server checks)."""
    return _HANDLES[settings.engine.mode](settings, store)
