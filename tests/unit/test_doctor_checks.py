"""The doctor's checks on crafted model folders: one broken thing per test, the finding a user would get.

Folders are written into tmp_path with real (tiny, zero-filled) safetensors files (tests/doctor_folders.py).
Engine facts come from a fake `EngineFacts` only for the pure checks; tests/integration/test_doctor.py runs the
real probe. Engine, environment and resource checks are in test_doctor_environment.py.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from chainlit_app.doctor import PreflightConfig, run_preflight
from chainlit_app.doctor.checks_engine import check_dtype
from chainlit_app.doctor.checks_model import check_hub
from chainlit_app.doctor.model_folder import inspect_safetensors
from tests.doctor_folders import (
    CHATML,
    FACTS,
    TINY,
    assert_finding,
    config_for,
    llama_tensors,
    make_model,
    run,
    write_safetensors,
)

# ------------------------------------------------------------------------------------------------
# A healthy folder passes every model check
# ------------------------------------------------------------------------------------------------


def test_healthy_tiny_folder_passes_model_checks(tmp_path: Path) -> None:
    checks = run(make_model(tmp_path), tmp_path)
    model_names = ["model_folder", "config", "architecture", "model_type", "weights", "weight_size", "tokenizer",
                   "chat_template", "eos", "head_dim", "max_model_len"]
    for name in model_names:
        assert checks[name].status == "pass", checks[name]
    assert "safetensors headers" in checks["weight_size"].message
    assert "<|im_end|>" in checks["eos"].message


# ------------------------------------------------------------------------------------------------
# Model folder checks, one per check
# ------------------------------------------------------------------------------------------------


def test_model_folder_missing(tmp_path: Path) -> None:
    checks = run(tmp_path / "does-not-exist", tmp_path)
    assert_finding(checks["model_folder"], "fail", "model_not_found", "CHAT_MODEL")
    assert "does not exist" in checks["model_folder"].message
    assert "config" not in checks  # nothing else to read in a folder that is not there


def test_demo_folder_not_built_is_a_warning_with_the_build_command(tmp_path: Path) -> None:
    checks = run(tmp_path / "models" / "smollm2-135m-instruct", tmp_path, model="demo")
    assert_finding(checks["model_folder"], "warn", "model_not_found", "python -m chainlit_app.models")


def test_config_json_broken(tmp_path: Path) -> None:
    folder = make_model(tmp_path)
    (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLM"],')
    checks = run(folder, tmp_path)
    assert_finding(checks["config"], "fail", "startup_failure", "config.json")
    assert "not valid JSON" in checks["config"].message


def test_architecture_unknown_to_vllm_and_transformers(tmp_path: Path) -> None:
    checks = run(make_model(tmp_path, architectures=["FooBarForCausalLM"]), tmp_path)
    assert_finding(checks["architecture"], "fail", "startup_failure", "make engine")
    assert "FooBarForCausalLM" in checks["architecture"].message
    assert "0.32.0" in checks["architecture"].message


def test_architecture_old_ernie_name_suggests_the_new_one(tmp_path: Path) -> None:
    folder = make_model(tmp_path, architectures=["Ernie4_5_ForCausalLM"], model_type="ernie4_5")
    checks = run(folder, tmp_path)
    assert_finding(checks["architecture"], "fail", "startup_failure", "Ernie4_5ForCausalLM", "config.json",
                   "--hf-overrides", "CHAT_EXTRA_ARGS")
    # ... and following the fix (the override in CHAT_EXTRA_ARGS) clears it
    fixed = run(folder, tmp_path, extra_args=("--hf-overrides", '{"architectures": ["Ernie4_5ForCausalLM"]}'))
    assert fixed["architecture"].status == "pass"


def test_architecture_only_in_transformers_is_a_warning(tmp_path: Path) -> None:
    checks = run(make_model(tmp_path, architectures=["OddNewForCausalLM"], model_type="oddnew"), tmp_path)
    assert_finding(checks["architecture"], "warn", "startup_failure")
    assert "Transformers backend" in checks["architecture"].message


def test_model_type_unknown(tmp_path: Path) -> None:
    checks = run(make_model(tmp_path, model_type="foobar"), tmp_path)
    assert_finding(checks["model_type"], "fail", "startup_failure", "config.json", "--trust-remote-code")


def test_weights_missing(tmp_path: Path) -> None:
    folder = make_model(tmp_path)
    (folder / "model.safetensors").unlink()
    checks = run(folder, tmp_path)
    assert_finding(checks["weights"], "fail", "model_not_found", str(folder))
    assert "no weights" in checks["weights"].message


def test_weights_truncated_safetensors(tmp_path: Path) -> None:
    folder = make_model(tmp_path)
    write_safetensors(folder / "model.safetensors", llama_tensors(TINY), cut=1000)
    checks = run(folder, tmp_path)
    assert_finding(checks["weights"], "fail", "startup_failure", str(folder))
    assert "truncated" in checks["weights"].message


def test_weights_corrupt_header(tmp_path: Path) -> None:
    folder = make_model(tmp_path)
    blob = bytearray((folder / "model.safetensors").read_bytes())
    blob[8:20] = b"\xff" * 12
    (folder / "model.safetensors").write_bytes(bytes(blob))
    wf = inspect_safetensors(folder / "model.safetensors")
    assert wf.problem and "corrupt" in wf.problem
    assert_finding(run(folder, tmp_path)["weights"], "fail", "startup_failure", "Download")


def test_weights_sharded_index_names_a_missing_shard(tmp_path: Path) -> None:
    folder = make_model(tmp_path)
    (folder / "model.safetensors").rename(folder / "model-00001-of-00002.safetensors")
    weight_map = {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                  "model.norm.weight": "model-00002-of-00002.safetensors"}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    checks = run(folder, tmp_path)
    assert_finding(checks["weights"], "fail", "startup_failure", str(folder))
    assert "model-00002-of-00002.safetensors" in checks["weights"].message


def test_weight_size_far_below_config(tmp_path: Path) -> None:
    # config.json claims 24 layers and a big vocabulary; the file holds the 2-layer tiny model
    folder = make_model(tmp_path, weights_from=TINY, num_hidden_layers=24, vocab_size=32000)
    checks = run(folder, tmp_path)
    assert checks["weights"].status == "pass"  # the file itself is intact ...
    assert_finding(checks["weight_size"], "fail", "startup_failure", "config.json", str(folder))


def test_tokenizer_missing(tmp_path: Path) -> None:
    folder = make_model(tmp_path)
    (folder / "tokenizer.json").unlink()
    checks = run(folder, tmp_path)
    assert_finding(checks["tokenizer"], "fail", "startup_failure", "tokenizer.json", "--tokenizer")


def test_chat_template_missing_blocks_unless_given_by_flag(tmp_path: Path) -> None:
    folder = make_model(tmp_path, template=None)
    checks = run(folder, tmp_path)
    assert_finding(checks["chat_template"], "fail", "chat_template", "--chat-template", "CHAT_EXTRA_ARGS",
                   "chat_template.jinja")
    given = run(folder, tmp_path, extra_args=("--chat-template", str(tmp_path / "t.jinja")))
    assert given["chat_template"].status == "pass"
    (folder / "chat_template.jinja").write_text(CHATML)
    assert run(folder, tmp_path)["chat_template"].message == "chat template from chat_template.jinja"


def test_chat_template_syntax_error(tmp_path: Path) -> None:
    folder = make_model(tmp_path, template="{% for m in messages %}{{ m['content'] }")
    checks = run(folder, tmp_path)
    assert_finding(checks["chat_template"], "fail", "chat_template", "tokenizer_config.json", "--chat-template")


def test_eos_turn_end_not_a_stop_token(tmp_path: Path) -> None:
    # the template ends turns with <|im_end|> (id 2) but EOS says </s> (id 3) everywhere
    folder = make_model(tmp_path, eos_token="</s>", gen_eos=(3,), eos_token_id=3)
    checks = run(folder, tmp_path)
    assert_finding(checks["eos"], "warn", "empty_output", "generation_config.json", "<|im_end|>")
    assert "<|im_end|> (id 2)" in checks["eos"].message


def test_eos_tokenizer_and_generation_config_disagree(tmp_path: Path) -> None:
    checks = run(make_model(tmp_path, gen_eos=(0,)), tmp_path)
    assert_finding(checks["eos"], "warn", "empty_output", "generation_config.json")
    assert "not in generation_config.json" in checks["eos"].message


def test_head_dim_16_blocks_on_cpu_only(tmp_path: Path) -> None:
    folder = make_model(tmp_path, head_dim=16)
    checks = run(folder, tmp_path)
    assert_finding(checks["head_dim"], "fail", "version_mismatch", "CHAT_DEVICE=gpu")
    assert "head_dim=16" in checks["head_dim"].message
    assert run(folder, tmp_path, device="gpu")["head_dim"].status == "pass"


def test_max_model_len_beyond_positions(tmp_path: Path) -> None:
    checks = run(make_model(tmp_path), tmp_path, max_model_len=4096)
    assert_finding(checks["max_model_len"], "fail", "startup_failure", "CHAT_MAX_MODEL_LEN to 2048")


def test_dtype_bf16_on_cpu_without_bf16() -> None:
    check = check_dtype(PreflightConfig(model="m", dtype="bfloat16", cpu_bf16=False))
    assert_finding(check, "warn", "decode_error", "CHAT_DTYPE=float32")
    assert check_dtype(PreflightConfig(model="m", dtype="bfloat16", cpu_bf16=True)).status == "pass"
    assert check_dtype(PreflightConfig(model="m", dtype="auto")).message.endswith("--dtype float32")


# ------------------------------------------------------------------------------------------------
# Hub ids
# ------------------------------------------------------------------------------------------------


def test_hub_offline_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    check = check_hub("baidu/ERNIE-4.5-0.3B-PT", timeout=1)
    assert_finding(check, "warn", "connection", "CHAT_MODEL", "huggingface-cli download baidu/ERNIE-4.5-0.3B-PT",
                   "HF_HUB_OFFLINE")
    assert "HF_HUB_OFFLINE is set" in check.message and "demo model" in check.message


def test_hub_unreachable_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with socket.socket() as closed:  # a port nobody listens on: connection refused at once
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    check = check_hub("baidu/ERNIE-4.5-0.3B-PT", timeout=1)
    assert_finding(check, "warn", "connection", "CHAT_MODEL", "CHAT_HUB_PROBE_TIMEOUT")
    assert "did not answer" in check.message


def test_hub_id_in_cache_checks_the_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    repo = tmp_path / "hf" / "hub" / "models--acme--tiny"
    make_model(repo / "snapshots", "abc123", template=None)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    checks = {c.name: c for c in run_preflight(config_for(None, tmp_path, model="acme/tiny", hub_id="acme/tiny"),
                                               facts=FACTS)}
    assert checks["hub"].status == "pass"
    assert_finding(checks["chat_template"], "fail", "chat_template", "--chat-template")

