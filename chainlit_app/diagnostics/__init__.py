"""Diagnostics for a chat front end on vLLM: log classification, live tail, findings store, chat signals.

Pure Python on purpose (no Chainlit import), so the same code serves the panel and the CLI.
"""

from .classifier import Finding, LineClassifier, Report, classify_file, classify_lines
from .redact import redact
from .rules import HARMLESS, RULES, Rule, line_level, parse_line
from .signals import FirstTokenWatch, from_answer, from_exception, from_metrics
from .store import FindingsStore, LogRing
from .tail import LogFollower
from .taxonomy import HEALTHY, KINDS, Kind, KindInfo, kind_info

__all__ = [
    "HARMLESS",
    "HEALTHY",
    "KINDS",
    "RULES",
    "Finding",
    "FindingsStore",
    "FirstTokenWatch",
    "Kind",
    "KindInfo",
    "LineClassifier",
    "LogFollower",
    "LogRing",
    "Report",
    "Rule",
    "classify_file",
    "classify_lines",
    "from_answer",
    "from_exception",
    "from_metrics",
    "kind_info",
    "line_level",
    "parse_line",
    "redact",
]
