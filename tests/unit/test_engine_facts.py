"""The engine facts: the probe run in the engine's Python, and the reader's cache in front of it.

tests/integration/test_doctor.py runs the real probe under the engine environment; these tests use a
fake engine layout and a fake probe function.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from chainlit_app.engine import facts_probe
from chainlit_app.engine.facts import cache_key, load_engine_facts
from chainlit_app.engine.facts_probe import probe_companion


def test_companion_probe_imports_in_a_child_process(tmp_path: Path) -> None:
    """The real probe code path: a package whose import raises is reported with its exception line."""
    package = tmp_path / "torchvision"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('operator torchvision::nms does not exist')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = probe_companion("torchvision", env=env, timeout=60)
    assert result["installed"] and not result["ok"]
    assert result["error"] == "RuntimeError: operator torchvision::nms does not exist"
    (package / "__init__.py").write_text("")
    assert probe_companion("torchvision", env=env, timeout=60)["ok"]
    assert probe_companion("surely_not_installed_pkg_xyz", timeout=60) == {
        "installed": False, "version": None, "ok": True, "error": None}


def _fake_engine(tmp_path: Path) -> Path:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "vllm").mkdir(parents=True)
    (site / "torch").mkdir()
    (site / "vllm" / "__init__.py").write_text("__version__ = '0.32.0'\n")
    (site / "torch" / "version.py").write_text("__version__ = '2.13.0+cpu'\n")
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir()
    python.write_text("")
    return python


def test_engine_facts_cache_is_reused_until_the_engine_changes(tmp_path: Path) -> None:
    python = _fake_engine(tmp_path)
    cache = tmp_path / "cache" / "engine_facts.json"
    calls: list[Path] = []

    def probe(py: Path, timeout: float) -> dict[str, Any]:
        calls.append(py)
        return {"python": str(py), "vllm_version": "0.32.0", "archs": ["LlamaForCausalLM"], "probe_seconds": 12.0}

    first = load_engine_facts(python, cache, probe=probe)
    second = load_engine_facts(python, cache, probe=probe)
    assert len(calls) == 1 and not first.from_cache and second.from_cache
    assert second.archs == frozenset({"LlamaForCausalLM"}) and second.probe_seconds == 12.0
    init = python.parent.parent / "lib" / "python3.11" / "site-packages" / "vllm" / "__init__.py"
    init.write_text("__version__ = '0.33.0'  # upgraded\n")
    assert not load_engine_facts(python, cache, probe=probe).from_cache
    assert len(calls) == 2


def test_engine_facts_probe_failure_is_not_cached(tmp_path: Path) -> None:
    python = _fake_engine(tmp_path)
    cache = tmp_path / "cache" / "engine_facts.json"
    calls: list[int] = []

    def probe(py: Path, timeout: float) -> dict[str, Any]:
        calls.append(1)
        return {"error": "probing the engine environment timed out after 300 s"}

    assert load_engine_facts(python, cache, probe=probe).error
    assert load_engine_facts(python, cache, probe=probe).error
    assert len(calls) == 2 and not cache.exists()


def test_cache_key_hashes_the_probe_source_only(tmp_path: Path) -> None:
    """Editing the reader must not cost every install a fresh vLLM import; editing the probe must."""
    key = cache_key(_fake_engine(tmp_path))
    assert key is not None
    assert key["probe_script"] == hashlib.sha256(facts_probe.HERE.read_bytes()).hexdigest()[:16]
    assert facts_probe.HERE.name == "facts_probe.py"
