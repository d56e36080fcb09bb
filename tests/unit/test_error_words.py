"""The words of an unrecognised error: each family's real examples, the phase they need, and the classifier
using them only where it would otherwise fall back to the phase default."""

from __future__ import annotations

from pathlib import Path

import pytest

from chainlit_app.diagnostics import Report, classify_lines
from chainlit_app.diagnostics.error_words import WORD_FAMILIES, kind_in_words

CORPUS = Path(__file__).resolve().parents[1] / "data" / "logs"
EXAMPLES = [pytest.param(family, example, id=f"{family.kind.value}-{n}")
            for family in WORD_FAMILIES for n, example in enumerate(family.examples)]


def classify_text(log: str) -> Report:
    return classify_lines(log.splitlines())


def _corpus_text() -> str:
    return "\n".join(p.read_text(errors="replace") for p in CORPUS.glob("*/*/*.log"))


@pytest.mark.parametrize(("family", "example"), EXAMPLES)
def test_each_example_names_its_family(family, example) -> None:  # type: ignore[no-untyped-def]
    assert kind_in_words(example, serving=not family.starting_only) is family


def test_words_inside_an_identifier_or_a_settings_conflict_name_nothing() -> None:
    assert kind_in_words("TypeError: X.__init__() got an unexpected keyword argument 'chat_template_kwargs'",
                         serving=True) is None  # while serving: the engine's own bug, the phase decides
    assert kind_in_words("ValueError: Fast prefill optimization for KV sharing is not compatible with EAGLE",
                         serving=False) is None


def test_every_example_is_a_real_line_of_the_corpus() -> None:
    corpus = _corpus_text()
    missing = [example for family in WORD_FAMILIES for example in family.examples
               if example.replace("\n", "") not in corpus and example[:60] not in corpus]
    assert not missing, missing


def test_request_words_do_not_decide_before_serving_nor_call_words_while_serving() -> None:
    """Before serving, 'context length' or 'empty response' words refuse a setting, not a request; while
    serving, an unexpected keyword is the engine's own bug (as the exception ladder reads a TypeError)."""
    for family in WORD_FAMILIES:
        if family.serving_only:
            assert kind_in_words(family.examples[0], serving=False) is not family
        if family.starting_only:
            assert kind_in_words(family.examples[0], serving=True) is not family


def test_an_unknown_error_with_words_is_named_by_them_not_by_the_phase() -> None:
    # words no rule knows (a made-up component); the same frame with other words is the phase default below
    for message, kind in (("frobnicator: chat template missing for this request", "chat_template"),
                          ("gateway: the upstream said Model foo-7b unknown", "model_not_found"),
                          ("worker 3: insufficient memory for the batch", "out_of_memory")):
        report = classify_text(f"INFO:     Application startup complete.\nERROR 05-01 10:00:00 [x.py:1] {message}\n")
        assert report.kind == kind
        assert report.root is not None and report.root.rule == f"words_{kind}" and report.root.basis == "rule"


def test_an_unknown_error_without_words_keeps_the_phase_default() -> None:
    log = "INFO:     Application startup complete.\nERROR 05-01 10:00:00 [x.py:1] frobnication failed at step 3\n"
    report = classify_text(log)
    assert report.kind == "engine_error"
    assert report.root is not None and report.root.basis == "phase"


def test_a_rule_still_wins_over_the_words() -> None:
    """'Address already in use' has a rule of its own: the words are never consulted for it."""
    report = classify_text("OSError: [Errno 98] Address already in use\n")
    assert report.kind == "port_in_use"
    assert report.root is not None and not (report.root.rule or "").startswith("words_")
