"""A model's shape from its config.json: dimensions, dtypes, and the memory its weights and KV cache take."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .check import PreflightConfig

if TYPE_CHECKING:
    from .model_folder import WeightFile

GIB = 1024**3
MIB = 1024**2
# Measured here: API server + EngineCore + worker for a tiny model, about 2.3 to 2.9 GiB (FACTS.md).
PROCESS_OVERHEAD = int(2.5 * GIB)
# Bytes per element of the dtypes a safetensors header names.
DTYPE_BYTES = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
    "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "U32": 4, "U64": 8,
}
# Bytes per element of config.json's torch_dtype and of vLLM's --dtype values.
TORCH_DTYPE_BYTES = {
    "float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2, "bf16": 2, "fp16": 2, "fp32": 4,
}


@dataclass(frozen=True)
class Dims:
    """The shape numbers the size and memory checks need (text part of multimodal configs)."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool

    def parameters(self) -> int:
        """Parameter estimate of a Llama-like decoder; MoE experts are counted once (a lower bound)."""
        q = self.hidden * self.heads * self.head_dim
        kv = 2 * self.hidden * self.kv_heads * self.head_dim
        o = self.heads * self.head_dim * self.hidden
        mlp = 3 * self.hidden * self.intermediate
        per_layer = q + kv + o + mlp + 2 * self.hidden
        embeddings = self.vocab * self.hidden * (1 if self.tied else 2)
        return self.layers * per_layer + embeddings + self.hidden

    def kv_bytes_per_token(self, dtype_bytes: int) -> int:
        """layers x (K and V) x kv_heads x head_dim x bytes."""
        return self.layers * 2 * self.kv_heads * self.head_dim * dtype_bytes


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """Multimodal configs keep the language model's numbers under text_config."""
    inner = config.get("text_config")
    return {**config, **inner} if isinstance(inner, dict) else config


def int_field(config: dict[str, Any], *names: str) -> int | None:
    """The first of `names` holding a positive int: configs spell the same number differently (n_embd, d_model)."""
    for name in names:
        value = config.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def head_dim_of(config: dict[str, Any]) -> int | None:
    cfg = text_config(config)
    explicit = int_field(cfg, "head_dim")
    if explicit:
        return explicit
    hidden = int_field(cfg, "hidden_size", "n_embd", "d_model")
    heads = int_field(cfg, "num_attention_heads", "n_head")
    return hidden // heads if hidden and heads else None


def dims_of(config: dict[str, Any]) -> Dims | None:
    cfg = text_config(config)
    hidden = int_field(cfg, "hidden_size", "n_embd", "d_model")
    layers = int_field(cfg, "num_hidden_layers", "n_layer", "num_layers")
    heads = int_field(cfg, "num_attention_heads", "n_head")
    vocab = int_field(cfg, "vocab_size")
    head_dim = head_dim_of(config)
    if not (hidden and layers and heads and vocab and head_dim):
        return None
    return Dims(
        hidden=hidden,
        layers=layers,
        heads=heads,
        kv_heads=int_field(cfg, "num_key_value_heads", "num_kv_heads") or heads,
        head_dim=head_dim,
        intermediate=int_field(cfg, "intermediate_size", "ffn_hidden_size", "n_inner") or 4 * hidden,
        vocab=vocab,
        tied=bool(cfg.get("tie_word_embeddings", False)),
    )


@dataclass(frozen=True)
class MemoryNeed:
    """Bytes the server needs in RAM, by part, for the message."""

    weights: int
    kv: int
    overhead: int
    note: str

    @property
    def total(self) -> int:
        return self.weights + self.kv + self.overhead


def serving_weight_bytes(files: list[WeightFile], serve_dtype: str, config: dict[str, Any]) -> tuple[int, str]:
    """Weights in RAM at the serving dtype: a bf16 file served in float32 doubles."""
    file_bytes = sum(f.size for f in files)
    width = TORCH_DTYPE_BYTES.get(serve_dtype.lower())
    elements = [f.elements for f in files]
    if width is None or not files:
        return file_bytes, "as on disk"
    if all(n is not None for n in elements):
        stored = {d for f in files for d in f.dtypes}
        return sum(n or 0 for n in elements) * width, f"{'/'.join(sorted(stored))} on disk, {serve_dtype} in RAM"
    disk_width = TORCH_DTYPE_BYTES.get(str(config.get("torch_dtype") or config.get("dtype") or ""), width)
    return file_bytes * width // disk_width, f"{serve_dtype} in RAM"


def memory_need(cfg: PreflightConfig, weight_bytes: int | None, note: str) -> MemoryNeed:
    kv = 0 if cfg.on_gpu else cfg.kv_cache_gib * GIB
    return MemoryNeed(weight_bytes or 0, kv, PROCESS_OVERHEAD, note if weight_bytes else "weights unknown")
