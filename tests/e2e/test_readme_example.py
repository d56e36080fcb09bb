"""The README's page-object example ("finds a finding by kind without matching text", issue 17) is run as
written against the running app: a request for a model that does not exist, sent to the app's own vLLM,
makes vLLM log the error, and the example, given that kind, must find its card by data-kind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from chainlit_app.settings import PROJECT_ROOT
from tests.e2e.conftest import ADMIN_PASSWORD, AppServer
from tests.e2e.test_diagnostics_panel import _engine, _engine_key

pytestmark = pytest.mark.e2e
MARKER = "<!-- example: finding-by-kind -->"
TEXT_MATCHING = re.compile(r"get_by_text|has_text|text=|:has-text|:text\(|get_by_role\(.*name=|inner_text\(\) ==")


def readme_example() -> str:
    """The python block that follows the marker, exactly as the README shows it."""
    after = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8").split(MARKER, 1)[1]
    match = re.match(r"\s*```python\n(.*?)\n```", after, re.S)
    assert match, f"no python block after {MARKER} in the README"
    return match.group(1) + "\n"


def test_the_example_matches_no_text() -> None:
    code = readme_example()
    assert "DiagnosticsPanel" in code and "wait_finding(kind" in code
    assert not TEXT_MATCHING.search(code), TEXT_MATCHING.search(code)


def test_the_readme_example_finds_a_finding_by_kind(app_server: AppServer, tmp_path: Path) -> None:
    engine = _engine(app_server)
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{engine['port']}/v1",
                           api_key=_engine_key(int(engine["pid"])))
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="no-such-model-for-the-readme",
                                       messages=[{"role": "user", "content": "hi"}])

    script = tmp_path / "readme_example.py"
    script.write_text(readme_example(), encoding="utf-8")
    env = {**os.environ, "CHAT_URL": app_server.url, "CHAT_SMOKE_PASSWORD": ADMIN_PASSWORD,
           "PYTHONPATH": str(PROJECT_ROOT)}
    result = subprocess.run([sys.executable, str(script), "model_not_found"], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=300, check=False)
    print(f"\nthe README example printed:\n{result.stdout}{result.stderr[-2000:]}")
    assert result.returncode == 0, result.stderr[-2000:]
    first, second = result.stdout.splitlines()[:2]
    kind, severity, basis, source = first.split()
    assert kind == "model_not_found" and severity in ("error", "critical", "warning") and source == "log", first
    assert basis == "rule", first
    assert second.startswith("remedies: ["), second
