"""Evidence kept across restarts: one record per launch of the spawned server, in the data folder.

A restart rotates the log and clears the findings that it resolved; what killed the last launch (its exit code
or signal, its last lines, the command and settings it ran with) must survive that, and a restart of the app.
Each record is one JSON file `DATA_DIR/launches/<id>.json` (0600, folder 0700), written at the launch and
again when it ends, redacted before it is written (the API key never reaches the disk). At most `keep` records;
the oldest go first. The summaries are kept in memory: the panel polls them every second.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from chainlit_app.diagnostics.redact import redact_tree
from chainlit_app.private_files import FILE_MODE, private_dir

log = logging.getLogger(__name__)
RECORD_LINES = 200
_ID = re.compile(r"^\d{8}-\d{6}-\d{3}$")
_FAULT_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGILL, signal.SIGFPE})


def exit_label(code: int | None) -> str:
    """Short and stable, for filters and `data-exit`: `SIGKILL`, `code 1`, `unknown`."""
    if code is None:
        return "unknown"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"code {code}"


def exit_cause(code: int | None, *, ready: bool, stopped_by_app: bool, error: str | None = None) -> str:
    """One sentence an admin reads: what ended the launch and in which phase."""
    phase = "while serving" if ready else "before it was ready"
    if stopped_by_app:
        return f"stopped by the app ({exit_label(code)})"
    if code is None:
        return f"ended {phase}: {error}" if error else f"ended {phase} (exit status unknown)"
    if code < 0:
        name = exit_label(code)
        if -code in {s.value for s in _FAULT_SIGNALS}:
            return f"crashed {phase}: fatal signal {name} (a fault in vLLM's native code)"
        if -code == signal.SIGKILL:
            return f"killed {phase} by SIGKILL (from outside: an admin, the OOM killer)"
        return f"ended {phase} by signal {name}"
    return f"exited {phase} with code {code}"


@dataclass
class LaunchRecord:
    """What one launch ran with and how it ended. `ended` None: it runs (or the app died before it ended)."""

    id: str
    launch: int
    started: float
    command: list[str]
    settings: dict[str, Any]
    overrides: dict[str, Any]
    log_file: str
    pid: int | None = None
    ready_at: float | None = None
    ended: float | None = None
    exit_code: int | None = None
    exit: str = "running"
    cause: str = "running"
    gave_up: bool = False
    last_lines: list[str] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "launch": self.launch, "started": self.started, "ready_at": self.ready_at,
                "ended": self.ended, "exit_code": self.exit_code, "exit": self.exit, "cause": self.cause,
                "gave_up": self.gave_up, "pid": self.pid}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> LaunchRecord:
        if not isinstance(data, dict):
            raise ValueError("a launch record is a JSON object")
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class LaunchRecords:
    """The record files of one data folder, newest last in memory."""

    def __init__(self, folder: Path, keep: int = 20) -> None:
        self.folder = folder
        self.keep = max(1, keep)
        self._records: list[LaunchRecord] = []
        self._last_id = ""
        self._load()

    def _load(self) -> None:
        """Read what earlier runs of the app left; an unreadable file is skipped (and said), never fatal."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.json")):
            try:
                record = LaunchRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError) as exc:
                log.warning("launch record %s is unreadable (%s); skipped", path, exc)
                continue
            self._records.append(record)
        self._records = self._records[-self.keep:]

    def _new_id(self, started: float) -> str:
        """Sortable by time; unique within the process even for launches in the same millisecond."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(started)) + f"-{int(started * 1000) % 1000:03d}"
        while stamp <= self._last_id or any(r.id == stamp for r in self._records):
            head, _, ms = stamp.rpartition("-")
            stamp = f"{head}-{(int(ms) + 1) % 1000:03d}"
        self._last_id = stamp
        return stamp

    def begin(self, launch: int, started: float, command: list[str], settings: dict[str, Any],
              overrides: dict[str, Any], log_file: str, secrets: tuple[str, ...] = ()) -> LaunchRecord:
        record = LaunchRecord(id=self._new_id(started), launch=launch, started=started,
                              command=redact_tree(command, secrets), settings=redact_tree(settings, secrets),
                              overrides=redact_tree(overrides, secrets), log_file=log_file)
        self._records.append(record)
        self.save(record, secrets)
        self._prune()
        return record

    def save(self, record: LaunchRecord, secrets: tuple[str, ...] = ()) -> None:
        """The whole record, redacted, written to a new 0600 file renamed into place (never half a file)."""
        private_dir(self.folder)
        data = redact_tree(record.to_json(), secrets)
        path = self.folder / f"{record.id}.json"
        partial = path.with_suffix(".json.part")
        try:
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1)
            os.replace(partial, path)
        except OSError as exc:  # a full disk must not stop supervision: the record stays in memory
            log.warning("cannot write launch record %s: %s", path, exc)

    def _prune(self) -> None:
        while len(self._records) > self.keep:
            old = self._records.pop(0)
            with contextlib.suppress(FileNotFoundError):
                (self.folder / f"{old.id}.json").unlink()

    @property
    def current(self) -> LaunchRecord | None:
        return self._records[-1] if self._records else None

    def summaries(self) -> list[dict[str, Any]]:
        """Newest first."""
        return [r.summary() for r in reversed(self._records)]

    def get(self, record_id: str) -> dict[str, Any] | None:
        """One whole record by id (ids are checked: no path from a request reaches the file system)."""
        if not _ID.match(record_id):
            return None
        return next((r.to_json() for r in self._records if r.id == record_id), None)
