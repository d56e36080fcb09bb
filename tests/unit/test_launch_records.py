"""Launch records (issue 13, item 5): bounded, owner-only, redacted, read back after a restart of the app, and
driven by the supervisor's real sequence of status changes. The log lines are a recorded vLLM log with the
key that the launch had put back where vLLM prints it (the recording itself was masked)."""

from __future__ import annotations

import json
import signal
import stat
from dataclasses import replace
from pathlib import Path

from chainlit_app.diagnostics import FindingsStore, classify_file
from chainlit_app.engine.launch_records import LaunchRecords, exit_cause, exit_label
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.handles.launch_recorder import LaunchFacts, LaunchRecorder
from chainlit_app.monitor import exit_finding

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"
RECORDED = LOGS / "healthy" / "recorded_cpu_smollm2_serve_and_stop.log"
KEY = "k3y-Of-This-Launch-9f8e7d6c5b4a"


def _log_with_key(path: Path, extra: int = 0) -> Path:
    """The recorded log as the launch wrote it: vLLM echoes its args (key included), plus `extra` lines."""
    text = RECORDED.read_text(encoding="utf-8").replace("'api_key': '***'", f"'api_key': '{KEY}'")
    lines = text.splitlines()
    lines += [f"(APIServer pid=1) INFO line {i} of the tail" for i in range(extra)]
    lines.append(f"curl -H 'Authorization: Bearer {KEY}' http://127.0.0.1:8765/v1/models")
    lines.append(f"a bare mention of the key {KEY} in a traceback")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _recorder(tmp_path: Path, keep: int = 20) -> tuple[LaunchRecorder, LaunchRecords, FindingsStore, Path]:
    records = LaunchRecords(tmp_path / "data" / "launches", keep)
    store = FindingsStore()
    log_file = tmp_path / "vllm.log"
    facts = LaunchFacts(command=["python", "-m", "vllm.entrypoints.openai.api_server", "--api-key", KEY, "--port", "1"],
                        settings={"engine": {"extra_args": f"--api-key {KEY}"}},
                        overrides={"max_model_len": 1024}, log_file=log_file)
    recorder = LaunchRecorder(records, lambda: facts, store.snapshot, lambda: (KEY,))
    return recorder, records, store, log_file


def _launch(recorder: LaunchRecorder, status: EngineStatus, started: float) -> EngineStatus:
    """The supervisor's _spawn: the launch counter moves, then the pid is known."""
    status = replace(status, state=EngineState.STARTING, launches=status.launches + 1, started_at=started, pid=None)
    recorder.on_status(status)
    status = replace(status, pid=4242)
    recorder.on_status(status)
    return status


def test_a_killed_launch_keeps_its_signal_last_lines_and_findings_without_the_key(tmp_path: Path) -> None:
    recorder, records, store, log_file = _recorder(tmp_path)
    status = _launch(recorder, EngineStatus(), 1_700_000_000.0)
    _log_with_key(log_file, extra=300)
    status = replace(status, state=EngineState.READY, ready_at=1_700_000_060.0)
    recorder.on_status(status)
    store.add(exit_finding(-signal.SIGKILL))  # what the monitor adds first (its listener runs before)
    recorder.on_status(replace(status, state=EngineState.CRASHED, last_exit_code=-signal.SIGKILL, pid=None))

    [summary] = records.summaries()
    assert summary["exit"] == "SIGKILL" and summary["exit_code"] == -9 and summary["ready_at"] == 1_700_000_060.0
    assert summary["cause"] == "killed while serving by SIGKILL (from outside: an admin, the OOM killer)"
    record = records.get(summary["id"])
    assert record is not None and record["pid"] == 4242
    assert len(record["last_lines"]) == 200
    assert record["last_lines"][-3] == "(APIServer pid=1) INFO line 299 of the tail"
    assert record["command"][4] == "***" and record["overrides"] == {"max_model_len": 1024}
    assert [f["kind"] for f in record["findings"]] == ["connection"]
    path = tmp_path / "data" / "launches" / f"{summary['id']}.json"
    text = path.read_text(encoding="utf-8")
    assert KEY not in text and "Authorization: ***" in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not list(path.parent.glob("*.part"))


def test_the_echoed_args_of_a_recorded_start_are_masked_in_the_record(tmp_path: Path) -> None:
    """vLLM prints its non-default args at start: with a short log, that line is among the last 200."""
    recorder, records, _, log_file = _recorder(tmp_path)
    status = _launch(recorder, EngineStatus(), 1_700_000_000.0)
    _log_with_key(log_file)
    recorder.on_status(replace(status, state=EngineState.CRASHED, last_exit_code=1))
    record = records.get(records.summaries()[0]["id"])
    assert record is not None
    args = [line for line in record["last_lines"] if "non-default args" in line]
    assert args and all("'api_key': '***'" in line for line in args)
    assert KEY not in json.dumps(record)
    assert record["exit"] == "code 1" and record["cause"] == "exited before it was ready with code 1"


