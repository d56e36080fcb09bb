"""Which model this is and whether the engine knows it: hub id, folder, config.json, architecture, model_type.

vLLM needs about 20 s on a CPU to fail on an unknown architecture; asking its registry through the
engine facts takes milliseconds. Architectures are checked against the installed vLLM, never a list of
our own.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.engine.facts import EngineFacts
from chainlit_app.hub import hub_cache_dir, hub_endpoint, hub_offline, hub_reachable, in_hub_cache
from chainlit_app.i18n import Msg
from chainlit_app.models import DEMO_NAME

from .check import Check, PreflightConfig, failed, passed, warned
from .context import Context, has_hub_id, spawning
from .flags import has_flag
from .model_folder import ModelFolder
from .registry import CheckRegistry

MODEL_CHECKS: CheckRegistry[Context] = CheckRegistry()


def check_hub(repo_id: str, timeout: float) -> Check:
    """The app serves the demo model when the hub model cannot be had, so this warns, never blocks."""
    if in_hub_cache(repo_id):
        return passed("hub", Msg("doctor.hub.pass.1", repo_id=repo_id, hub_cache_dir=hub_cache_dir()))
    endpoint = hub_endpoint()
    fallback = Msg("doctor.hub.fallback")
    if hub_offline():
        return warned(
            "hub", Kind.CONNECTION,
            Msg("doctor.hub.msg.2", repo_id=repo_id, fallback=fallback),
            Msg("doctor.hub.fix_offline", repo_id=repo_id, cache=hub_cache_dir()),
        )
    if hub_reachable(repo_id, timeout):
        return passed("hub", Msg("doctor.hub.pass.2", repo_id=repo_id, endpoint=endpoint))
    return warned(
        "hub", Kind.CONNECTION,
        Msg("doctor.hub.msg.1", repo_id=repo_id, endpoint=endpoint, timeout=f'{timeout:.0f}', fallback=fallback),
        Msg("doctor.hub.fix_unreachable", repo_id=repo_id, cache=hub_cache_dir()),
    )


def check_model_folder(config: PreflightConfig, folder: Path) -> Check:
    if folder.is_dir():
        return passed("model_folder", Msg("doctor.model_folder.pass.1", folder=folder))
    if folder.is_file() and folder.suffix == ".gguf":
        return passed("model_folder", Msg("doctor.model_folder.pass.2", folder=folder))
    # a path that is not there is model_not_found, as the log reading names vLLM's own words for it
    if config.model == DEMO_NAME:
        return warned(
            "model_folder", Kind.MODEL_NOT_FOUND,
            Msg("doctor.model_folder.msg.2", folder=folder),
            Msg("doctor.model_folder.fix.2"),
        )
    what = Msg("doctor.model_folder.is_file") if folder.exists() else Msg("doctor.model_folder.missing")
    return failed(
        "model_folder", Kind.MODEL_NOT_FOUND if not folder.exists() else Kind.STARTUP_FAILURE,
        Msg("doctor.model_folder.msg.1", folder=folder, what=what),
        Msg("doctor.model_folder.fix.1"),
    )


def check_config(folder: ModelFolder) -> Check:
    config, error = folder.config_read
    if config is None:
        return failed(
            "config", Kind.STARTUP_FAILURE, Msg("doctor.config.msg.1", path=folder.path, error=error),
            Msg("doctor.config.fix.1", path=folder.path),
        )
    archs = config.get("architectures") or []
    return passed(
        "config",
        Msg(
            "doctor.config.pass.1",
            archs=", ".join(map(str, archs)) or "no architectures",
            model_type=config.get("model_type", "?"),
        ),
    )


def check_architecture(config: dict[str, Any], facts: EngineFacts | None, extra_args: tuple[str, ...]) -> Check:
    """Ask the installed vLLM's registry (via the facts), never a list of our own."""
    archs = [str(a) for a in config.get("architectures") or []]
    if not archs:
        return failed(
            "architecture",
            Kind.STARTUP_FAILURE,
            Msg("doctor.architecture.msg.2"),
            Msg("doctor.architecture.fix.1"),
        )
    if facts is None or not facts.archs:
        reason = (facts.error or facts.vllm_error) if facts else "the engine environment was not probed"
        return warned(
            "architecture",
            Kind.STARTUP_FAILURE,
            Msg("doctor.architecture.msg.3", archs=", ".join(archs), reason=reason),
            Msg("doctor.architecture.fix.2"),
        )
    version = f"vLLM {facts.vllm_version}"
    supported = [a for a in archs if a in facts.archs]
    if supported:
        return passed("architecture", Msg("doctor.architecture.pass.1", archs=", ".join(supported), version=version))
    in_transformers = [a for a in archs if a in facts.transformers_archs]
    if in_transformers:
        return warned(
            "architecture",
            Kind.STARTUP_FAILURE,
            Msg("doctor.architecture.msg.4", archs=", ".join(archs), version=version),
            Msg("doctor.architecture.fix.3"),
        )
    if config.get("auto_map") and not has_flag(extra_args, "--trust-remote-code"):
        return failed(
            "architecture",
            Kind.STARTUP_FAILURE,
            Msg("doctor.architecture.msg.5", archs=", ".join(archs)),
            Msg("doctor.architecture.fix.4"),
        )
    if config.get("auto_map"):
        return warned(
            "architecture",
            Kind.STARTUP_FAILURE,
            Msg("doctor.architecture.msg.6", archs=", ".join(archs)),
            Msg("doctor.architecture.fix.5"),
        )
    close = difflib.get_close_matches(archs[0], sorted(facts.archs), n=1, cutoff=0.85)
    fix = Msg("doctor.architecture.fix_renamed", name=close[0]) if close else Msg("doctor.architecture.fix_unsupported")
    return failed(
        "architecture",
        Kind.STARTUP_FAILURE,
        Msg("doctor.architecture.msg.1", archs=archs, version=version),
        fix,
    )


