"""Every finding on the corpus points at the line that shows it: its text stands on the line its number names.

The panel shows `line N: text`, and an admin opens the log at N. A finding whose text came from one line and
whose number from another (a traceback cut before its exception line was shown at its header with its last
code line's text) sends the reader to the wrong place. A verdict on a whole answer (a pretty-printed body, a
stream) is a sentence about it, not a line; its number must still be the answer's own line. Masked secrets
(`***`) stand for whatever they hid.
"""

from __future__ import annotations

import re
from pathlib import Path

from chainlit_app.diagnostics import classify_file
from chainlit_app.diagnostics.lineformat import strip_ansi, unwrap_docker_json
from chainlit_app.diagnostics.redact import MASK

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
_ANSWER_KEY = re.compile(r"[\"'](?:content|text|response|reasoning_content|delta|choices)[\"']\s*:|data:|\}")


def _shown(text: str) -> re.Pattern[str]:
    """The finding's text as a pattern: its first line's first 60 characters (a body's text is the whole body), a
    mask matching what it hid; quotes as the line shows them (a JSON log's line is unescaped)."""
    first = text.strip().split("\n")[0].replace('\\"', '"')[:60]
    return re.compile(".*?".join(re.escape(part) for part in first.split(MASK)))


def _line(lines: list[str], number: int) -> str:
    return strip_ansi(unwrap_docker_json(lines[number - 1])).replace('\\"', '"') if 0 < number <= len(lines) else ""


def test_every_finding_text_stands_on_its_line() -> None:
    wrong, verdicts, checked = [], 0, 0
    for path in sorted(LOGS.glob("*/*/*.log")):
        lines = path.read_bytes().decode(errors="replace").split("\n")  # numbered as grep -n numbers them
        for finding in classify_file(path).findings:
            line = _line(lines, finding.line)
            if _shown(finding.text).search(line):
                checked += 1
            elif finding.rule.startswith(("body_", "stream_")) and _ANSWER_KEY.search(line):
                verdicts += 1  # a sentence about the whole answer, at a line of the answer
            else:
                wrong.append(f"{path.relative_to(LOGS)}:{finding.line} {finding.rule}: {finding.text[:80]!r} "
                             f"is not on {line[:80]!r}")
    assert checked > 2_000 and verdicts > 10
    assert not wrong, "\n".join(wrong)


def test_a_cut_traceback_is_shown_at_its_innermost_line() -> None:
    """vLLM #7232 (TGIS): the excerpt ends inside the traceback; the finding names its last code line, there."""
    path = LOGS / "dev/engine_error/round42a_vllm7232_spec_decode_logprobs_nonetype_compare_grpc.log"
    lines = path.read_text().split("\n")
    root = classify_file(path).root
    assert root is not None and root.line > 1
    assert root.text.strip() and root.text.strip() in lines[root.line - 1]
    assert not lines[root.line - 1].strip().startswith("Traceback")
