"""The last step of the ladder before `healthy` (`failure_sentences.py`): a line that says in words that something
failed, in a log nothing else was found in, is a weak finding named by the phase.

Measured on the rules' own example lines with each one's rule left out (a message no rule knows): 148 of 324 read
healthy before this step, 91 after (2026-12-03). The test keeps that figure from growing, and keeps the lines
healthy logs print quiet.
"""

from __future__ import annotations

import pytest

import chainlit_app.diagnostics.classifier as classifier_module
from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.classifier import LineClassifier
from chainlit_app.diagnostics.rule_tables import RULES

# 92 since round 56: torch's `UserWarning: CUDA initialization: The NVIDIA driver on your system is too old`, printed
# without its `file.py:N:`, is a warning (its rule names it), no longer an exception raised (docs/DIAGNOSIS.md)
MEASURED_HEALTHY_WITHOUT_THEIR_RULE = 92


def test_a_message_no_rule_knows_is_seldom_called_healthy(monkeypatch: pytest.MonkeyPatch) -> None:
    healthy = total = 0
    for rule in RULES:
        monkeypatch.setattr(classifier_module, "RULES", tuple(r for r in RULES if r.id != rule.id))
        for example in rule.examples:
            total += 1
            healthy += classify_lines([example]).kind == HEALTHY
    print(f"\n{total} rule examples, each with its rule left out: {healthy} read healthy")
    assert healthy <= MEASURED_HEALTHY_WITHOUT_THEIR_RULE


@pytest.mark.parametrize(("lines", "kind"), [
    # a plugin-less quantisation, a platform's words, a client's words: no rule, no level, no class
    (["Unable to load the LoRA adapter 'sql-lora' from /adapters/sql"], "startup_failure"),
    (["INFO:     Application startup complete.", "Request 7 crashed while decoding the batch"], "engine_error"),
    (["curl http://localhost:8000/v1/models", "Connection to the model server could not be made"], "startup_failure"),
])
def test_a_failure_in_words_no_reading_knows_is_named_by_its_phase(lines: list[str], kind: str) -> None:
    report = classify_lines(lines)
    assert report.kind == kind and report.root is not None
    assert report.root.rule == "failure_sentence" and report.root.basis == "phase"
    assert report.root.text == lines[-1]


@pytest.mark.parametrize("line", [
    "Failed requests:                         0",
    "| Failed requests | 0 |",
    "## Recent failed boot attempts",
    "> ## Recent failed boot attempts",
    "logs/bench.log:6:## Recent failed boot attempts",
    '"failed": 0,',
    "All 200 requests finished with no errors",
    "Feb 09 18:55:00 host systemd[1]: ollama.service: Main process exited, code=killed, status=15/TERM",
    "Benchmark done: 0 failed, 200 succeeded",
    "WARNING 12-01 10:00:00 [config.py:1] Cannot use FlashAttention-2 backend, falling back to xformers",
    "(ServeController pid=19243) WARNING 2026-08-19 17:56:34,032 controller 19243 -- Cannot deregister state",
])
def test_lines_healthy_logs_print_stay_quiet(line: str) -> None:
    assert classify_lines([line]).kind == HEALTHY, line


def test_the_live_monitor_does_not_read_sentences() -> None:
    # a whole log's last step only: the live tail of our own vLLM is read by its rules and phases
    live = LineClassifier()
    assert live.feed("Unable to load the LoRA adapter 'sql-lora' from /adapters/sql", 1) == []
    assert live.finish() == []