def test_records_are_bounded_and_read_back_by_the_next_app(tmp_path: Path) -> None:
    recorder, records, _, log_file = _recorder(tmp_path, keep=3)
    log_file.write_text("INFO one line\n")
    status = EngineStatus()
    for i in range(5):
        status = _launch(recorder, status, 1_700_000_000.0 + i)
        recorder.on_status(replace(status, state=EngineState.CRASHED, last_exit_code=-signal.SIGSEGV))
    folder = tmp_path / "data" / "launches"
    assert len(list(folder.glob("*.json"))) == 3
    assert [s["launch"] for s in records.summaries()] == [5, 4, 3]
    again = LaunchRecords(folder, keep=3)  # a restart of the app reads what the last one kept
    assert again.summaries() == records.summaries()
    assert "fatal signal SIGSEGV" in again.summaries()[0]["cause"]


def test_a_crash_loop_marks_the_last_record_given_up(tmp_path: Path) -> None:
    recorder, records, _, log_file = _recorder(tmp_path)
    log_file.write_text("ValueError: boom\n")
    status = EngineStatus()
    for _ in range(2):
        status = _launch(recorder, status, 1_700_000_000.0 + status.launches)
        status = replace(status, state=EngineState.CRASHED, last_exit_code=1)
        recorder.on_status(status)
        status = replace(status, state=EngineState.RESTARTING, restarts=status.restarts + 1)
        recorder.on_status(status)
    recorder.on_status(replace(status, state=EngineState.FAILED, error="vLLM exited with code 1 (gave up)"))
    newest, older = records.summaries()
    assert newest["gave_up"] and not older["gave_up"]
    assert newest["cause"].endswith("the supervisor gave up") and newest["exit"] == "code 1"


def test_a_start_that_timed_out_is_ended_by_the_next_launch_and_a_stop_says_stopped(tmp_path: Path) -> None:
    recorder, records, _, log_file = _recorder(tmp_path)
    log_file.write_text("INFO loading\n")
    status = _launch(recorder, EngineStatus(), 1_700_000_000.0)
    status = _launch(recorder, replace(status, state=EngineState.RESTARTING), 1_700_000_900.0)
    recorder.on_status(replace(status, state=EngineState.STOPPING))
    recorder.on_status(replace(status, state=EngineState.STOPPING, last_exit_code=0))
    recorder.on_status(replace(status, state=EngineState.STOPPED, last_exit_code=0, pid=None))
    second, first = records.summaries()
    assert first["exit"] == "unknown" and "not ready in time" in first["cause"]
    assert second["exit"] == "stopped" and second["cause"] == "stopped by the app (code 0)"


def test_ids_from_a_request_never_reach_the_file_system(tmp_path: Path) -> None:
    records = LaunchRecords(tmp_path / "launches")
    (tmp_path / "secret.json").write_text("{}")
    assert records.get("../secret") is None and records.get("") is None


def test_an_unreadable_record_is_skipped_not_fatal(tmp_path: Path) -> None:
    folder = tmp_path / "launches"
    folder.mkdir()
    (folder / "20261201-000000-000.json").write_text("{not json")
    assert LaunchRecords(folder).summaries() == []


def test_exit_labels_and_causes() -> None:
    assert exit_label(-signal.SIGKILL) == "SIGKILL" and exit_label(3) == "code 3" and exit_label(None) == "unknown"
    assert exit_cause(-signal.SIGTERM, ready=True, stopped_by_app=False) == "ended while serving by signal SIGTERM"
    assert exit_cause(None, ready=False, stopped_by_app=False, error="not ready after 900 s") == \
        "ended before it was ready: not ready after 900 s"


def test_the_root_cause_of_the_last_lines_is_listed_once(tmp_path: Path) -> None:
    """The live tail may already have named it (a store entry with the same kind and rule): not twice."""
    recorder, records, store, log_file = _recorder(tmp_path)
    recorded = LOGS / "port_in_use" / "gh5899_second_server_same_port_4400.log"
    log_file.write_text(recorded.read_text(encoding="utf-8"))
    root = classify_file(str(recorded)).root
    assert root is not None and root.kind == "port_in_use"
    status = _launch(recorder, EngineStatus(), 1_700_000_000.0)
    recorder.on_status(replace(status, state=EngineState.CRASHED, last_exit_code=1))
    first = records.get(records.summaries()[0]["id"])
    assert first is not None and [(f["kind"], f["rule"]) for f in first["findings"]] == [("port_in_use", root.rule)]
    store.add(root)
    status = _launch(recorder, status, 1_700_000_100.0)
    recorder.on_status(replace(status, state=EngineState.CRASHED, last_exit_code=1))
    second = records.get(records.summaries()[0]["id"])
    assert second is not None and [(f["kind"], f["rule"]) for f in second["findings"]] == [("port_in_use", root.rule)]
