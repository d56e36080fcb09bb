"""What CHAT_EXTRA_ARGS says to the checks: flags given, and the JSON of --hf-overrides."""

from __future__ import annotations

import json
from typing import Any


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
