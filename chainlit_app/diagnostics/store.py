"""In-memory state behind the diagnostics panel: de-duplicated findings and the recent log lines.

A log repeats the same failure hundreds of times; the panel should show it once with a count, the
first and last time it was seen and a few evidence lines. After a restart that made the engine
healthy again, old findings are marked resolved rather than deleted, so the admin still sees what
happened. Everything is bounded. Single asyncio loop: no locking needed. Every change bumps a version,
so a cluster's publisher (shared_store.py) sends only what changed since its last round.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from chainlit_app.i18n import localize

from .findings import Finding
from .lineformat import line_level, parse_line, strip_ansi
from .redact import SecretSource, redact, secrets_of
from .taxonomy import kind_info

MAX_EVIDENCE = 5
_NUMBERS = re.compile(r"0x[0-9a-f]+|\d+(?:\.\d+)?", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def cause_key(finding: Finding) -> str:
    """What makes two findings 'the same problem': the rule that fired, else the evidence text with
    prefixes, numbers and spacing normalised (so pids, ports and timestamps do not split entries)."""
    if finding.rule:
        return finding.rule
    message = parse_line(strip_ansi(finding.text)).message
    return _SPACES.sub(" ", _NUMBERS.sub("#", message.lower())).strip()[:160]


def entry_id(kind: str, cause: str) -> str:
    """An entry's id: the same for the same cause in every process (a cluster merges entries by it)."""
    return hashlib.sha1(f"{kind}|{cause}".encode()).hexdigest()[:12]


@dataclass
class _Entry:
    id: str
    kind: str
    title: str
    severity: str
    hint: str
    fix: list[str]
    first_seen: float
    last_seen: float
    count: int = 0
    evidence: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=MAX_EVIDENCE))
    resolved: bool = False
    resolved_at: float | None = None
    resolved_reason: str = ""
    basis: str = "rule"
    rule: str = ""
    source: str = "log"
    version: int = 0

    def record(self) -> dict[str, Any]:
        """The entry's raw state for another process (hint and reason as given: Msg or text)."""
        return {"id": self.id, "kind": self.kind, "severity": self.severity, "hint": self.hint,
                "count": self.count, "first_seen": self.first_seen, "last_seen": self.last_seen,
                "evidence": list(self.evidence), "resolved": self.resolved, "resolved_at": self.resolved_at,
                "resolved_reason": self.resolved_reason, "basis": self.basis, "rule": self.rule,
                "source": self.source}

    def to_dict(self) -> dict[str, Any]:
        """The entry as the API shows it; title, hint and fix in the current language (i18n)."""
        info = kind_info(self.kind)
        return {
            "id": self.id,
            "kind": self.kind,
            "title": info.title if info else self.title,
            "severity": self.severity,
            "count": self.count,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "evidence": list(self.evidence),
            "hint": localize(self.hint),
            "fix": list(info.fix) if info else list(self.fix),
            "resolved": self.resolved,
            "resolved_at": self.resolved_at,
            "resolved_reason": localize(self.resolved_reason),
            "basis": self.basis,
            "rule": self.rule,
            "source": self.source,
        }


