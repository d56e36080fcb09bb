"""The doctor's check registry: registration, dependency order, `applies`, and skipping on a missing need.

A fake context and one-line checks keep these independent of model folders; test_doctor_checks.py runs
the real registry (`run_preflight`) on crafted folders.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.doctor.check import Check, failed, passed
from chainlit_app.doctor.context import INPUTS
from chainlit_app.doctor.registry import CheckRegistry, RegistryError, run_checks
from chainlit_app.doctor.run import PREFLIGHT


@dataclass
class Fake:
    """A context with switches: `failing` names the checks that fail, `ran` records the run order."""

    failing: set[str] = field(default_factory=set)
    ran: list[str] = field(default_factory=list)
    provided: set[str] = field(default_factory=set)
    gpu: bool = False


def step(name: str) -> Callable[[Fake], Check]:
    """A check named `name` that records that it ran and fails when the context says so."""

    def run(ctx: Fake) -> Check:
        ctx.ran.append(name)
        if name in ctx.failing:
            return failed(name, Kind.STARTUP_FAILURE, f"{name} failed", "fix it")
        return passed(name, f"{name} passed")

    return run


def test_a_duplicate_name_is_refused() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    registry.register("port")(step("port"))
    with pytest.raises(RegistryError, match="'port' is already registered"):
        registry.register("port")(step("port"))
    with pytest.raises(RegistryError, match="'port'"):
        CheckRegistry.chain(registry, registry)


def test_the_decorator_returns_the_function_unchanged() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    run = step("disk")
    assert registry.register("disk")(run) is run
    (entry,) = registry
    assert (entry.name, entry.run, entry.needs, entry.provides) == ("disk", run, frozenset(), frozenset())


def test_a_check_runs_after_the_one_providing_what_it_needs() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    registry.register("weights", needs=("config",))(step("weights"))  # registered before its provider
    registry.register("port")(step("port"))
    registry.register("config", needs=("folder",), provides=("config",))(step("config"))
    registry.register("model_folder", provides=("folder",))(step("model_folder"))
    assert [c.name for c in registry.ordered()] == ["port", "model_folder", "config", "weights"]
    ctx = Fake()
    run_checks(registry, ctx)
    assert ctx.ran == ["port", "model_folder", "config", "weights"]


def test_registration_order_is_kept_among_independent_checks() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    for name in ("hub", "dtype", "port", "disk"):
        registry.register(name)(step(name))
    assert [c.name for c in registry.ordered()] == ["hub", "dtype", "port", "disk"]


def test_an_unknown_need_is_an_error_unless_the_context_meets_it() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    registry.register("architecture", needs=("config",))(step("architecture"))
    with pytest.raises(RegistryError, match="'architecture' needs config, which no check provides"):
        run_checks(registry, Fake())
    assert [c.name for c in registry.ordered(inputs={"config"})] == ["architecture"]


def test_a_cycle_is_an_error() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    registry.register("a", needs=("b_done",), provides=("a_done",))(step("a"))
    registry.register("b", needs=("a_done",), provides=("b_done",))(step("b"))
    registry.register("c")(step("c"))
    with pytest.raises(RegistryError, match="a, b need each other"):
        registry.ordered()


def test_applies_predicate_decides_whether_a_check_runs() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    registry.register("kv_cache", applies=lambda ctx: not ctx.gpu)(step("kv_cache"))
    registry.register("gpu_memory", applies=lambda ctx: ctx.gpu)(step("gpu_memory"))
    assert [c.name for c in run_checks(registry, Fake(gpu=False))] == ["kv_cache"]
    assert [c.name for c in run_checks(registry, Fake(gpu=True))] == ["gpu_memory"]


def test_a_check_is_skipped_when_its_provider_failed() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    registry.register("model_folder", provides=("folder",))(step("model_folder"))
    registry.register("config", needs=("folder",), provides=("config",))(step("config"))
    registry.register("eos", needs=("folder", "config"))(step("eos"))
    registry.register("port")(step("port"))
    healthy = run_checks(registry, Fake())
    assert [c.name for c in healthy] == ["model_folder", "config", "eos", "port"]
    broken = run_checks(registry, Fake(failing={"config"}))
    assert [(c.name, c.status) for c in broken] == [("model_folder", "pass"), ("config", "fail"), ("port", "pass")]


def test_provided_when_overrides_pass_means_provided() -> None:
    """vLLM's check fails on an unimportable vLLM but still provides the facts for transformers and torch."""
    registry: CheckRegistry[Fake] = CheckRegistry()
    registry.register("vllm", provides=("probed",), provided_when=lambda ctx, check: True)(step("vllm"))
    registry.register("transformers", needs=("probed",))(step("transformers"))
    results = run_checks(registry, Fake(failing={"vllm"}))
    assert [(c.name, c.status) for c in results] == [("vllm", "fail"), ("transformers", "pass")]


def test_the_needs_the_context_meets_itself_are_taken_from_the_context() -> None:
    registry: CheckRegistry[Fake] = CheckRegistry()
    registry.register("model_folder", needs=("model_path",))(step("model_folder"))
    assert run_checks(registry, Fake(), inputs={"model_path"}) == []
    assert [c.name for c in run_checks(registry, Fake(provided={"model_path"}), inputs={"model_path"})] == [
        "model_folder"]


def test_the_preflight_registry_runs_in_report_order() -> None:
    assert [c.name for c in PREFLIGHT.ordered(INPUTS)] == [
        "hub", "model_folder", "config", "architecture", "model_type", "weights", "weight_size", "tokenizer",
        "chat_template", "eos", "head_dim", "max_model_len", "engine_env", "vllm", "transformers", "arch_versions",
        "torch_build", "companions", "dtype", "port", "ram", "kv_cache", "gpu_memory", "disk",
    ]


def test_the_doctor_engine_and_diagnostics_import_no_chainlit() -> None:
    """The doctor serves the CLI too, which must not pay for (or depend on) Chainlit."""
    probe = ("import sys, chainlit_app.doctor, chainlit_app.diagnostics, chainlit_app.engine.facts; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'chainlit'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
