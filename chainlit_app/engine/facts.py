"""What only the engine's own Python can tell, read from the app environment and cached.

`load_engine_facts` runs the probe (`facts_probe.py`, a vLLM import of 10 to 20 s) under the engine's
Python only when the cached JSON's key no longer matches: the engine python, stats of vllm/__init__.py,
torch/version.py and the site-packages folder, and a hash of the probe's source. So the doctor before
each spawn costs milliseconds instead of a vLLM import.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chainlit_app.engine import facts_probe
from chainlit_app.engine.childenv import engine_environment
from chainlit_app.engine.facts_probe import MARKER, SCHEMA, last_error_line
from chainlit_app.i18n import Msg

PROBE_TIMEOUT = 300.0
PROBE_SCRIPT = facts_probe.HERE


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
    """Run the probe script under the engine's Python and parse its facts line (or describe why there is none)."""
    env = engine_environment()  # vLLM is imported there: it sees what the server would, no app secret
    env.update({"VLLM_LOGGING_LEVEL": "ERROR", "VLLM_NO_USAGE_STATS": "1", "TRANSFORMERS_VERBOSITY": "error"})
    started = time.monotonic()
    try:
        done = subprocess.run([str(python), str(PROBE_SCRIPT)], capture_output=True, text=True, timeout=timeout,
                              env=env, cwd=tempfile.gettempdir(), check=False)
    except subprocess.TimeoutExpired:
        return {"error": Msg("engine.probe_timeout", seconds=f"{timeout:.0f}")}
    except OSError as exc:
        return {"error": Msg("engine.probe_cannot_run", python=str(python), error=exc.strerror or str(exc))}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                data: dict[str, Any] = json.loads(line[len(MARKER):])
            except json.JSONDecodeError:
                break
            data.setdefault("probe_seconds", round(time.monotonic() - started, 2))
            return data
    reason = last_error_line(done.stderr) or f"exit code {done.returncode}"
    return {"error": Msg("engine.probe_failed", python=str(python), reason=reason)}


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
        "probe_script": hashlib.sha256(PROBE_SCRIPT.read_bytes()).hexdigest()[:16],  # the probe only
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
