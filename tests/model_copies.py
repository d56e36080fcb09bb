"""Faulty copies of the demo model folder, for the remedy tests: the small files are copied (and then broken
by the test), the weights are linked, so a copy costs nothing and the demo model is never touched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any


def model_copy(demo_model: Path, into: Path) -> Path:
    """A folder vLLM loads like the demo model; edit its JSON files with `edit_json`."""
    into.mkdir(parents=True)
    for item in demo_model.iterdir():
        if item.suffix == ".safetensors":
            (into / item.name).symlink_to(item)
        elif item.is_file():
            shutil.copy2(item, into / item.name)
    return into


def edit_json(path: Path, **values: Any) -> None:
    """Set (or, with None, remove) top-level keys of a JSON file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in values.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


CUSTOM_CONFIG = '''"""A configuration class of the model's own (remote code): Llama's under another name."""
from transformers import LlamaConfig


class CustomLlamaConfig(LlamaConfig):
    model_type = "custom_llama"
'''
CUSTOM_MODELING = '''"""A model class of the model's own (remote code): Llama with the configuration above."""
from transformers import LlamaForCausalLM

from .configuration_custom_llama import CustomLlamaConfig


class CustomLlamaForCausalLM(LlamaForCausalLM):
    config_class = CustomLlamaConfig
'''


def remote_code_copy(demo_model: Path, into: Path) -> Path:
    """A copy of the demo model whose config.json names its own classes through `auto_map` (a model_type
    transformers does not know, implemented in .py files in the folder): loading its configuration runs that
    code, which transformers (and so vLLM) does only with trust_remote_code. The weights are Llama's, and the
    architecture stays LlamaForCausalLM, which vLLM serves with its own implementation once the config loads."""
    folder = model_copy(demo_model, into)
    (folder / "configuration_custom_llama.py").write_text(CUSTOM_CONFIG, encoding="utf-8")
    (folder / "modeling_custom_llama.py").write_text(CUSTOM_MODELING, encoding="utf-8")
    edit_json(folder / "config.json", model_type="custom_llama", auto_map={
        "AutoConfig": "configuration_custom_llama.CustomLlamaConfig",
        "AutoModelForCausalLM": "modeling_custom_llama.CustomLlamaForCausalLM"})
    return folder
