"""Launch settings changed by remedies, kept as JSON in the data folder so they outlive a restart of the app.

One entry per launch setting (LaunchSpec field), each with the remedy that set it, the finding that caused it
(kind and evidence line), when, and the value it replaced. A second remedy on the same setting keeps the first
`previous`, so undo always returns to the configured value. Bounded by construction: at most one entry per
field of OVERRIDABLE.

Concurrency: the file is the truth and is read on every call (it is tiny). Within a process, a lock makes each
read-modify-write atomic (the app calls from its event loop and from worker threads); across processes (the
doctor's `--apply` while the app runs) each write is a whole new file renamed into place, so a reader never
sees half a file and the last writer wins. The clock is injected for tests. The file is mode 0600: evidence
lines are redacted, but they are still the server's own words.

A file that cannot be read as overrides is never silently dropped: it is renamed aside (kept, with the reason
in `problem`) and the app launches with the configured settings.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .table import Proposal

log = logging.getLogger(__name__)
FILE_NAME = "overrides.json"
VERSION = 1
# The launch settings a remedy may change, and the JSON type each must have.
OVERRIDABLE: dict[str, tuple[type, ...]] = {
    "max_model_len": (int,),
    "kv_cache_gib": (int,),
    "gpu_memory_utilization": (float, int),
    "port": (int,),
    "chat_template": (str,),
    "dtype": (str,),
    "trust_remote_code": (bool,),
    "generation_config": (str,),
    "repetition_penalty": (float, int),
}
# Settings the chat sends with each request rather than launch settings: applied without a restart.
REQUEST_FIELDS = frozenset({"repetition_penalty"})


class CorruptOverrides(ValueError):
    """The overrides file is not what this module writes."""


@dataclass(frozen=True)
class Override:
    field: str
    value: Any
    remedy: str
    finding_kind: str
    finding_line: int
    finding_text: str
    at: float
    previous: Any
    auto: bool = False  # applied by the automatic mode (CHAT_AUTO_REMEDY=safe), not by an admin's click

    @classmethod
    def from_json(cls, item: Any) -> Override:
        if not isinstance(item, dict):
            raise CorruptOverrides(f"an entry is {type(item).__name__}, not an object")
        try:
            entry = cls(**item)
        except TypeError as exc:
            raise CorruptOverrides(f"an entry has the wrong fields ({exc})") from exc
        types = OVERRIDABLE.get(entry.field)
        if types is None:
            raise CorruptOverrides(f"{entry.field!r} is not a setting a remedy changes")
        if not isinstance(entry.value, types) or (bool not in types and isinstance(entry.value, bool)):
            raise CorruptOverrides(f"{entry.field} = {entry.value!r} is not of type {types[0].__name__}")
        return entry


class OverridesStore:
    """The overrides file of one data folder."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self.problem: str | None = None  # set when a corrupt file was put aside

    @classmethod
    def in_data_dir(cls, data_dir: Path, clock: Callable[[], float] = time.time) -> OverridesStore:
        return cls(data_dir / FILE_NAME, clock)

    # -- reading ---------------------------------------------------------------------------------------------
    def entries(self) -> list[Override]:
        with self._lock:
            return self._load()

    def launch_overrides(self) -> dict[str, Any]:
        """Field -> value, as LaunchSpec.from_settings takes them."""
        return {e.field: e.value for e in self.entries() if e.field not in REQUEST_FIELDS}

    def request_overrides(self) -> dict[str, Any]:
        """Field -> value of the settings the chat's requests carry (repetition_penalty)."""
        return {e.field: e.value for e in self.entries() if e.field in REQUEST_FIELDS}

    def values(self) -> dict[str, Any]:
        """Every overridden setting, launch and request alike."""
        return {e.field: e.value for e in self.entries()}

    def to_json(self) -> dict[str, Any]:
        """What the panel and /api/diagnostics will list (issue 13): the entries and any problem."""
        return {"overrides": [asdict(e) for e in self.entries()], "problem": self.problem}

    # -- writing ---------------------------------------------------------------------------------------------
    def add(self, proposal: Proposal, auto: bool = False) -> list[Override]:
        """Record a remedy's new values; returns the entries written."""
        now = self._clock()
        for name, value in proposal.overrides.items():
            Override.from_json(self._entry(name, value, proposal, None, now, auto))  # refuse what cannot load back
        for path, text in proposal.files.items():  # what the override points at exists before it is written
            self._write(Path(path), text)
        with self._lock:
            current = {e.field: e for e in self._load()}
            written = []
            for name, value in proposal.overrides.items():
                earlier = current.get(name)
                previous = earlier.previous if earlier is not None else proposal.previous.get(name)
                entry = Override(**self._entry(name, value, proposal, previous, now, auto))
                current[name] = entry
                written.append(entry)
            self._save(list(current.values()))
            return written

    def remove(self, remedy_id: str) -> list[Override]:
        """Undo a remedy: drop every setting it changed; returns what was removed (empty: nothing to undo)."""
        with self._lock:
            entries = self._load()
            removed = [e for e in entries if e.remedy == remedy_id]
            if removed:
                self._save([e for e in entries if e.remedy != remedy_id])
            return removed

    @staticmethod
    def _entry(name: str, value: Any, proposal: Proposal, previous: Any, now: float,
               auto: bool = False) -> dict[str, Any]:
        finding = proposal.finding
        return {"field": name, "value": value, "remedy": proposal.remedy.id, "finding_kind": finding.kind,
                "finding_line": finding.line, "finding_text": finding.text, "at": now,
                "previous": previous, "auto": auto}

    # -- the file --------------------------------------------------------------------------------------------
    def _load(self) -> list[Override]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(
                    data.get("overrides"), list):
                raise CorruptOverrides(f"not an overrides file of version {VERSION}")
            return [Override.from_json(item) for item in data["overrides"]]
        except (json.JSONDecodeError, CorruptOverrides) as exc:
            self._put_aside(str(exc))
            return []

    def _put_aside(self, reason: str) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(self._clock())}")
        os.replace(self.path, aside)
        self.problem = (f"{self.path} could not be read as remedy overrides ({reason}); it was kept as {aside} and "
                        "vLLM launches with the configured settings. Apply the remedies again, or fix the file and "
                        "move it back.")
        log.error("%s", self.problem)

    def _save(self, entries: list[Override]) -> None:
        payload = json.dumps({"version": VERSION, "overrides": [asdict(e) for e in entries]}, indent=1)
        self._write(self.path, payload + "\n")

    @staticmethod
    def _write(path: Path, text: str) -> None:
        """A whole new owner-only file renamed into place."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o600)  # O_CREAT's mode is masked by the umask, and an old tmp keeps its mode
        os.replace(tmp, path)
