"""The diagnosis's copy of vLLM's model registry (`diagnostics/known_architectures.py`) against the vLLM this
project installs: an architecture the installed vLLM serves but the copy lacks would turn a too-old vLLM
(version_mismatch) into 'no release serves this model' (startup_failure). Run in the engine environment,
because the app's has no vLLM."""

from __future__ import annotations

import json
import subprocess

from chainlit_app.diagnostics.known_architectures import KNOWN_ARCHITECTURES
from tests.conftest import ENGINE_PYTHON, need_engine

REGISTRY = ("import json, vllm; from vllm.model_executor.models.registry import _VLLM_MODELS; "
            "print(json.dumps({'version': vllm.__version__, 'architectures': sorted(_VLLM_MODELS)}))")


def test_the_copy_holds_every_architecture_the_installed_vllm_serves() -> None:
    need_engine()
    done = subprocess.run([str(ENGINE_PYTHON), "-c", REGISTRY], capture_output=True, text=True, timeout=300,
                          check=True)
    installed = json.loads(done.stdout.strip().splitlines()[-1])
    missing = sorted(set(installed["architectures"]) - KNOWN_ARCHITECTURES)
    print(f"\nvLLM {installed['version']}: {len(installed['architectures'])} architectures, "
          f"the copy {len(KNOWN_ARCHITECTURES)}, missing {len(missing)}")
    assert not missing, (f"vLLM {installed['version']} serves architectures the copy lacks; add them to "
                         f"chainlit_app/diagnostics/known_architectures.py: {missing}")
