"""The round-54 pass (issue 11: holdout round 54's one miss and one envelope's false alarm, both moved to dev), on
the real lines they were written from, beside the shapes that must keep their reading: Triton's LLVM refusing fp16
conversions on a Pascal GPU is the GPU too old for the dtype (version_mismatch), not an unknown death while serving;
a printed list of numbers behind a compose column, a quote or `grep -n`'s number reads as it reads bare (no garbled
answer), while a garbled answer behind the same envelopes is still one.
"""

from __future__ import annotations

import pytest

from chainlit_app.diagnostics import classify_lines

# A GTX 1080 (compute capability 6.1) serving Llama-3.2-1B with --dtype=half, vLLM 0.6.4: the first request
PASCAL_FP16 = [
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    "INFO 12-06 14:09:27 engine.py:267] Added request cmpl-24f077ae65df4dc4baa7c6cec7b29240-0.",
    "Unsupported conversion from f16 to f16",
    "LLVM ERROR: Unsupported rounding mode for conversion.",
    "ERROR 12-06 14:09:37 client.py:282] RuntimeError('Engine process (pid 16470) died.')",
    "ERROR 12-06 14:09:37 client.py:282] NoneType: None",
    "CRITICAL 12-06 14:09:39 launcher.py:99] MQLLMEngine is already dead, terminating server process",
]


def test_triton_refusing_fp16_on_an_old_gpu_is_the_gpu_too_old() -> None:
    report = classify_lines(PASCAL_FP16)
    assert report.kind == "version_mismatch"
    assert report.findings[0].rule == "gpu_capability_too_low"
    assert report.findings[0].text == "Unsupported conversion from f16 to f16"
    assert "float32" in report.findings[0].hint


def test_the_engine_dying_with_no_cause_shown_still_falls_back_to_engine_error() -> None:
    assert classify_lines([PASCAL_FP16[0], PASCAL_FP16[1], *PASCAL_FP16[4:]]).kind == "engine_error"


# vllm-ascend's Qwen3-VL embedding tutorial: the similarity scores it prints after the batch
SCORES = "[[0.9279120564460754, 0.32747742533683777], [0.4124627113342285, 0.7425257563591003]]"
GARBLED = "Paris is the capital of ÃƒÂ©ÃƒÂ¨ FranceÃ¢â‚¬â„¢s ÃƒÂ  ÃƒÂ§ government Ã¢â‚¬Å“seatÃ¢â‚¬"
ENVELOPES = {
    "compose": lambda n, line: "vllm-1  | " + line,
    "quote": lambda n, line: "> " + line,
    "grep_n": lambda n, line: f"{n}:{line}",
    "cat_n": lambda n, line: f"{n:6d}\t{line}",
}
START = "INFO 01-09 00:44:40 [llm.py:1] Processed prompts: 100% 4/4"


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
def test_printed_numbers_behind_an_envelope_read_as_they_do_bare(envelope: str) -> None:
    wrap = ENVELOPES[envelope]
    assert classify_lines([START, SCORES]).kind == "healthy"
    assert classify_lines([wrap(1, START), wrap(2, SCORES)]).kind == "healthy"


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
def test_a_garbled_answer_behind_an_envelope_is_still_garbled(envelope: str) -> None:
    wrap = ENVELOPES[envelope]
    assert classify_lines([START, GARBLED]).kind == "decode_error"
    assert classify_lines([wrap(1, START), wrap(2, GARBLED)]).kind == "decode_error"
