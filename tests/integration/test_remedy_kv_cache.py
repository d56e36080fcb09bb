"""Issue 13's loop closed for the KV-cache fault, with a real vLLM and the app's own wiring (the runtime's
Monitor following the engine's log into the findings store): a context the KV cache cannot hold makes the start
fail; the live classifier names the fault from the log; the remedy takes vLLM's figure from that line; applying
it writes the override and restarts the engine through its handle; a real one-token completion verifies the fix
and the finding is marked fixed. One failed start and one good start."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from chainlit_app.engine.status import EngineState
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.monitor import Monitor
from chainlit_app.remedies import finding_from_entry
from tests.conftest import settings_for_tests
from tests.findings_wait import finding_of

pytestmark = pytest.mark.integration
TOO_LONG = 65536  # x 45 KiB per token (demo model, float32) > the 1 GiB CPU KV cache




async def test_fit_max_model_len_fixes_a_start_the_kv_cache_refused(
        demo_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Past the model's 8192 positions vLLM refuses before it sizes the cache; allowed here as in test_faults.py.
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
    settings = settings_for_tests(model="demo", data_dir=tmp_path, log_dir=tmp_path / "logs", max_model_len=TOO_LONG,
                                  preflight=False, max_restarts=0, temperature=0.0)
    # Wired as chainlit_app/runtime.py wires them: the monitor owns the store the engine reports into.
    monitor = Monitor(lambda: engine.log_file, lambda: engine.endpoint)
    engine = SpawnedEngine(settings, monitor.store)
    engine.add_listener(monitor.on_engine_status)
    monitor.start()
    try:
        await engine.start()
        assert engine.status.state == EngineState.FAILED, engine.status

        entry = await finding_of(monitor, "out_of_memory", timeout=15.0)  # named live, from the engine's log file
        assert entry["rule"] == "kv_cache_too_small" and entry["source"] == "log"
        finding = finding_from_entry(entry)
        proposals = engine.proposals(finding)
        assert proposals and proposals[0].remedy.id == "fit_max_model_len", [p.remedy.id for p in proposals]
        proposal = proposals[0]
        fits = proposal.overrides["max_model_len"]
        assert isinstance(fits, int) and 0 < fits < TOO_LONG
        assert f"estimated maximum model length is {fits}" in finding.text  # vLLM's own figure, not a guess
        cli = engine.last_launch_finding()  # the offline classifier (`classify FILE`) names the same root cause
        assert cli is not None and (cli.kind, cli.rule) == ("out_of_memory", "kv_cache_too_small")

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
        fixed = next(e for e in monitor.store.snapshot() if e["id"] == entry["id"])
        assert fixed["resolved"] and fixed["resolved_reason"].startswith("fixed by fit_max_model_len")

        async with openai.AsyncOpenAI(base_url=engine.base_url + "/v1", api_key=engine.api_key,
                                      max_retries=0) as client:
            answer = await client.chat.completions.create(
                model=engine.supervisor.spec.served_model_name, temperature=0.0, max_tokens=12,
                messages=[{"role": "user", "content": "What is the capital of France?"}])
        assert "Paris" in (answer.choices[0].message.content or "")
    finally:
        await engine.stop()
        await monitor.stop()
