"""Issue 13's loop closed for the KV-cache fault, with a real vLLM: a context the KV cache cannot hold makes the
start fail; the app's own classifier names the fault from the engine's log file; the remedy takes vLLM's figure
from that line; applying it writes the override and restarts the engine through its handle; a real one-token
completion verifies the fix. One failed start and one good start."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from chainlit_app.diagnostics import FindingsStore
from chainlit_app.engine.status import EngineState
from chainlit_app.handles.spawned import SpawnedEngine
from tests.conftest import settings_for_tests

pytestmark = pytest.mark.integration
TOO_LONG = 65536  # x 45 KiB per token (demo model, float32) > the 1 GiB CPU KV cache


async def test_fit_max_model_len_fixes_a_start_the_kv_cache_refused(
        demo_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Past the model's 8192 positions vLLM refuses before it sizes the cache; allowed here as in test_faults.py.
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
    settings = settings_for_tests(model="demo", data_dir=tmp_path, log_dir=tmp_path / "logs", max_model_len=TOO_LONG,
                                  preflight=False, max_restarts=0, temperature=0.0)
    engine = SpawnedEngine(settings, FindingsStore())
    try:
        await engine.start()
        assert engine.status.state == EngineState.FAILED, engine.status

        finding = engine.last_launch_finding()  # the classifier the CLI and the monitor use, on the real log
        assert finding is not None and (finding.kind, finding.rule) == ("out_of_memory", "kv_cache_too_small")
        proposals = engine.proposals(finding)
        assert proposals and proposals[0].remedy.id == "fit_max_model_len", [p.remedy.id for p in proposals]
        proposal = proposals[0]
        fits = proposal.overrides["max_model_len"]
        assert isinstance(fits, int) and 0 < fits < TOO_LONG
        assert str(fits) in finding.text  # vLLM's own figure, not a guess

        result = await engine.apply_remedy(proposal)
        print(f"\nremedy fit_max_model_len: --max-model-len {TOO_LONG} -> {fits}; apply to verified "
              f"{result.seconds:.1f} s; evidence line {finding.line}: {finding.text[:160]}")
        assert result.fixed, result.evidence
        assert engine.is_ready() and engine.status.state == EngineState.READY
        assert result.overrides == {"max_model_len": fits}
        assert engine.supervisor is not None and engine.supervisor.spec.max_model_len == fits
        assert f"--max-model-len {fits}" in " ".join(engine.supervisor.argv)

        stored = json.loads((tmp_path / "overrides.json").read_text())["overrides"]
        assert [(e["field"], e["value"], e["previous"], e["finding_kind"]) for e in stored] == [
            ("max_model_len", fits, TOO_LONG, "out_of_memory")]

        async with openai.AsyncOpenAI(base_url=engine.base_url + "/v1", api_key=engine.api_key,
                                      max_retries=0) as client:
            answer = await client.chat.completions.create(
                model=engine.supervisor.spec.served_model_name, temperature=0.0, max_tokens=12,
                messages=[{"role": "user", "content": "What is the capital of France?"}])
        assert "Paris" in (answer.choices[0].message.content or "")
    finally:
        await engine.stop()
