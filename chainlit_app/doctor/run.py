"""Run the doctor: every registered check, in dependency and report order, on one config.

Report order: model (hub, folder, config, architecture), the folder's files, the engine, resources; the
engine and resource checks only when spawning (in attach mode the server and its machine are elsewhere).
"""

from __future__ import annotations

from chainlit_app.engine.facts import EngineFacts, load_engine_facts

from .check import Check, PreflightConfig
from .checks_engine import ENGINE_CHECKS
from .checks_files import FILE_CHECKS
from .checks_model import MODEL_CHECKS
from .checks_resources import RESOURCE_CHECKS
from .context import INPUTS, Context
from .registry import CheckRegistry, run_checks

PREFLIGHT: CheckRegistry[Context] = CheckRegistry.chain(MODEL_CHECKS, FILE_CHECKS, ENGINE_CHECKS, RESOURCE_CHECKS)


def engine_facts_for(cfg: PreflightConfig) -> EngineFacts | None:
    """None in attach mode or without an engine environment; otherwise cached facts (probing if stale)."""
    if not cfg.spawn or not cfg.engine_python.exists():
        return None
    return load_engine_facts(cfg.engine_python, cfg.facts_cache, timeout=cfg.facts_timeout)


def run_preflight(cfg: PreflightConfig, facts: EngineFacts | None = None) -> list[Check]:
    """All checks that apply, in report order; `facts` defaults to the engine's (cached) facts."""
    if facts is None:
        facts = engine_facts_for(cfg)
    return run_checks(PREFLIGHT, Context.start(cfg, facts), INPUTS)
