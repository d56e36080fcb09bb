"""The overrides file: round trip, a second remedy on the same setting, undo, a corrupt file, the file mode, and
the spawned engine launching with what it holds."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from chainlit_app.diagnostics import FindingsStore, classify_file
from chainlit_app.engine.command import LaunchSpec, build_argv
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.models import ResolvedModel
from chainlit_app.remedies import OverridesStore, Proposal, RemedyContext, remedies_for
from chainlit_app.remedies.overrides import OVERRIDABLE, REQUEST_FIELDS, CorruptOverrides
from chainlit_app.remedies.table import BY_ID
from chainlit_app.settings import Settings

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


def kv_proposal(max_model_len: int = 32768) -> Proposal:
    """fit_max_model_len computed from a real log line (vLLM says 16816 tokens fit)."""
    root = classify_file(LOGS / "dev/out_of_memory/bonito7_kv_cache_16816_lt_32768.log").root
    assert root is not None
    ctx = RemedyContext(LaunchSpec("m", "m", "127.0.0.1", 0, "", max_model_len))
    return remedies_for(root, ctx)[0]


def test_round_trip_with_the_finding_time_and_previous_value(tmp_path: Path) -> None:
    store = OverridesStore.in_data_dir(tmp_path, clock=Clock())
    written = store.add(kv_proposal())
    assert [(e.field, e.value, e.previous) for e in written] == [("max_model_len", 16816, 32768)]
    again = OverridesStore.in_data_dir(tmp_path).entries()  # a new process reads the same file
    assert again == written
    entry = again[0]
    assert entry.remedy == "fit_max_model_len" and entry.finding_kind == "out_of_memory"
    assert "16816" in entry.finding_text and entry.finding_line == 1 and entry.at == 1001.0
    assert OverridesStore.in_data_dir(tmp_path).launch_overrides() == {"max_model_len": 16816}
    assert store.to_json()["overrides"][0]["remedy"] == "fit_max_model_len" and store.to_json()["problem"] is None


def test_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        OverridesStore.in_data_dir(tmp_path).add(kv_proposal())
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "overrides.json").stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["overrides.json"]  # no temporary file left behind


def test_a_second_remedy_on_a_setting_keeps_the_configured_value_for_undo(tmp_path: Path) -> None:
    store = OverridesStore.in_data_dir(tmp_path)
    store.add(kv_proposal(32768))
    later = kv_proposal(20000)  # computed on the already-changed launch
    store.add(later)
    (entry,) = store.entries()
    assert entry.value == 16816 and entry.previous == 32768


def test_undo_removes_only_that_remedy(tmp_path: Path) -> None:
    store = OverridesStore.in_data_dir(tmp_path)
    store.add(kv_proposal())
    root = classify_file(LOGS / "dev/decode_error/recorded_cpu_random_model_fffd_output.log").root
    assert root is not None
    (float32,) = remedies_for(root, RemedyContext(LaunchSpec("m", "m", "127.0.0.1", 0, "", 4096, dtype="bfloat16")))
    store.add(float32)
    removed = store.remove("fit_max_model_len")
    assert [e.field for e in removed] == ["max_model_len"]
    assert store.launch_overrides() == {"dtype": "float32"}
    assert store.remove("fit_max_model_len") == []


@pytest.mark.parametrize("content", [
    "{not json",
    json.dumps([1, 2]),
    json.dumps({"version": 1, "overrides": [{"field": "api_key", "value": "x", "remedy": "r", "finding_kind": "k",
                                             "finding_line": 1, "finding_text": "t", "at": 1.0, "previous": ""}]}),
    json.dumps({"version": 1, "overrides": [{"field": "port", "value": "8000", "remedy": "r", "finding_kind": "k",
                                             "finding_line": 1, "finding_text": "t", "at": 1.0, "previous": 0}]}),
])
def test_corrupt_file_is_kept_aside_and_said(tmp_path: Path, content: str) -> None:
    path = tmp_path / "overrides.json"
    path.write_text(content)
    store = OverridesStore(path, clock=lambda: 1234.0)
    assert store.entries() == []
    aside = tmp_path / "overrides.json.corrupt-1234"
    assert aside.read_text() == content and not path.exists()  # nothing lost
    assert store.problem is not None and str(aside) in store.problem and "configured settings" in store.problem
    store.add(kv_proposal())  # and the store works again
    assert store.launch_overrides() == {"max_model_len": 16816}


def test_a_value_that_would_not_load_back_is_refused_before_writing(tmp_path: Path) -> None:
    store = OverridesStore.in_data_dir(tmp_path)
    good = kv_proposal()
    bad = Proposal(good.remedy, good.finding, {"max_model_len": "big"}, {"max_model_len": 1}, "")
    with pytest.raises(CorruptOverrides):
        store.add(bad)
    assert not (tmp_path / "overrides.json").exists()


def test_every_overridable_setting_is_a_launch_field_or_a_request_field() -> None:
    fields = set(LaunchSpec.__dataclass_fields__)
    assert set(OVERRIDABLE) - REQUEST_FIELDS <= fields
    assert not REQUEST_FIELDS & fields and set(OVERRIDABLE) >= REQUEST_FIELDS
    assert "api_key" not in OVERRIDABLE and "model" not in OVERRIDABLE


def test_spawned_engine_launches_with_the_overrides(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, model="demo", max_model_len=32768, preflight=False)
    engine = SpawnedEngine(settings, FindingsStore())
    resolved = ResolvedModel("local", str(tmp_path), "demo")
    assert engine.launch_spec(resolved).max_model_len == 32768
    OverridesStore.in_data_dir(tmp_path).add(kv_proposal())  # e.g. written by `doctor --apply`
    spec = engine.launch_spec(resolved)
    assert spec.max_model_len == 16816
    argv = build_argv("python", spec)
    assert argv[argv.index("--max-model-len") + 1] == "16816"
    supervisor = engine._make_supervisor(resolved)
    assert supervisor.spec.max_model_len == 16816 and not supervisor.config.fixed_port


async def test_unsafe_remedy_is_refused_without_confirmation(tmp_path: Path) -> None:
    engine = SpawnedEngine(Settings(data_dir=tmp_path, model="demo"), FindingsStore())
    root = classify_file(LOGS / "dev/startup_failure/"
                         "litellm4600_vllm_provider_trust_remote_code_wrapped_as_apiconnectionerror.log").root
    assert root is not None
    (proposal,) = remedies_for(root, RemedyContext(LaunchSpec("m", "m", "127.0.0.1", 0, "", 4096)))
    assert proposal.remedy is BY_ID["trust_remote_code"]
    with pytest.raises(PermissionError, match="Python code"):
        await engine.apply_remedy(proposal)
    assert engine.overrides.entries() == []  # nothing written, nothing restarted
