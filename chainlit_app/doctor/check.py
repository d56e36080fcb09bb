"""The result of one doctor check, and the settings the checks look at.

`fail` always means blocking: the server would not start or not answer; `warn` means it starts but
something users notice is likely.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from chainlit_app.diagnostics.findings import Finding
from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.engine.command import LaunchSpec, effective_dtype, runs_on_gpu
from chainlit_app.engine.facts import PROBE_TIMEOUT
from chainlit_app.engine.hardware import cpu_supports_bf16, has_nvidia_gpu
from chainlit_app.hub import is_local_path
from chainlit_app.models import DEMO_NAME, ResolvedModel, demo_model_dir
from chainlit_app.settings import Settings

Status = Literal["pass", "warn", "fail"]


@dataclass(frozen=True)
class PreflightConfig:
    """What the checks look at; machine facts (GPU, bf16) are fields so tests can set them."""

    model: str
    model_dir: Path | None = None
    hub_id: str | None = None
    mode: str = "spawn"
    engine_python: Path = Path(".venv-vllm/bin/python")
    host: str = "127.0.0.1"
    port: int = 0
    max_model_len: int = 4096
    dtype: str = "auto"
    device: str = "auto"
    kv_cache_gib: int = 1
    gpu_memory_utilization: float = 0.9
    extra_args: tuple[str, ...] = ()
    data_dir: Path = Path(".data")
    hub_probe_timeout: float = 4.0
    gpu_present: bool = False
    cpu_bf16: bool = False
    facts_timeout: float = PROBE_TIMEOUT

    @property
    def on_gpu(self) -> bool:
        """The launch's own rule (engine/command.py), with this config's machine facts."""
        return runs_on_gpu(self.device, self.gpu_present)

    @property
    def spawn(self) -> bool:
        return self.mode == "spawn"

    @property
    def facts_cache(self) -> Path:
        return self.data_dir / "cache" / "engine_facts.json"

    @property
    def serve_dtype(self) -> str:
        """The --dtype the app passes to vLLM (CHAT_DTYPE, with `auto` meaning float32 on CPUs)."""
        return effective_dtype(self.dtype, self.on_gpu)


def config_from_settings(settings: Settings, model: str | None = None,
                         overrides: Mapping[str, object] | None = None) -> PreflightConfig:
    """Map Settings (and an optional --model override) to the checks' inputs, as `resolve_model` would;
    the launch settings come from LaunchSpec.from_settings, the same launch the runtime would start."""
    wanted = (model if model is not None else settings.model.name).strip()
    model_dir: Path | None = None
    hub_id: str | None = None
    if wanted == DEMO_NAME:
        model_dir = demo_model_dir(settings)
    elif is_local_path(wanted):
        model_dir = Path(wanted).expanduser().resolve()
    else:
        hub_id = wanted
    gpu_present = has_nvidia_gpu()
    resolved = ResolvedModel("doctor", str(model_dir or hub_id), settings.model.served_name or "")
    launch = LaunchSpec.from_settings(settings, resolved, overrides, gpu_present=gpu_present)
    return PreflightConfig(
        model=wanted,
        model_dir=model_dir,
        hub_id=hub_id,
        mode=settings.engine.mode,
        engine_python=settings.engine.python,
        host=launch.host,
        port=launch.port,
        max_model_len=launch.max_model_len,
        dtype=launch.dtype,
        device=settings.engine.device,
        kv_cache_gib=launch.kv_cache_gib,
        gpu_memory_utilization=launch.gpu_memory_utilization,
        extra_args=remedy_flags(launch) + launch.extra_args,
        data_dir=settings.storage.data_dir,
        hub_probe_timeout=settings.model.hub_probe_timeout,
        gpu_present=gpu_present,
        cpu_bf16=cpu_supports_bf16(),
    )


def remedy_flags(launch: LaunchSpec) -> tuple[str, ...]:
    """The flags a remedy's override adds (build_argv passes them), so the checks that look for a flag in the
    extra args see them too."""
    flags: tuple[str, ...] = ("--chat-template", launch.chat_template) if launch.chat_template else ()
    flags += ("--generation-config", launch.generation_config) if launch.generation_config else ()
    return flags + (("--trust-remote-code",) if launch.trust_remote_code else ())


@dataclass
class Check:
    """The outcome of one check; `kind` is a taxonomy kind (None for a pass)."""

    name: str
    status: Status
    kind: str | None
    message: str
    fix: str
    blocking: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "kind": self.kind,
            "message": self.message,
            "fix": self.fix,
            "blocking": self.blocking,
        }

    def to_finding(self) -> Finding | None:
        """A finding for the store/panel; passes are not findings."""
        if self.status == "pass" or self.kind is None:
            return None
        return Finding(
            kind=self.kind,
            line=0,
            text=self.message,
            hint=self.fix,
            source="preflight",
            rule=f"preflight_{self.name}",
        )


def passed(name: str, message: str) -> Check:
    return Check(name, "pass", None, message, "", False)


def warned(name: str, kind: Kind, message: str, fix: str) -> Check:
    return Check(name, "warn", kind.value, message, fix, False)


def failed(name: str, kind: Kind, message: str, fix: str) -> Check:
    return Check(name, "fail", kind.value, message, fix, True)


def is_blocking(checks: Iterable[Check]) -> bool:
    return any(c.blocking for c in checks)
