"""The remedy desk without vLLM: a real Runtime (spawn or attach, nothing started) whose findings store is fed
the classifier's findings of recorded vLLM logs, as the log tail feeds it. What a request may not do is refused
here with the status the route answers; applying for real is tested against vLLM in
tests/integration/test_remedy_api.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chainlit_app.diagnostics import Finding, FindingsStore, classify_file
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.models import ResolvedModel
from chainlit_app.remedies import OverridesStore
from chainlit_app.remedies.table import BY_ID, Proposal
from chainlit_app.remedy_desk import RemedyDesk, RemedyRefused
from chainlit_app.runtime import Runtime
from tests.conftest import settings_for_tests

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"
KV_LOG = LOGS / "out_of_memory" / "recorded_cpu_kv_cache_65536_allow_long.log"
REMOTE_LOG = LOGS / "startup_failure" / "litellm4600_vllm_provider_trust_remote_code_wrapped_as_apiconnectionerror.log"


def root(log: Path) -> Finding:
    found = classify_file(log).root
    assert found is not None
    return found


def spawn_runtime(tmp_path: Path, **settings: object) -> Runtime:
    runtime = Runtime(settings_for_tests(model="demo", data_dir=tmp_path, log_dir=tmp_path / "logs",
                                         max_model_len=65536, **settings))
    engine = runtime.engine
    assert isinstance(engine, SpawnedEngine)
    engine.resolved = ResolvedModel("local", str(tmp_path / "model"), "demo")  # resolved, never launched
    return runtime


async def test_open_finding_lists_its_remedies_and_refusals_say_why(tmp_path: Path) -> None:
    runtime = spawn_runtime(tmp_path)
    desk = runtime.remedies
    entry = runtime.monitor.store.add(root(KV_LOG))
    findings = runtime.monitor.store.snapshot()
    await desk.annotate(findings)
    remedies = findings[0]["remedies"]
    assert remedies[0]["id"] == "fit_max_model_len", [r["id"] for r in remedies]
    first = remedies[0]
    assert first["overrides"] == {"max_model_len": 23168} and first["previous"] == {"max_model_len": 65536}
    assert first["safe"] is True and "finding" not in first and first["why"]
    assert findings[0]["remedy_outcome"] is None
    assert desk.overrides_json() == {"overrides": [], "problem": None}
    assert desk.state_json()["auto"] == "off" and desk.state_json()["available"] is True

    with pytest.raises(RemedyRefused) as unknown:
        await desk.apply("no_such_remedy", finding_id=entry["id"])
    assert unknown.value.status == 404 and "fit_max_model_len" in str(unknown.value)
    with pytest.raises(RemedyRefused) as gone:
        await desk.apply("fit_max_model_len", finding_id="0123456789ab")
    assert gone.value.status == 404 and "No open finding" in str(gone.value)
    with pytest.raises(RemedyRefused) as other_kind:
        await desk.apply("free_port", kind="out_of_memory")
    assert other_kind.value.status == 409 and "does not apply" in str(other_kind.value)
    with pytest.raises(RemedyRefused) as nothing:
        await desk.undo("fit_max_model_len")
    assert nothing.value.status == 404


async def test_unsafe_remedy_needs_confirmation_and_is_never_automatic(tmp_path: Path) -> None:
    runtime = spawn_runtime(tmp_path, auto_remedy="safe")
    desk = runtime.remedies
    entry = runtime.monitor.store.add(root(REMOTE_LOG))
    findings = runtime.monitor.store.snapshot()
    await desk.annotate(findings)
    assert [(r["id"], r["safe"]) for r in findings[0]["remedies"]] == [("trust_remote_code", False)]
    with pytest.raises(RemedyRefused) as refused:
        await desk.apply("trust_remote_code", finding_id=entry["id"])
    assert refused.value.status == 400 and "confirm" in str(refused.value)
    assert refused.value.extra["risk"] == BY_ID["trust_remote_code"].risk and "Python code" in str(refused.value)
    with pytest.raises(RemedyRefused):
        await desk.apply("trust_remote_code", finding_id=entry["id"], confirm=True, auto=True)
    assert await desk.auto_once() is None, "the automatic mode found a safe remedy where there is none"
    assert not desk.busy and not (tmp_path / "overrides.json").exists()


async def test_attach_mode_answers_that_the_app_does_not_own_the_engine(tmp_path: Path) -> None:
    runtime = Runtime(settings_for_tests(mode="attach", vllm_url="http://127.0.0.1:9/v1", data_dir=tmp_path,
                                         log_dir=tmp_path / "logs"))
    desk: RemedyDesk = runtime.remedies
    runtime.monitor.store.add(root(KV_LOG))
    findings = runtime.monitor.store.snapshot()
    await desk.annotate(findings)
    assert findings[0]["remedies"] == []
    for call in (desk.apply("fit_max_model_len", kind="out_of_memory"), desk.undo("fit_max_model_len")):
        with pytest.raises(RemedyRefused) as refused:
            await call
        assert refused.value.status == 409 and "did not start" in str(refused.value)
    assert desk.state_json()["available"] is False


def test_an_automatic_override_says_so_and_old_files_still_load(tmp_path: Path) -> None:
    store = OverridesStore.in_data_dir(tmp_path)
    found = root(KV_LOG)
    proposal = Proposal(BY_ID["fit_max_model_len"], found, {"max_model_len": 23168}, {"max_model_len": 65536}, "r")
    store.add(proposal, auto=True)
    listed = store.to_json()["overrides"]
    assert [(o["field"], o["auto"], o["finding_kind"]) for o in listed] == [("max_model_len", True, "out_of_memory")]
    data = json.loads(store.path.read_text())
    del data["overrides"][0]["auto"]  # written before the automatic mode existed
    store.path.write_text(json.dumps(data))
    assert store.entries()[0].auto is False and store.problem is None


def test_a_verified_fix_relabels_what_its_restart_resolved(tmp_path: Path) -> None:
    now = [100.0]
    store = FindingsStore(clock=lambda: now[0])
    store.add(root(KV_LOG))
    now[0] = 110.0
    store.resolve_all("engine ready again after restart 3")  # the restart the remedy made, before verification
    now[0] = 120.0
    assert store.resolve_kind("out_of_memory", "fixed by fit_max_model_len", since=105.0) == 1
    assert store.snapshot()[0]["resolved_reason"] == "fixed by fit_max_model_len"
    assert store.resolve_kind("out_of_memory", "later", since=125.0) == 0, "resolved before that apply: kept"


def test_after_a_verified_fix_only_what_the_failed_launch_saw_is_resolved() -> None:
    now = [100.0]
    store = FindingsStore(clock=lambda: now[0])
    store.add(root(KV_LOG))
    store.add(Finding(kind="startup_failure", line=162, text="RuntimeError: Engine core initialization failed.",
                      hint="", rule="engine_failed"))
    now[0] = 130.0
    # seen after the apply began: the new launch's own, kept open
    store.add(Finding(kind="slow_or_stalled", line=3, text="no token for 30 s", hint="", rule="stall"))
    assert store.resolve_all("engine ready and verified", seen_before=120.0) == 2
    assert {e["kind"]: e["resolved"] for e in store.snapshot()} == {
        "slow_or_stalled": False, "out_of_memory": True, "startup_failure": True}
