"""A UTF-8 file read under a Chinese Windows-style GBK locale fails in CPython's words, and the diagnosis names
that reading, not garbled model output, with the fix that works (PYTHONUTF8=1). Real parts: a zh_CN.GBK locale
built here with localedef, a real Python reading a real UTF-8 file, the `classify` CLI on what it printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.real_locales import built_locale

ROOT = Path(__file__).resolve().parents[2]
READ = "import sys; print(len(open(sys.argv[1]).read()))"  # no encoding=: the locale's, as most scripts do


def test_a_utf8_file_read_with_the_gbk_locale_is_named_and_its_fix_works(tmp_path: Path) -> None:
    env = built_locale(tmp_path, "zh_CN.GBK")
    template = tmp_path / "chat_template.jinja"
    template.write_text("{{ '你好，' + messages[0]['content'] }}\n", encoding="utf-8")
    failed = subprocess.run([sys.executable, "-c", READ, str(template)], env=env, capture_output=True, text=True,
                            encoding="utf-8", errors="replace", timeout=60)
    assert failed.returncode != 0 and "'gbk' codec can't decode" in failed.stderr, failed.stderr
    log = tmp_path / "client.log"
    log.write_text(failed.stderr, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "chainlit_app.diagnostics", "classify", "--json", str(log)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    report = json.loads(done.stdout.splitlines()[0])
    assert report["kind"] == "decode_error", report
    root = report["findings"][0]
    assert root["rule"] == "locale_codec_decode" and "PYTHONUTF8=1" in root["hint"], root
    # the hint's fix, in the same locale: the file reads
    fixed = subprocess.run([sys.executable, "-c", READ, str(template)], env={**env, "PYTHONUTF8": "1"},
                           capture_output=True, text=True, timeout=60)
    assert fixed.returncode == 0, fixed.stderr
