"""`doctor --lang`: the same checks and verdicts in English and Simplified Chinese, only the texts differ.

A broken copy of the demo model (an architecture no vLLM implements, no chat template) and a taken port, so
that failing checks, their messages and their fixes are compared, against the real engine environment."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chainlit_app.settings import PROJECT_ROOT
from tests.conftest import need_engine
from tests.integration.test_doctor import APP_PYTHON

pytestmark = pytest.mark.integration

CJK = re.compile(r"[\u4e00-\u9fff]")
TEXT_FIELDS = {"message", "fix"}


@pytest.fixture()
def broken_model(demo_model: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "broken"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        if (demo_model / name).exists():
            shutil.copy(demo_model / name, folder / name)
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    tokenizer_config.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    (folder / "model.safetensors").symlink_to(demo_model / "model.safetensors")
    config = json.loads((demo_model / "config.json").read_text())
    config["architectures"] = ["FooBarForCausalLM"]
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _run(lang: str, model: Path, data_dir: Path, port: int, *extra: str) -> tuple[int, str]:
    """The doctor as a user runs it (test_doctor.doctor, with a chosen port)."""
    python = APP_PYTHON if APP_PYTHON.exists() else Path(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHAT_") or k == "CHAT_MODELS_DIR"}
    env.update({"CHAT_MODE": "spawn", "CHAT_PORT": str(port), "CHAT_DATA_DIR": str(data_dir)})
    done = subprocess.run([str(python), "-m", "chainlit_app.diagnostics", "doctor", "--lang", lang, "--model",
                           str(model), *extra], capture_output=True, text=True, cwd=PROJECT_ROOT, env=env, timeout=600,
                          check=False)
    return done.returncode, done.stdout


def test_json_differs_only_in_texts_and_the_report_is_chinese(broken_model: Path, tmp_path: Path) -> None:
    need_engine()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        data_dir = tmp_path / "data"
        code_en, out_en = _run("en", broken_model, data_dir, port, "--json")
        code_zh, out_zh = _run("zh-CN", broken_model, data_dir, port, "--json")
        code_text, report = _run("zh-CN", broken_model, data_dir, port)
    assert code_en == code_zh == code_text == 1, out_en
    english: dict[str, Any] = json.loads(out_en)
    chinese: dict[str, Any] = json.loads(out_zh)
    assert english["blocking"] is chinese["blocking"] is True and english["model"] == chinese["model"]
    assert len(english["checks"]) == len(chinese["checks"])
    failing = 0
    for en, zh in zip(english["checks"], chinese["checks"], strict=True):
        assert {k: v for k, v in en.items() if k not in TEXT_FIELDS} == {
            k: v for k, v in zh.items() if k not in TEXT_FIELDS}
        if en["status"] != "pass":
            failing += 1
            assert CJK.search(zh["message"]) and CJK.search(zh["fix"]), zh
            assert not CJK.search(en["message"] + en["fix"]), en
    names = {c["name"] for c in chinese["checks"] if c["status"] == "fail"}
    assert {"architecture", "chat_template", "port"} <= names, names
    assert failing >= 3
    assert "== 部署检查（doctor）：" in report and "已阻止启动" in report and "解决方法（阻止启动）" in report
    assert "对话模板" in report and "端口被占用" in report
