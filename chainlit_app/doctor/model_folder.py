"""Reading a model folder with the standard library: config.json, weights, safetensors headers, tokenizer.

Reads are lazy and cached (`ModelFolder`), so each check asks only for what it needs and a file is read once.
"""

from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .model_shape import DTYPE_BYTES, MIB

MAX_HEADER = 100 * MIB
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model")


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

