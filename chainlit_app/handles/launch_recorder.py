"""Turns the supervisor's status changes into launch records (engine/launch_records.py).

A listener, called synchronously by the supervisor: when a launch ends (crashed, stopped, given up) its log
file is still that launch's (the next launch rotates it), so the last lines are read here, at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chainlit_app.diagnostics import classify_lines
from chainlit_app.diagnostics.redact import redact
from chainlit_app.engine.launch_records import RECORD_LINES, LaunchRecord, LaunchRecords, cause_parts, exit_label
from chainlit_app.engine.logfiles import read_tail
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.i18n import Msg

log = logging.getLogger(__name__)
_ENDED = (EngineState.CRASHED, EngineState.STOPPED, EngineState.FAILED)


@dataclass(frozen=True)
class LaunchFacts:
    """What the handle knows of the launch in progress (asked when it begins)."""

    command: list[str]
    settings: dict[str, Any]
    overrides: dict[str, Any]
    log_file: Path


class LaunchRecorder:
    """One record per launch: begun when the launch counter moves, ended on crash, stop or give-up."""

    def __init__(self, records: LaunchRecords, facts: Callable[[], LaunchFacts],
                 findings: Callable[[], list[dict[str, Any]]], secrets: Callable[[], tuple[str, ...]]) -> None:
        self.records = records
        self._facts = facts
        self._findings = findings
        self._secrets = secrets
        self._launch = 0
        self._open: LaunchRecord | None = None
        self._log_file: Path | None = None
        self._stopping = False

    def on_status(self, status: EngineStatus) -> None:
        try:
            self._on_status(status)
        except Exception:  # evidence is a bonus: never let it break supervision
            log.exception("launch record failed")

    def _on_status(self, status: EngineStatus) -> None:
        if status.launches > self._launch:
            self._launch = status.launches
            if self._open is not None:  # not ready in time, stopped by the retry: no exit status seen
                self._end(status, None, error="replaced by the next launch (not ready in time?)")
            facts = self._facts()
            self._log_file = facts.log_file
            self._stopping = False
            self._open = self.records.begin(self._launch, status.started_at or 0.0, facts.command, facts.settings,
                                            facts.overrides, str(facts.log_file), self._secrets())
        record = self._open
        if record is not None:
            if status.pid and record.pid is None:
                record.pid = status.pid
            if status.state == EngineState.READY and record.ready_at is None:
                record.ready_at = status.ready_at
                self.records.save(record, self._secrets())
            if status.state == EngineState.STOPPING:
                self._stopping = True
            if status.state in _ENDED:
                code = status.last_exit_code if status.state != EngineState.FAILED else None
                self._end(status, code, error=status.error)
        if status.state == EngineState.FAILED and self.records.current is not None:
            last = self.records.current  # the crash loop ends with this record, not only a state
            last.gave_up = True
            if last.cause_parts and not last.cause_parts.get("gave_up"):
                last.set_cause({**last.cause_parts, "gave_up": True})
            self.records.save(last, self._secrets())

    def _end(self, status: EngineStatus, code: int | None, error: str | None) -> None:
        record = self._open
        assert record is not None
        self._open = None
        secrets = self._secrets()
        lines = read_tail(self._log_file, RECORD_LINES, max_bytes=512 * 1024) if self._log_file else []
        record.last_lines = [redact(line, secrets) for line in lines]
        record.ended = time.time()
        record.exit_code = code
        record.exit = "stopped" if self._stopping else exit_label(code)
        record.set_cause(cause_parts(code, ready=record.ready_at is not None, stopped_by_app=self._stopping,
                                     error=error))
        record.findings = self._findings_now(lines, secrets)
        self.records.save(record, secrets)

    def _findings_now(self, lines: list[str], secrets: tuple[str, ...]) -> list[dict[str, Any]]:
        """The open findings of the store, and the root cause of the last lines by the CLI's classifier (the
        live tail may not have read the last line yet when the process dies)."""
        found = [{"kind": f["kind"], "title": f["title"], "source": f["source"], "rule": f["rule"],
                  "count": f["count"], "text": f["evidence"][-1]["text"] if f["evidence"] else ""}
                 for f in self._findings() if not f["resolved"]]
        root = classify_lines(lines, secrets, excerpt=False).root  # the process exited: no stall
        if root is not None and not any((f["kind"], f["rule"]) == (root.kind, root.rule) for f in found):
            found.insert(0, {"kind": root.kind, "title": Msg("launch.root_cause_title"), "source": "log",
                             "rule": root.rule, "count": 1, "text": root.text})
        return found
