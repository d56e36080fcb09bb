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
