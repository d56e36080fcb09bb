"""The log classifier's inputs and outputs: a streamed feed gives what a batch read gives (on a sample of the
labelled corpus of real vLLM logs), a finding's JSON shape, evidence redacted and bounded, files with huge
lines and bad bytes, secrets masked, ordinary lines cheap, and streamed answers judged whole.
The rule behaviours are in test_classifier.py."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from chainlit_app.diagnostics import HEALTHY, LineClassifier, classify_file, classify_lines, redact
from chainlit_app.diagnostics.disproved import ServingDisproves
from chainlit_app.diagnostics.hard_wrap import unwrapped
from chainlit_app.diagnostics.pasted_text import without_margin
from chainlit_app.diagnostics.whole_log import (
    EXPLAINED_BY,
    EXPLAINED_BY_RULES,
    EXPLAINED_WHEN_UNRECOGNISED,
    WHOLE_LOG_ONLY_RULES,
)
from tests.classifier_lines import OOM

CORPUS = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"
CORPUS_FILES = sorted(CORPUS.glob("*/*.log"))


def _file_lines(path: Path) -> list[str]:
    """Lines as the classifier numbers them: split at '\\n' only (progress bars contain '\\r')."""
    return path.read_bytes().decode("utf-8", errors="replace").split("\n")


# --- streaming, files, secrets, speed ----------------------------------------------------------


@pytest.mark.parametrize("path", CORPUS_FILES[::3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_streaming_feed_equals_batch_classification(path: Path) -> None:
    classifier = LineClassifier()
    streamed = []
    lines = _file_lines(path)
    # A whole log is first freed of a margin its lines share and joined where a width broke them; the live tail
    # reads vLLM's own log, which has neither, line by line: the line classifier gets the same lines either way.
    for number, line, _ in unwrapped(without_margin((n, text, False) for n, text in enumerate(lines, start=1))):
        streamed.extend(classifier.feed(line, number))
    streamed.extend(classifier.finish())
    if classifier.served:  # the warnings serving disproves are withdrawn on both paths (`disproved.py`)
        notes = ServingDisproves()
        for finding in streamed:
            notes.feed(finding)
        gone = {id(note) for note in notes.withdrawn()}
        streamed = [finding for finding in streamed if id(finding) not in gone]
    batch = classify_file(path)
    # what only a whole log's watches name (whole_log.py): the live path never names it
    batch_keys = {(f.kind, f.line, f.rule) for f in batch.findings if f.rule not in WHOLE_LOG_ONLY_RULES}
    assert batch_keys <= {(f.kind, f.line, f.rule) for f in streamed}
    first_decisive = next((f for f in streamed if f.role == "decisive"), None)
    if first_decisive is not None:
        # the earliest decisive finding is the root, unless the same log names what explains it (whole_log.py)
        causes = (*EXPLAINED_BY.get(first_decisive.kind, ()),
                  *EXPLAINED_WHEN_UNRECOGNISED.get(first_decisive.kind, ()))
        explained = batch.root.rule in EXPLAINED_BY_RULES.get(first_decisive.kind, ())  # type: ignore[union-attr]
        if batch.root.kind not in causes and not explained:  # type: ignore[union-attr]
            assert (batch.root.kind, batch.root.line) == (first_decisive.kind, first_decisive.line)  # type: ignore[union-attr]
    assert classify_lines(lines).to_json() == batch.to_json()


def test_json_shape_of_findings() -> None:
    report = classify_lines([OOM])
    assert report.to_json() == {"kind": "out_of_memory", "findings": [report.findings[0].to_json()]}
    assert set(report.findings[0].to_json()) == {"kind", "line", "text", "hint", "basis", "rule", "source"}
    assert report.findings[0].to_json()["basis"] in ("rule", "exception_type", "raised_in", "phase")
    assert report.findings[0].hint


def test_evidence_is_redacted_and_bounded() -> None:
    lines = [
        "curl -H 'Authorization: Bearer sk-live-abcdefgh12345678' http://127.0.0.1:8000/v1/models",
        'INFO:     127.0.0.1:5555 - "POST /v1/chat/completions HTTP/1.1" 401 Unauthorized  key=my-s3cret-key '
        + "x" * 900,
    ]
    report = classify_lines(lines, secrets=["my-s3cret-key"])
    text = " ".join(f.text for f in report.findings)
    assert "sk-live" not in text and "my-s3cret-key" not in text
    assert all(len(f.text) <= 500 for f in report.findings)


def test_file_reading_survives_huge_lines_and_bad_bytes(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(
        b"INFO start\n"
        + b"A" * 300_000
        + b"\n"
        + b"bad \xff\xfe bytes\n"
        + b"OSError: [Errno 98] Address already in use\n"
    )
    report = classify_file(log)
    assert report.lines == 4
    assert report.kind == "port_in_use" and report.findings[0].line == 4
    # our own U+FFFD replacement of undecodable bytes is not "garbled model output"
    assert all(f.kind != "decode_error" for f in report.findings)


def test_ordinary_lines_are_cheap() -> None:
    lines = [
        "(EngineCore pid=5700) INFO 11-30 15:01:54 [core.py:133] Initializing a V1 LLM engine (v0.32.0) with "
        "config: model='/tmp/models/demo', speculative_config=None, tokenizer='/tmp/models/demo'",
        "(APIServer pid=5649) INFO 11-30 15:02:09 [launcher.py:195] Route: /v1/chat/completions, Methods: "
        "POST",
        'INFO:     127.0.0.1:59356 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
        "(Worker pid=5783) INFO 11-30 15:02:04 [default_loader.py:501] Loading weights took 1.60 seconds",
    ] * 5000
    classifier = LineClassifier()
    start = time.process_time()
    for number, line in enumerate(lines, start=1):
        assert not classifier.feed(line, number)
    per_line = (time.process_time() - start) / len(lines)
    # A figure, not a gate (shared machines are noisy): `make bench` measures the tail at 5,000 lines/s.
    print(f"\n{per_line * 1e6:.1f} us of CPU per ordinary line")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("python -m vllm.entrypoints.openai.api_server --api-key tok-AbC123xyz --port 8000", "tok-AbC123xyz"),
        ("vllm serve m --api_key=tok-AbC123xyz", "tok-AbC123xyz"),
        ("-H 'Authorization: Bearer tok-AbC123xyz'", "tok-AbC123xyz"),
        ('{"api_key": "tok-AbC123xyz", "model": "tiny"}', "tok-AbC123xyz"),
        ("export VLLM_API_KEY=tok-AbC123xyz", "tok-AbC123xyz"),
        ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345 vllm serve", "hf_abcdefghijklmnopqrstuvwxyz012345"),
        ("client = OpenAI(api_key='sk-proj-abcdefgh12345')", "sk-proj-abcdefgh12345"),
        ("model says: sk-abcdefghijkl is my key", "sk-abcdefghijkl"),
    ],
)
def test_redact_masks_credential_shapes(text: str, secret: str) -> None:
    masked = redact(text)
    assert secret not in masked and "***" in masked


def test_redact_keeps_ordinary_text_and_masks_given_secrets() -> None:
    line = "INFO non-default args: {'max_tokens': 600, 'model': '/srv/m', 'api_key': '***'}"
    assert redact(line) == line
    assert (
        redact("connected with my-pass-123 to 127.0.0.1", ["my-pass-123"])
        == "connected with *** to 127.0.0.1"
    )


def _chunk(content: str, finish: str | None = None, rid: str = "chatcmpl-1") -> str:
    body = {"id": rid, "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}
    return "data: " + json.dumps(body)


def test_a_streamed_answer_is_judged_whole_when_it_finishes() -> None:
    assert classify_lines([_chunk("Paris"), _chunk(" is the capital of France.", "stop")]).kind == HEALTHY
    empty = classify_lines([_chunk(""), _chunk("", "stop")])
    assert empty.kind == "empty_output" and empty.root is not None and empty.root.rule == "stream_empty_output"
    looping = [_chunk("la la la la la ") for _ in range(40)] + [_chunk("", "length")]
    assert classify_lines(looping).kind == "degenerate_output"
    # two answers streamed at once do not mix
    mixed = [_chunk("Paris", rid="a"), _chunk("", rid="b"), _chunk(" is it.", "stop", "a"), _chunk("", "stop", "b")]
    assert [f.kind for f in classify_lines(mixed).findings] == ["empty_output"]
