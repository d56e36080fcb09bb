"""`classify --lang`: a Chinese report for Chinese readers, and --json that differs between languages in the
text fields only (kinds, lines, evidence, basis and rules are the same), on the recorded real vLLM logs."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from chainlit_app.diagnostics.__main__ import main

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"
FILES = sorted(str(p) for p in LOGS.glob("*/*") if p.is_file())
TEXT_FIELDS = {"hint"}
CJK = re.compile(r"[\u4e00-\u9fff]")


def _run(*argv: str) -> str:
    out = io.StringIO()
    main(list(argv), out)
    return out.getvalue()


def test_json_is_the_same_in_both_languages_apart_from_the_texts() -> None:
    assert len(FILES) > 20
    english = [json.loads(line) for line in _run("classify", "--json", "--lang", "en", *FILES).splitlines()]
    chinese = [json.loads(line) for line in _run("classify", "--json", "--lang", "zh-CN", *FILES).splitlines()]
    assert len(english) == len(chinese) == len(FILES)
    hints = 0
    for en, zh in zip(english, chinese, strict=True):
        assert en["kind"] == zh["kind"] and en["file"] == zh["file"]
        for f_en, f_zh in zip(en["findings"], zh["findings"], strict=True):
            assert {k: v for k, v in f_en.items() if k not in TEXT_FIELDS} == {
                k: v for k, v in f_zh.items() if k not in TEXT_FIELDS}
            if f_en["hint"]:
                hints += 1
                assert CJK.search(f_zh["hint"]) and not CJK.search(f_en["hint"]), f_en["rule"]
    assert hints > 20


def test_readable_report_in_chinese() -> None:
    path = next(f for f in FILES if "/port_in_use/" in f)
    report = _run("classify", "--lang", "zh-CN", path)
    assert "根本原因：port_in_use - 端口被占用" in report
    assert "解决方法：" in report and "提示：" in report
    english = _run("classify", "--lang", "en", path)
    assert "Root cause: port_in_use - Port already in use" in english and not CJK.search(english.split("\n", 2)[1])


def test_default_language_comes_from_the_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    path = next(f for f in FILES if "/auth/" in f)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    assert "根本原因" in _run("classify", path)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert "Root cause" in _run("classify", path)


def test_an_unknown_language_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        _run("classify", "--lang", "fr", FILES[0])
    assert stop.value.code == 2 and "unknown language 'fr'" in capsys.readouterr().err