def check_model_type(config: dict[str, Any], facts: EngineFacts | None, extra_args: tuple[str, ...]) -> Check:
    """transformers must know config.json's model_type, or vLLM fails while parsing the config."""
    model_type = config.get("model_type")
    if not model_type:
        return failed(
            "model_type",
            Kind.STARTUP_FAILURE,
            Msg("doctor.model_type.msg.2"),
            Msg("doctor.model_type.fix.2"),
        )
    if facts is None or not facts.model_types:
        return passed("model_type", Msg("doctor.model_type.pass.1", model_type=model_type))
    if model_type in facts.model_types:
        return passed(
            "model_type",
            Msg("doctor.model_type.pass.2", model_type=model_type, transformers_version=facts.transformers_version),
        )
    if config.get("auto_map") and has_flag(extra_args, "--trust-remote-code"):
        return passed("model_type", Msg("doctor.model_type.pass.3", model_type=model_type))
    return failed(
        "model_type",
        Kind.STARTUP_FAILURE,
        Msg("doctor.model_type.msg.1", model_type=f"{model_type!r}", transformers_version=facts.transformers_version),
        Msg("doctor.model_type.fix.1"),
    )


# ------------------------------------------------------------------------------------------------
# Registration: report order, and what each check needs from the context
# ------------------------------------------------------------------------------------------------


@MODEL_CHECKS.register("hub", applies=has_hub_id)
def _hub(ctx: Context) -> Check:
    return check_hub(ctx.cfg.hub_id or "", ctx.cfg.hub_probe_timeout)


@MODEL_CHECKS.register(
    "model_folder",
    needs=("model_path",),
    provides=("folder",),
    provided_when=lambda ctx, check: check.status == "pass" and ctx.path.is_dir(),
)
def _model_folder(ctx: Context) -> Check:
    """A GGUF file passes, but provides no folder for the checks below to read."""
    return check_model_folder(ctx.cfg, ctx.path)


@MODEL_CHECKS.register("config", needs=("folder",), provides=("config",))
def _config(ctx: Context) -> Check:
    """The checks below need a readable config.json and are skipped without it."""
    return check_config(ctx.folder)


@MODEL_CHECKS.register("architecture", needs=("config",), applies=spawning)
def _architecture(ctx: Context) -> Check:
    """Spawn only: in attach mode the remote server's vLLM is unknown, there are no engine facts to ask."""
    return check_architecture(ctx.config, ctx.facts, ctx.cfg.extra_args)


@MODEL_CHECKS.register("model_type", needs=("config",), applies=spawning)
def _model_type(ctx: Context) -> Check:
    return check_model_type(ctx.config, ctx.facts, ctx.cfg.extra_args)
