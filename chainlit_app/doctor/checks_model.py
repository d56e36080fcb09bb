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
        return passed("hub", f"{repo_id} is in the local Hugging Face cache ({hub_cache_dir()})")
    endpoint = hub_endpoint()
    fallback = "the app will serve the offline demo model (SmolLM2-135M-Instruct) instead"
    fix = (f"On a machine with network: `huggingface-cli download {repo_id}` into the Hugging Face cache "
           f"(HF_HOME / HF_HUB_CACHE, here {hub_cache_dir()}), or set CHAT_MODEL to a local folder or to demo.")
    if hub_offline():
        return warned(
            "hub", Kind.CONNECTION,
            f"{repo_id} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set, so it cannot be "
            f"downloaded: {fallback}",
            fix + " Or unset HF_HUB_OFFLINE where the network is allowed.",
        )
    if hub_reachable(repo_id, timeout):
        return passed("hub", f"{repo_id} is reachable at {endpoint}; vLLM downloads it at start")
    return warned(
        "hub", Kind.CONNECTION,
        f"{repo_id} is not in the local Hugging Face cache and {endpoint} did not answer for it within "
        f"{timeout:.0f} s (no network, or a wrong or gated repo id): {fallback}",
        fix + " Behind a slow link raise CHAT_HUB_PROBE_TIMEOUT; for gated repos set HF_TOKEN.",
    )


def check_model_folder(config: PreflightConfig, folder: Path) -> Check:
    if folder.is_dir():
        return passed("model_folder", f"{folder} exists")
    if folder.is_file() and folder.suffix == ".gguf":
        return passed("model_folder", f"{folder} is a GGUF file (the folder checks do not apply)")
    if config.model == DEMO_NAME:
        return warned(
            "model_folder", Kind.STARTUP_FAILURE,
            f"the demo model is not built yet ({folder}); the app builds it at start (about a minute)",
            "Build it now: CHAT_MODEL=demo .venv/bin/python -m chainlit_app.models (or `make model`).",
        )
    what = "is a file, not a model folder" if folder.exists() else "does not exist"
    return failed(
        "model_folder", Kind.STARTUP_FAILURE, f"model folder {folder} {what}",
        "Set CHAT_MODEL (or --model) to a folder holding config.json, the weights and the tokenizer, "
        "or to a Hugging Face repo id, or to `demo`.",
    )


def check_config(folder: ModelFolder) -> Check:
    config, error = folder.config_read
    if config is None:
        return failed(
            "config", Kind.STARTUP_FAILURE, f"config.json in {folder.path} is {error}",
            f"Put the model's config.json into {folder.path} (copy it again from the model's repo).",
        )
    archs = config.get("architectures") or []
    return passed("config", f"config.json: {', '.join(map(str, archs)) or 'no architectures'} "
                            f"(model_type {config.get('model_type', '?')})")


def check_architecture(config: dict[str, Any], facts: EngineFacts | None, extra_args: tuple[str, ...]) -> Check:
    """Ask the installed vLLM's registry (via the facts), never a list of our own."""
    archs = [str(a) for a in config.get("architectures") or []]
    if not archs:
        return failed(
            "architecture", Kind.STARTUP_FAILURE, "config.json has no `architectures` list",
            'Add "architectures": ["<ModelClass>ForCausalLM"] to config.json (as in the model\'s repo).',
        )
    if facts is None or not facts.archs:
        reason = (facts.error or facts.vllm_error) if facts else "the engine environment was not probed"
        return warned(
            "architecture", Kind.STARTUP_FAILURE,
            f"could not ask vLLM whether it supports {', '.join(archs)}: {reason}",
            "Fix the engine environment first (see the vllm / engine_env checks), then run the doctor again.",
        )
    version = f"vLLM {facts.vllm_version}"
    supported = [a for a in archs if a in facts.archs]
    if supported:
        return passed("architecture", f"{', '.join(supported)} is supported by {version}")
    in_transformers = [a for a in archs if a in facts.transformers_archs]
    if in_transformers:
        return warned(
            "architecture", Kind.STARTUP_FAILURE,
            f"{', '.join(archs)} is not implemented by {version}; it will try its Transformers backend, "
            "which works only for models whose transformers code supports it",
            "If start-up fails, use a model whose architecture vLLM implements, or upgrade the engine.",
        )
    if config.get("auto_map") and not has_flag(extra_args, "--trust-remote-code"):
        return failed(
            "architecture", Kind.STARTUP_FAILURE,
            f"{', '.join(archs)} is custom code (config.json auto_map) and --trust-remote-code is not given",
            "Add --trust-remote-code to CHAT_EXTRA_ARGS if you trust the model's code.",
        )
    if config.get("auto_map"):
        return warned(
            "architecture", Kind.STARTUP_FAILURE,
            f"{', '.join(archs)} is custom code: vLLM will try its Transformers backend with the model's code",
            "If start-up fails, use a model whose architecture vLLM implements.",
        )
    close = difflib.get_close_matches(archs[0], sorted(facts.archs), n=1, cutoff=0.85)
    if close:
        fix = (
            f'vLLM calls it {close[0]}: set "architectures": ["{close[0]}"] in config.json, or add '
            f"--hf-overrides '{{\"architectures\": [\"{close[0]}\"]}}' to CHAT_EXTRA_ARGS "
            "(Ernie4_5_ForCausalLM was renamed Ernie4_5ForCausalLM in mid-2025)."
        )
    else:
        fix = ("Use a model whose architecture this vLLM implements, or upgrade the engine "
               "(make engine after raising the vllm version in requirements/engine-*.txt).")
    return failed(
        "architecture", Kind.STARTUP_FAILURE,
        f"Model architectures {archs} are not supported by {version} (nor by transformers)", fix,
    )


def check_model_type(config: dict[str, Any], facts: EngineFacts | None, extra_args: tuple[str, ...]) -> Check:
    """transformers must know config.json's model_type, or vLLM fails while parsing the config."""
    model_type = config.get("model_type")
    if not model_type:
        return failed(
            "model_type", Kind.STARTUP_FAILURE, "config.json has no `model_type`",
            'Add the model\'s "model_type" (e.g. "llama", "ernie4_5") to config.json.',
        )
    if facts is None or not facts.model_types:
        return passed("model_type", f"model_type {model_type} (not verified: no engine facts)")
    if model_type in facts.model_types:
        return passed("model_type", f"model_type {model_type} is known to transformers {facts.transformers_version}")
    if config.get("auto_map") and has_flag(extra_args, "--trust-remote-code"):
        return passed("model_type", f"model_type {model_type} comes with the model's own code (auto_map)")
    return failed(
        "model_type", Kind.STARTUP_FAILURE,
        f"model_type {model_type!r} is unknown to transformers {facts.transformers_version} in the engine environment",
        "Fix model_type in config.json, or upgrade transformers in the engine environment; for custom code "
        "add --trust-remote-code to CHAT_EXTRA_ARGS.",
    )

# ------------------------------------------------------------------------------------------------
# Registration: report order, and what each check needs from the context
# ------------------------------------------------------------------------------------------------


@MODEL_CHECKS.register("hub", applies=has_hub_id)
def _hub(ctx: Context) -> Check:
    return check_hub(ctx.cfg.hub_id or "", ctx.cfg.hub_probe_timeout)


@MODEL_CHECKS.register("model_folder", needs=("model_path",), provides=("folder",),
                       provided_when=lambda ctx, check: check.status == "pass" and ctx.path.is_dir())
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
