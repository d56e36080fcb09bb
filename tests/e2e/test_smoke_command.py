"""`python -m chainlit_app.smoke` as an operator runs it: against the running app it passes, against an
app whose model folder is broken it fails, naming the panel's finding."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chainlit_app.settings import PROJECT_ROOT
from chainlit_app.smoke import PASSWORD_ENV, render
from tests.e2e.conftest import ADMIN_PASSWORD, AppServer, run_app

pytestmark = pytest.mark.e2e
STEPS = ["page", "login", "connected", "first token", "answer complete", "panel"]


def smoke(url: str, *flags: str, password: str = ADMIN_PASSWORD) -> tuple[int, dict[str, Any]]:
    """The command in a process of its own, the password from the environment (never on the command line)."""
    env = {**os.environ, PASSWORD_ENV: password}
    result = subprocess.run([sys.executable, "-m", "chainlit_app.smoke", "--url", url, "--user", "admin", "--json",
                             *flags], capture_output=True, text=True, env=env, cwd=PROJECT_ROOT, timeout=900,
                            check=False)
    assert result.stdout.strip(), result.stderr
    body = json.loads(result.stdout)
    print(f"\n$ python -m chainlit_app.smoke --url {url} --user admin {' '.join(flags)}   (exit {result.returncode})")
    print(render(body))
    assert password not in result.stdout + result.stderr, "the password was printed"
    return result.returncode, body


def test_smoke_passes_against_the_running_app(app_server: AppServer, tmp_path: Path) -> None:
    code, body = smoke(app_server.url, "--admin", "--screenshots", str(tmp_path))
    assert code == 0 and body["ok"], body
    assert [s["name"] for s in body["steps"]] == STEPS
    assert all(s["ok"] and s["seconds"] >= 0 for s in body["steps"])
    assert "paris" in body["answer"].lower()
    assert not [f for f in body["open_findings"] if f["severity"] in ("error", "critical")]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{i + 1:02d}-{n.replace(' ', '-')}.png"
                                                          for i, n in enumerate(STEPS)]


def test_smoke_fails_when_the_answer_is_not_the_expected_one(app_server: AppServer, tmp_path: Path) -> None:
    code, body = smoke(app_server.url, "--expect", "Madrid", "--screenshots", str(tmp_path))
    assert code == 1 and not body["ok"]
    assert body["failure"].startswith("answer complete") and "Madrid" in body["failure"]
    assert Path(body["screenshot"]).is_file() and Path(body["console"]).is_file()


def test_smoke_fails_at_login_with_a_wrong_password(app_server: AppServer, tmp_path: Path) -> None:
    code, body = smoke(app_server.url, "--timeout", "30", "--screenshots", str(tmp_path), password="not-the-password")
    assert code == 1 and [s["name"] for s in body["steps"]] == ["page", "login"], body
    assert "refused" in body["failure"], body["failure"]


def test_smoke_fails_against_an_app_whose_model_folder_is_broken(demo_model: Path, tmp_path: Path) -> None:
    """A copy of the demo model whose config.json is cut off mid-file: the engine cannot start, the chat
    says so, and the smoke report names the panel's finding."""
    broken = tmp_path / "broken-model"
    shutil.copytree(demo_model, broken)
    config = (broken / "config.json").read_text()
    (broken / "config.json").write_text(config[: len(config) // 2])
    with run_app(tmp_path / "data", ("failed", "crashed"), CHAT_MODEL=str(broken), CHAT_PRELAUNCH="0") as app:
        code, body = smoke(app.url, "--admin", "--timeout", "120", "--screenshots", str(tmp_path / "shots"))
    assert code == 1 and not body["ok"], body
    failed = [s for s in body["steps"] if not s["ok"]]
    assert failed and failed[0]["name"] == "first token", body["steps"]
    kinds = {f["kind"] for f in body["open_findings"]}
    assert kinds, "the report names no finding"
    assert any(kind in body["failure"] or kind in render(body) for kind in kinds)
    assert Path(body["screenshot"]).is_file()