class FindingsStore:
    """Findings keyed by (kind, cause); open entries first in `snapshot`, at most `max_entries` kept."""

    def __init__(self, max_entries: int = 200, clock: Callable[[], float] = time.time) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._max = max_entries
        self._clock = clock
        self._version = 0

    @property
    def max_entries(self) -> int:
        return self._max

    def _touch(self, entry: _Entry) -> None:
        self._version += 1
        entry.version = self._version

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, finding: Finding, latest_only: bool = False) -> dict[str, Any]:
        """Record one occurrence; a new occurrence of a resolved problem reopens it. With `latest_only` the
        evidence is this occurrence alone (a repeated probe's state, not a history of its figures)."""
        now = self._clock()
        key = (finding.kind, cause_key(finding))
        entry = self._entries.get(key)
        if entry is None:
            self._make_room()
            info = kind_info(finding.kind)
            entry = _Entry(
                id=entry_id(*key),
                kind=finding.kind,
                title=info.title if info else finding.kind,
                severity=info.severity if info else "error",
                hint=finding.hint,
                fix=list(info.fix) if info else [],
                first_seen=now,
                last_seen=now,
            )
            self._entries[key] = entry
        entry.count += 1
        entry.last_seen = now
        entry.hint = finding.hint or entry.hint
        entry.basis, entry.rule, entry.source = finding.basis, finding.rule, finding.source
        if entry.resolved:
            entry.resolved, entry.resolved_at, entry.resolved_reason = False, None, ""
        item = {"line": finding.line, "text": finding.text, "source": finding.source, "basis": finding.basis}
        if latest_only:
            entry.evidence.clear()
        if item not in entry.evidence:
            entry.evidence.append(item)
        self._touch(entry)
        return entry.to_dict()

    def add_all(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self.add(finding)

    def resolve_all(self, reason: str = "", seen_before: float | None = None) -> int:
        """Mark every open entry resolved (e.g. the engine is healthy again after a restart); with `seen_before`,
        only those last seen before then (what a new launch reports stays open)."""
        now = self._clock()
        changed = 0
        for entry in self._entries.values():
            if not entry.resolved and (seen_before is None or entry.last_seen < seen_before):
                entry.resolved, entry.resolved_at, entry.resolved_reason = True, now, reason
                self._touch(entry)
                changed += 1
        return changed

    def resolve_kind(self, kind: str, reason: str, since: float | None = None) -> int:
        """Mark the open entries of one kind resolved (a remedy for that kind was verified to work). With
        `since`, entries of that kind resolved at or after it get this reason too: the restart that the remedy
        made may have resolved them a moment before the verification ("engine ready again")."""
        now = self._clock()
        changed = 0
        for entry in self._entries.values():
            relabel = since is not None and entry.resolved and (entry.resolved_at or 0.0) >= since
            if entry.kind == kind and (not entry.resolved or relabel):
                entry.resolved, entry.resolved_at, entry.resolved_reason = True, now, reason
                self._touch(entry)
                changed += 1
        return changed

    def resolve_entry(self, entry_id: str, reason: str, at: float) -> bool:
        """Resolve the open entry of this id that another process resolved at `at` (its resolution is
        shared), unless this process saw the problem again after then."""
        entry = next((e for e in self._entries.values() if e.id == entry_id), None)
        if entry is None or entry.resolved or entry.last_seen > at:
            return False
        entry.resolved, entry.resolved_at, entry.resolved_reason = True, at, reason
        self._touch(entry)
        return True

    def changed_since(self, version: int) -> tuple[list[dict[str, Any]], int]:
        """The raw records of the entries changed after `version`, and the version to ask from next time."""
        changed = [entry.record() for entry in self._entries.values() if entry.version > version]
        return changed, self._version

    def clear(self) -> None:
        self._entries.clear()

    def snapshot(self) -> list[dict[str, Any]]:
        """Open entries first, then resolved ones; newest (last_seen) first within each group."""
        ordered = sorted(self._entries.values(), key=lambda e: (e.resolved, -e.last_seen))
        return [e.to_dict() for e in ordered]

    def _make_room(self) -> None:
        if len(self._entries) < self._max:
            return
        resolved = [k for k, e in self._entries.items() if e.resolved]
        pool = resolved or list(self._entries)
        oldest = min(pool, key=lambda k: self._entries[k].last_seen)
        del self._entries[oldest]


class LogRing:
    """The last `size` log lines for the panel's log tail.

    Lines are kept raw and cleaned (ANSI stripped, secrets redacted, level parsed) only when the panel
    reads them: a busy server writes thousands of lines a second and the panel shows 200 once a second,
    so cleaning on append was most of the tail's CPU. Cleaned lines are cached between reads."""

    def __init__(self, size: int = 500, secrets: SecretSource = ()) -> None:
        self._lines: deque[tuple[int, str]] = deque(maxlen=size)
        self._secrets = secrets if callable(secrets) else secrets_of(secrets)
        self._clean: dict[tuple[int, str], dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def append(self, lineno: int, text: str) -> None:
        self._lines.append((lineno, text[:2000]))

    def tail(self, n: int = 200) -> list[dict[str, Any]]:
        """The last n lines, oldest first, redacted."""
        if n <= 0:
            return []
        wanted = list(self._lines)[-n:]
        secrets = secrets_of(self._secrets)  # asked once per read: the current launch's key included
        cache = {line: self._clean.get(line) or self._cleaned(*line, secrets) for line in wanted}
        self._clean = cache  # keyed by number and text: a rotated log starts its numbers again
        return [cache[line] for line in wanted]

    @staticmethod
    def _cleaned(lineno: int, raw: str, secrets: tuple[str, ...]) -> dict[str, Any]:
        text = strip_ansi(raw.rstrip("\r\n"))
        return {"n": lineno, "text": redact(text, secrets), "level": line_level(text)}

    def clear(self) -> None:
        self._lines.clear()
        self._clean.clear()
