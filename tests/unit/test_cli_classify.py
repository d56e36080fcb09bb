"""`python -m chainlit_app.diagnostics classify` as a user runs it: a subprocess over real log files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"
ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chainlit_app.diagnostics", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )


def test_json_one_object_per_file_in_order() -> None:
    files = [
        CORPUS / "port_in_use" / "recorded_cpu_port_taken.log",
        CORPUS / "healthy" / "recorded_cpu_smollm2_serve_and_stop.log",
        CORPUS / "out_of_memory" / "gh20581_worker_oom_then_enginecore_failed.log",
    ]
    result = _run("classify", "--json", *map(str, files))
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["file"] for r in rows] == [str(f) for f in files]
    assert [r["kind"] for r in rows] == ["port_in_use", "healthy", "out_of_memory"]
    for row in rows:
        assert set(row) == {"file", "kind", "findings"}
        for finding in row["findings"]:
            assert {"kind", "line", "text", "hint", "basis"} <= set(finding)
            assert finding["basis"] in ("rule", "exception_type", "raised_in", "phase")
            assert isinstance(finding["line"], int) and finding["line"] >= 1
    assert rows[0]["findings"][0]["line"] == 40
    assert rows[0]["findings"][0]["text"] == "OSError: [Errno 98] Address already in use"
    assert rows[1]["findings"] == []
    oom = rows[2]["findings"]
    assert oom[0]["kind"] == "out_of_memory" and oom[0]["line"] == 1
    # the wrapper and the excerpt's cut-off traceback, listed after the cause
    assert oom[1]["kind"] == "startup_failure" and oom[1]["line"] == 2
    assert {f["kind"] for f in oom[1:]} == {"startup_failure"}


def test_text_report_names_root_cause_evidence_and_fix() -> None:
    log = CORPUS / "startup_failure" / "recorded_cpu_missing_model_dir.log"
    result = _run("classify", str(log))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # the hub validates a model id only when no folder of that name exists: the model named is not there
    assert "Root cause: model_not_found" in out
    assert "line 20: huggingface_hub.errors.HFValidationError" in out
    assert "Hint: The model path does not exist on this machine" in out
    assert "Fix:" in out and "fix CHAT_MODEL" in out
    assert out.index("Root cause") < out.index("Also seen")


def test_healthy_text_report() -> None:
    result = _run("classify", str(CORPUS / "healthy" / "constructed_facts_cpu_compile_warmup.log"))
    assert result.returncode == 0
    assert "healthy: no failure found" in result.stdout


def test_secrets_are_masked_in_output(tmp_path: Path) -> None:
    log = tmp_path / "client.log"
    log.write_text(
        "curl -H 'Authorization: Bearer abc-secret-777' http://127.0.0.1:8000/v1/chat/completions\n"
        '{"error":"Unauthorized"} key used: my-private-key\n'
    )
    result = _run("classify", "--json", "--secret", "my-private-key", str(log))
    row = json.loads(result.stdout)
    assert row["kind"] == "auth"
    assert "my-private-key" not in result.stdout and "abc-secret-777" not in result.stdout


def test_unreadable_file_is_reported_and_the_others_still_classified(tmp_path: Path) -> None:
    result = _run(
        "classify",
        "--json",
        str(tmp_path / "missing.log"),
        str(CORPUS / "auth" / "gh22407_v1_access_401.log"),
    )
    assert result.returncode == 2
    assert "missing.log" in result.stderr
    [row] = [json.loads(line) for line in result.stdout.splitlines()]
    assert row["kind"] == "auth"


def test_usage_errors() -> None:
    assert _run().returncode == 2
    assert _run("classify").returncode == 2


def test_standard_input_is_read_with_a_dash() -> None:
    """`docker logs vllm 2>&1 | python -m chainlit_app.diagnostics classify -`: the same report as the file's."""
    log = CORPUS / "port_in_use" / "recorded_cpu_port_taken.log"
    piped = subprocess.run([sys.executable, "-m", "chainlit_app.diagnostics", "classify", "--json", "-"],
                           input=log.read_bytes(), capture_output=True, timeout=120, cwd=ROOT, check=False)
    assert piped.returncode == 0, piped.stderr
    from_stdin, from_file = json.loads(piped.stdout), json.loads(_run("classify", "--json", str(log)).stdout)
    assert from_stdin["file"] == "-" and from_stdin["kind"] == "port_in_use"
    assert from_stdin["findings"] == from_file["findings"]


def test_a_powershell_redirect_piped_in_is_read_as_utf16() -> None:
    """PowerShell 5's `>` writes UTF-16 with its byte-order mark; piped in, it is read in that encoding."""
    text = ("INFO:     Started server process [4242]\r\nERROR:    [Errno 98] error while attempting to bind on "
            "address ('0.0.0.0', 8000): address already in use\r\n")
    piped = subprocess.run([sys.executable, "-m", "chainlit_app.diagnostics", "classify", "--json", "-"],
                           input=text.encode("utf-16"), capture_output=True, timeout=120, cwd=ROOT, check=False)
    report = json.loads(piped.stdout)
    assert report["kind"] == "port_in_use" and report["findings"][0]["line"] == 2


def test_a_reader_that_leaves_early_gets_no_traceback() -> None:
    """`classify *.log | head -1`: the pipe closes under the writer; it stops quietly with 128 + SIGPIPE."""
    shell = (f"{sys.executable} -m chainlit_app.diagnostics classify {CORPUS}/*/*.log | head -1 >/dev/null;"
             " echo ${PIPESTATUS[0]}")
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr
    assert done.stdout.strip() == "141"
