"""Diagnostics for a chat front end on vLLM: log classification, live tail, findings store, chat observations.

Pure Python on purpose (no Chainlit import), so the same code serves the panel and the CLI.
"""

from .chat_observations import FirstTokenWatch, from_answer, from_exception, from_history_failure, from_metrics
from .classifier import LineClassifier
from .findings import Finding, Report
from .harmless import HARMLESS
from .lineformat import line_level, parse_line
from .redact import redact
from .rule_tables import RULES
from .rules import Rule
from .store import FindingsStore, LogRing
from .tail import LogFollower
from .taxonomy import HEALTHY, KINDS, Kind, KindInfo, kind_info
from .whole_log import classify_file, classify_lines

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
    "from_history_failure",
    "from_metrics",
    "kind_info",
    "line_level",
    "parse_line",
    "redact",
]
