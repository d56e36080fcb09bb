"""`doctor --fix` and `--apply` as a user runs them, before any vLLM start: a model folder without a chat
template and a CHAT_PORT another process listens on. The doctor names both, prints the remedies, writes them as
overrides with --apply, and the next doctor run (checking the launch the app would make) passes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from chainlit_app.remedies.templates import CHATML
from chainlit_app.settings import PROJECT_ROOT
from tests.conftest import need_engine

pytestmark = pytest.mark.integration
APP_PYTHON = PROJECT_ROOT / ".venv" / "bin" / "python"


def doctor(*args: str, data_dir: Path, port: int) -> subprocess.CompletedProcess[str]:
    python = APP_PYTHON if APP_PYTHON.exists() else Path(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHAT_") or k == "CHAT_MODELS_DIR"}
    env.update({"CHAT_MODE": "spawn", "CHAT_PORT": str(port), "CHAT_DATA_DIR": str(data_dir),
                "PYTHONPATH": str(PROJECT_ROOT)})
    return subprocess.run([str(python), "-m", "chainlit_app.diagnostics", "doctor", *args], capture_output=True,
                          text=True, cwd=PROJECT_ROOT, env=env, timeout=600, check=False)


def test_doctor_fix_then_apply_then_passes(demo_model: Path, tmp_path: Path) -> None:
    need_engine()
    folder = tmp_path / "no-template"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "generation_config.json"):
        shutil.copy(demo_model / name, folder / name)
    (folder / "model.safetensors").symlink_to(demo_model / "model.safetensors")
    tokenizer_config = json.loads((demo_model / "tokenizer_config.json").read_text())
    tokenizer_config.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    data = tmp_path / "data"

    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]

        shown = doctor("--fix", "--json", "--model", str(folder), data_dir=data, port=port)
        assert shown.returncode == 1, shown.stdout + shown.stderr
        payload = json.loads(shown.stdout)
        remedies = {r["check"]: [p["id"] for p in r["remedies"]] for r in payload["remedies"]}
        assert remedies["chat_template"] == ["shipped_chat_template"] and remedies["port"] == ["free_port"], remedies
        assert not (data / "overrides.json").exists(), "--fix alone writes nothing"

        applied = doctor("--apply", "--model", str(folder), data_dir=data, port=port)
        assert "applied shipped_chat_template" in applied.stdout and "applied free_port" in applied.stdout, (
            applied.stdout + applied.stderr)
        stored = json.loads((data / "overrides.json").read_text())["overrides"]
        assert stat.S_IMODE((data / "overrides.json").stat().st_mode) == 0o600
        by_field = {e["field"]: e for e in stored}
        assert by_field["chat_template"]["value"] == str(CHATML.path)
        assert by_field["port"]["previous"] == port and by_field["port"]["value"] != port
        assert by_field["port"]["finding_kind"] == "port_in_use" and str(port) in by_field["port"]["finding_text"]

        again = doctor("--json", "--model", str(folder), data_dir=data, port=port)
    assert again.returncode == 0, again.stdout + again.stderr
    checks = {c["name"]: c for c in json.loads(again.stdout)["checks"]}
    assert checks["chat_template"]["status"] == "pass" and "--chat-template" in checks["chat_template"]["message"]
    assert checks["port"]["status"] == "pass" and str(by_field["port"]["value"]) in checks["port"]["message"]
