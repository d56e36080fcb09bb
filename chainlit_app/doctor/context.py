"""What the registered checks read: the settings, the engine facts, and values derived from them once.

Needs, by name: `model_path` and `facts` are inputs (met when the value exists); `folder` (the model
folder check passed on a folder), `config` (config.json parsed), `engine` (the engine environment
exists) and `probed` (the facts probe itself worked) are provided by checks. The runner records met
needs in `provided`; the values behind them are computed lazily and shared by every check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from chainlit_app.engine.facts import EngineFacts
from chainlit_app.engine.hardware import query_gpus
from chainlit_app.hub import hub_snapshot

from .arch_requirements import archs_named_by_repo
from .check import PreflightConfig
from .flags import hf_overrides
from .model_folder import ModelFolder
from .model_shape import Dims, dims_of, serving_weight_bytes

INPUTS = frozenset({"model_path", "facts"})
T = TypeVar("T")


class MissingNeed(LookupError):
    """A check read a value it did not declare as a need (a registration bug, not a user's problem)."""


@dataclass
class Context:
    """One doctor run's inputs and derived values; `provided` grows as checks pass."""

    cfg: PreflightConfig
    facts: EngineFacts | None = None
    provided: set[str] = field(default_factory=set)

    @classmethod
    def start(cls, cfg: PreflightConfig, facts: EngineFacts | None) -> Context:
        ctx = cls(cfg, facts)
        present = {"model_path": ctx.model_path is not None, "facts": facts is not None}
        ctx.provided |= {name for name, here in present.items() if here}
        return ctx

    def _need(self, name: str, value: T | None) -> T:
        if name not in self.provided or value is None:
            raise MissingNeed(f"{name} is read by a check that does not declare it as a need")
        return value

    @cached_property
    def model_path(self) -> Path | None:
        """The folder the model checks read: CHAT_MODEL's folder, or a hub model's cached snapshot."""
        return hub_snapshot(self.cfg.hub_id) if self.cfg.hub_id else self.cfg.model_dir

    @property
    def path(self) -> Path:
        return self._need("model_path", self.model_path)

    @property
    def downloadable(self) -> bool:
        """vLLM downloads what a hub model's snapshot lacks: missing files then warn instead of blocking."""
        return bool(self.cfg.hub_id)

    @cached_property
    def folder(self) -> ModelFolder:
        return ModelFolder(self._need("folder", self.model_path), hf_overrides(self.cfg.extra_args))

    @property
    def config_if_read(self) -> dict[str, Any] | None:
        """config.json (with --hf-overrides) when the folder was readable, for checks that do without it."""
        return self.folder.config if "folder" in self.provided else None

    @property
    def config(self) -> dict[str, Any]:
        return self._need("config", self.config_if_read)

    @property
    def engine_facts(self) -> EngineFacts:
        return self._need("facts", self.facts)

    @cached_property
    def archs(self) -> list[str]:
        """config.json's architectures; for a hub model not downloaded yet, what its repo id names."""
        archs = [str(a) for a in (self.config_if_read or {}).get("architectures") or []]
        if not archs and self.cfg.hub_id:
            archs = archs_named_by_repo(self.cfg.hub_id)
        return archs

    @cached_property
    def dims(self) -> Dims | None:
        config = self.config_if_read
        return dims_of(config) if config else None

    @cached_property
    def serving_weights(self) -> tuple[int | None, str]:
        """Bytes of the weights in RAM at the serving dtype, and how they were counted (None: not on disk)."""
        config = self.config_if_read
        files = self.folder.weights[0] if config is not None else []
        return serving_weight_bytes(files, self.cfg.serve_dtype, config or {}) if files else (None, "")

    @cached_property
    def gpus(self) -> list[tuple[int, int]]:
        """(total, free) MiB per GPU from nvidia-smi; asked only by checks that apply on a GPU."""
        return query_gpus() or []


def spawning(ctx: Context) -> bool:
    """Checks of this machine and its engine: in attach mode the server runs elsewhere."""
    return ctx.cfg.spawn


def has_hub_id(ctx: Context) -> bool:
    return bool(ctx.cfg.hub_id)


def spawning_on_cpu(ctx: Context) -> bool:
    return ctx.cfg.spawn and not ctx.cfg.on_gpu


def spawning_on_a_seen_gpu(ctx: Context) -> bool:
    """On a GPU and nvidia-smi reported one (without its numbers there is nothing to compare)."""
    return ctx.cfg.spawn and ctx.cfg.on_gpu and bool(ctx.gpus)
