"""One module per figure family; each `run(...)` measures and adds rows to the shared report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.machine import LoadLog
from bench.report import Report


@dataclass
class Context:
    """What every section needs: quick or full, where to write, the report and the load log."""

    full: bool
    work_dir: Path
    report: Report
    load: LoadLog
    say: Callable[[str], None] = print
    facts: dict[str, float] = field(default_factory=dict)  # figures one section hands to another

    def pick(self, quick: int, full: int) -> int:
        return full if self.full else quick
