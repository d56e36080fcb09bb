"""`python -m chainlit_app.diagnostics doctor` as a user runs it, against the real engine environment.

No vLLM server is started: the doctor only imports vLLM (once, then its facts are cached) to ask its
model registry. The point is speed: vLLM itself needs about 20 s to fail on an unknown architecture.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from chainlit_app.settings import PROJECT_ROOT
from tests.conftest import need_engine
from tests.timing import assert_within

pytestmark = pytest.mark.integration

APP_PYTHON = PROJECT_ROOT / ".venv" / "bin" / "python"
VLLM_FAILED_START_S = 20.0  # FACTS.md: unknown architecture -> exit 1 after about 20 to 24 s


def doctor(*args: str, data_dir: Path | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    python = APP_PYTHON if APP_PYTHON.exists() else Path(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHAT_") or k == "CHAT_MODELS_DIR"}
    env.update({"CHAT_MODE": "spawn", "CHAT_PORT": "0"})
    if data_dir is not None:
        env["CHAT_DATA_DIR"] = str(data_dir)
    started = time.monotonic()
    done = subprocess.run([str(python), "-m", "chainlit_app.diagnostics", "doctor", *args], capture_output=True,
                          text=True, cwd=PROJECT_ROOT, env=env, timeout=600, check=False)
    return done, time.monotonic() - started


def by_name(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in payload["checks"]}


@pytest.fixture()
def foobar_model(demo_model: Path, tmp_path: Path) -> Path:
    """The demo model with config.json naming an architecture no vLLM implements (weights linked, not copied)."""
    folder = tmp_path / "foobar"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json", "chat_template.jinja"):
        if (demo_model / name).exists():
            shutil.copy(demo_model / name, folder / name)
    (folder / "model.safetensors").symlink_to(demo_model / "model.safetensors")
    config = json.loads((demo_model / "config.json").read_text())
    config["architectures"] = ["FooBarForCausalLM"]
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_demo_model_passes(demo_model: Path) -> None:
    need_engine()
    done, _ = doctor("--json", "--model", str(demo_model))
    assert done.returncode == 0, done.stdout + done.stderr
    payload = json.loads(done.stdout)
    assert set(payload) == {"model", "blocking", "checks"} and payload["blocking"] is False
    checks = by_name(payload)
    assert not [c for c in payload["checks"] if c["status"] == "fail"], payload
    for name in ("architecture", "weights", "tokenizer", "chat_template", "eos", "head_dim", "vllm", "torch_build",
                 "companions", "ram", "kv_cache", "port", "disk"):
        assert checks[name]["status"] == "pass", checks[name]
    assert "LlamaForCausalLM is supported by vLLM" in checks["architecture"]["message"]
    for check in payload["checks"]:
        assert set(check) == {"name", "status", "kind", "message", "fix", "blocking"}


def test_demo_model_text_report(demo_model: Path) -> None:
    need_engine()
    done, _ = doctor("--model", str(demo_model))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("== ready to start vLLM")
    assert any(line.startswith("PASS  architecture") for line in lines)


def test_unknown_architecture_is_refused_fast(foobar_model: Path) -> None:
    need_engine()
    doctor("--json", "--model", str(foobar_model))  # makes sure the engine facts are cached
    done, seconds = doctor("--json", "--model", str(foobar_model))
    assert done.returncode == 1, done.stdout + done.stderr
    payload = json.loads(done.stdout)
    assert payload["blocking"] is True
    arch = by_name(payload)["architecture"]
    assert (arch["status"], arch["kind"], arch["blocking"]) == ("fail", "startup_failure", True)
    assert "FooBarForCausalLM" in arch["message"]
    assert "cached facts" in by_name(payload)["vllm"]["message"]
    assert_within(seconds, VLLM_FAILED_START_S / 4, "doctor with cached facts (a quarter of a failed vLLM start)")


def test_engine_facts_cold_then_warm(demo_model: Path, tmp_path: Path) -> None:
    """A fresh data dir forces the vLLM import once; the next run reads the cached facts."""
    need_engine()
    cold, cold_s = doctor("--json", "--model", str(demo_model), data_dir=tmp_path)
    warm, warm_s = doctor("--json", "--model", str(demo_model), data_dir=tmp_path)
    assert cold.returncode == 0 and warm.returncode == 0, cold.stdout + warm.stdout
    assert "probed in" in by_name(json.loads(cold.stdout))["vllm"]["message"]
    assert "cached facts" in by_name(json.loads(warm.stdout))["vllm"]["message"]
    assert (tmp_path / "cache" / "engine_facts.json").is_file()
    print(f"doctor cold {cold_s:.1f} s, warm {warm_s:.1f} s")
    assert_within(warm_s, cold_s / 2, f"doctor with cached facts (half of the cold run's {cold_s:.1f} s)")
