"""A crash reported by a shell in its user's language is a crash (issue 11: never `healthy` while something
failed). A real bash, in a real Chinese (and Japanese) locale built here with localedef, runs jobs that real
signals kill; `classify`, as a user runs it on the saved output, must name each, with the line as written.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.shell_words import TABLE, in_english
from tests.real_locales import built_locale

ROOT = Path(__file__).resolve().parents[2]
LOCALES = Path("/usr/share/locale")
# signal -> the reading of the English words after a server's start (a fault while serving; SIGKILL: the OOM killer)
SIGNALS = {"SEGV": "engine_error", "ILL": "engine_error", "BUS": "engine_error", "KILL": "out_of_memory"}


def _generator() -> ModuleType:  # the script is not a package module
    spec = importlib.util.spec_from_file_location("gen_shell_words", ROOT / "scripts" / "gen_shell_words.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not (LOCALES / "zh_CN" / "LC_MESSAGES" / "bash.mo").exists(),
                    reason="bash's catalogues are not installed here (Debian's bash ships them)")
def test_the_table_is_the_catalogues_own_words() -> None:
    rows = [line.split("\t") for line in TABLE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    assert [tuple(row) for row in rows] == _generator().collect()


@pytest.fixture(scope="module")
def shells(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("locales")
    return {name: built_locale(tmp, name) for name in ("zh_CN.UTF-8", "zh_TW.UTF-8", "ja_JP.UTF-8")}


def _killed_by(signal: str, env: dict[str, str]) -> str:
    """What a real bash prints when a job of its script dies of `signal`."""
    script = f'sh -c "kill -{signal} \\$\\$"; true'
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    notice = done.stderr.strip()
    assert notice, f"bash printed nothing for SIG{signal}"
    return notice


@pytest.mark.parametrize("signal", sorted(SIGNALS))
@pytest.mark.parametrize("language", ["zh_CN.UTF-8", "zh_TW.UTF-8", "ja_JP.UTF-8"])
def test_a_job_killed_by_a_signal_is_named_in_the_shells_language(
        shells: dict[str, dict[str, str]], language: str, signal: str, tmp_path: Path) -> None:
    notice = _killed_by(signal, shells[language])
    assert notice.isascii() is False, f"bash did not speak {language}: {notice!r}"
    log = tmp_path / "llm.log"
    log.write_text("INFO 01-02 10:00:00 api_server.py:1] vLLM API server version 0.11.0\n"
                   "INFO:     Application startup complete.\n" + notice + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "chainlit_app.diagnostics", "classify", "--json", str(log)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    report = json.loads(done.stdout.splitlines()[0])
    assert report["kind"] == SIGNALS[signal], (notice, report)
    assert report["findings"][0]["text"] == notice, report["findings"][0]  # as written, not its English


@pytest.mark.parametrize("line", [
    "段错误 (核心已转储)", "段错误（核心已转储）", "已杀死", "vllm-1  | 已杀死", "程式記憶體區段錯誤 (核心已傾印)",
    "Speicherzugriffsfehler (Speicherabzug geschrieben)", "./serve.sh: Zeile 3: 4242 Getötet  python -m vllm",
])
def test_an_interactive_shells_words_are_a_failure(line: str) -> None:
    report = classify_lines([line])
    assert report.kind != HEALTHY, line
    assert report.findings[0].text == line.strip()  # the evidence is the line as written, not its English


@pytest.mark.parametrize("line", [
    "程序出现段错误", "段错误是指程序访问了它无权访问的内存。", "12 段错误是什么意思", "他已杀死了恶龙。",
    "INFO 01-02 10:00:00 llm_engine.py:1] 12345 tokens",
])
def test_a_sentence_that_uses_the_words_is_not_a_report(line: str) -> None:
    assert in_english(line) is line
    assert classify_lines([line]).kind == HEALTHY
