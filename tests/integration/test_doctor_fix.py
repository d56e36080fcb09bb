"""`doctor --fix` and `--apply` as a user runs them, and the spawned engine's apply and undo through its
preflight, before any vLLM start: a model folder without a chat template and a CHAT_PORT another process listens
on. The doctor names both, prints the remedies, writes them as overrides with --apply, and the next doctor run
(checking the launch the app would make) passes."""

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

from chainlit_app.diagnostics import FindingsStore
from chainlit_app.engine.status import EngineState
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.remedies import finding_from_entry
from chainlit_app.remedies.templates import CHATML
from chainlit_app.settings import PROJECT_ROOT
from tests.conftest import need_engine, settings_for_tests

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


async def test_a_remedy_that_does_not_help_stays_open_and_undo_restores(demo_model: Path, tmp_path: Path) -> None:
    """Through the spawned engine, with the doctor as its preflight and no vLLM start: the folder lacks a chat
    template and CHAT_PORT is taken. Fixing only the port does not get the engine up: the result says so with
    the new evidence (the preflight's refusal for the template). Undo removes the override and relaunches."""
    need_engine()
    folder = tmp_path / "no-template"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "generation_config.json"):
        shutil.copy(demo_model / name, folder / name)
    (folder / "model.safetensors").symlink_to(demo_model / "model.safetensors")
    tokenizer_config = json.loads((demo_model / "tokenizer_config.json").read_text())
    tokenizer_config.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))

    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        settings = settings_for_tests(model=str(folder), data_dir=tmp_path / "data", log_dir=tmp_path / "logs",
                                      port=port)
        engine = SpawnedEngine(settings, FindingsStore())
        await engine.start()
        assert engine.status.state == EngineState.FAILED and engine.supervisor is None  # refused in seconds
        entries = {e["kind"]: e for e in engine.store.snapshot()}
        assert {"port_in_use", "chat_template"} <= set(entries), entries
        (proposal,) = engine.proposals(finding_from_entry(entries["port_in_use"]))
        assert proposal.remedy.id == "free_port"

        result = await engine.apply_remedy(proposal)
        assert not result.fixed and engine.supervisor is None
        assert result.overrides == {"port": proposal.overrides["port"]}
        assert any("chat_template" in line and "port:" not in line for line in result.evidence), result.evidence

        undone = await engine.undo_remedy("free_port")
        assert not undone.fixed and undone.action == "undo" and undone.overrides == {}
        assert any("port:" in line for line in undone.evidence), undone.evidence  # the taken port is back
        assert engine.overrides.entries() == []
        with pytest.raises(LookupError):
            await engine.undo_remedy("free_port")
