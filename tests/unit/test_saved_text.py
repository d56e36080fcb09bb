"""A log reads the same however it was saved, collected or copied (issue 11: the reading is the log's, not its
file's).

Windows PowerShell 5 writes `docker logs vllm > llm.log` as UTF-16 with a byte-order mark; Notepad saves UTF-8
with one; a copy from a web page turns indentation into no-break spaces; a paste pads lines with blanks; Windows
ends lines with CRLF; journalctl, `kubectl logs --prefix --timestamps` and Ray put their prefix before every line;
an issue wraps the log in a Markdown fence. Every dev log is read again in each form and must get the kind it gets
as written (healthy ones included: no false alarm). Measured with these forms on `6536a2b` (before
`pasted_text.py`), kinds changed of 641: UTF-8 mark 23 (17 to healthy), page spaces 4 (3), trailing blanks 1 (1),
CRLF 0, journalctl 15 (13), journalctl with ISO times 119 (75 to healthy, and 12 logs read healthy as written
read as failures), kubectl's prefix 14 (12), with timestamps 15 (13), timestamps alone 15 (13), a Ray actor's tag
44 (38), a Markdown fence 17 (13), a fence folded in an issue's `<details>` 18 (13); and a refused port saved
by PowerShell read as one garbled line (decode_error).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from chainlit_app.diagnostics import classify_file, classify_lines

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
DEV = LOGS / "dev"

SAVED: dict[str, Callable[[str], str]] = {
    "utf8_mark": lambda text: "\ufeff" + text,
    "page_spaces": lambda text: text.replace("    ", "\u00a0" * 4).replace("  ", "\u00a0 "),
    "trailing_blanks": lambda text: "\n".join(line + " \t " for line in text.split("\n")),
    "crlf": lambda text: text.replace("\n", "\r\n"),
    # how collectors hand a log over: every line behind their prefix (a blank line too), or inside a fence
    "journalctl": lambda text: _each(text, "Dec 03 10:00:00 gpu01 vllm[1234]: "),
    "journalctl_iso": lambda text: _each(text, "2025-12-03T10:00:00+0000 gpu01 python3[1234]: "),
    "kubectl_prefix": lambda text: _each(text, "[pod/vllm-0/vllm] "),
    "kubectl_prefix_timestamps": lambda text: _each(text, "[pod/vllm-0/vllm] 2025-12-03T10:00:00.123456789Z "),
    "kubectl_timestamps": lambda text: _each(text, "2025-12-03T10:00:00.123456789+00:00 "),
    "ray_actor": lambda text: _each(text, "(ServeReplica:default:VLLMDeployment pid=4242) "),
    "markdown_fence": lambda text: "```log\n" + text + "\n```",
    "issue_details": lambda text: "<details>\n<summary>Full log</summary>\n\n```\n" + text + "\n```\n</details>",
}


def _each(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


@cache
def _as_written(split: str = "dev") -> dict[Path, str]:
    return {path: classify_file(path).kind for path in sorted((LOGS / split).glob("*/*.log"))}


@pytest.mark.parametrize("split", ["dev", "holdout", "unnamed"])
@pytest.mark.parametrize("form", sorted(SAVED))
def test_every_log_reads_the_same_as_saved(form: str, split: str) -> None:
    """dev shaped the reading of these forms; the holdout and unnamed logs (1,122) never did: on `6536a2b` the
    forms changed 249 of their readings (166 to healthy, 14 healthy ones to a failure)."""
    changed = []
    for path, kind in _as_written(split).items():
        text = SAVED[form](path.read_bytes().decode(errors="replace"))
        got = classify_lines(text.split("\n")).kind
        if got != kind:
            changed.append(f"{path.parent.name}/{path.name}: {kind} -> {got}")
    assert len(_as_written(split)) > 10
    assert not changed, "\n".join(changed)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_log_saved_in_a_wide_encoding_is_read_in_it(encoding: str, tmp_path: Path) -> None:
    """Every dev log written as PowerShell writes it (UTF-16 with its mark; UTF-32 for good measure): same kind,
    the evidence line's number unchanged."""
    paths = list(_as_written())[:: 1 if encoding == "utf-16" else 10]
    changed = []
    for path in paths:
        text = path.read_bytes().decode(errors="replace")
        saved = tmp_path / path.name
        mark = "\ufeff" if encoding == "utf-16-be" else ""  # the -be codec writes no mark of its own
        saved.write_bytes((mark + text).encode(encoding))
        want, got = classify_file(path), classify_file(saved)
        if got.kind != want.kind or (want.root and got.root and want.root.line != got.root.line):
            changed.append(f"{path.parent.name}/{path.name}: {want.kind} -> {got.kind}")
    assert not changed, "\n".join(changed)


def test_a_refused_port_saved_by_powershell_is_a_refused_port(tmp_path: Path) -> None:
    log = tmp_path / "llm.log"
    log.write_text("INFO:     Started server process [4242]\r\nERROR:    [Errno 98] error while attempting to bind "
                   "on address ('0.0.0.0', 8000): address already in use\r\n", encoding="utf-16")
    report = classify_file(log)
    assert report.kind == "port_in_use" and report.root is not None and report.root.line == 2
