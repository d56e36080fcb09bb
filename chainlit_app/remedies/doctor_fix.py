"""`doctor --fix`: the remedies for what the doctor finds, and with `--apply` the overrides written before the
first start (so a broken setting is fixed without a failed launch of vLLM)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import psutil

from chainlit_app.doctor import Check, PreflightConfig
from chainlit_app.engine.command import LaunchSpec
from chainlit_app.hub import hub_snapshot
from chainlit_app.models import ResolvedModel
from chainlit_app.settings import Settings

from .overrides import OverridesStore
from .table import Proposal, RemedyContext, remedies_for


@dataclass
class FixPlan:
    """Per failing or warning check, the remedies that apply (preferred first); what was applied or held back."""

    proposals: list[tuple[Check, list[Proposal]]] = field(default_factory=list)
    applied: list[Proposal] = field(default_factory=list)
    held: list[Proposal] = field(default_factory=list)  # unsafe and not confirmed


def plan_fixes(settings: Settings, config: PreflightConfig, checks: list[Check], store: OverridesStore) -> FixPlan:
    """The launch the doctor checked (settings plus stored overrides) is the one the remedies change."""
    model_dir = config.model_dir or (hub_snapshot(config.hub_id) if config.hub_id else None)
    resolved = ResolvedModel("doctor", str(model_dir or config.hub_id), settings.model.served_name or "")
    spec = LaunchSpec.from_settings(settings, resolved, store.launch_overrides(), gpu_present=config.gpu_present)
    ctx = RemedyContext(spec, Path(model_dir) if model_dir else None, psutil.virtual_memory().available,
                        data_dir=settings.storage.data_dir)
    plan = FixPlan()
    for check in checks:
        finding = check.to_finding()
        if finding is not None:
            plan.proposals.append((check, remedies_for(finding, ctx)))
    return plan


def apply_plan(plan: FixPlan, store: OverridesStore, confirmed: set[str]) -> FixPlan:
    """Write the preferred remedy of each check; an unsafe one only when its id is in `confirmed`. A setting
    is changed once per run (the first check that asks for it wins)."""
    changed: set[str] = set()
    for _, proposals in plan.proposals:
        if not proposals:
            continue
        best = proposals[0]
        if changed & set(best.overrides):
            continue
        if not best.remedy.safe and best.remedy.id not in confirmed:
            plan.held.append(best)
            continue
        store.add(best)
        changed |= set(best.overrides)
        plan.applied.append(best)
    return plan


def describe(proposal: Proposal) -> str:
    """One line: what changes from what to what, and the figure it comes from."""
    values = ", ".join(f"{name} {proposal.previous.get(name)!r} -> {value!r}"
                       for name, value in proposal.overrides.items())
    safety = "safe" if proposal.remedy.safe else "UNSAFE: needs --confirm " + proposal.remedy.id
    return f"{proposal.remedy.id} ({proposal.remedy.changes}): {values}; {proposal.reason} [{safety}]"
