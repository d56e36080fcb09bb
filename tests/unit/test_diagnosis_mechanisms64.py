"""The round-64 pass (issue 11: holdout round 64's two misses, moved to dev), on the real lines they were written
from: an answer that is one letter or digit said to its limit is one token over and over (degenerate_output), and a
TPU start's look-up of Google Cloud's metadata and the tpu-info library's canary, which both go on, are no failure.
A row of digits inside an answer, a run of '!' (token 0, decode_error) and a TPU start that did fail keep their
readings.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

ONES = "Prompt: 'Hello, my name is', Generated text: ' " + "1" * 127 + "'"  # vllm-ascend #4477, Qwen3-Next


def test_an_answer_of_one_digit_said_to_its_limit_loops() -> None:
    report = classify_lines([ONES])
    assert report.kind == "degenerate_output"
    assert report.findings[0].rule == "answer_one_character_repeated"


def test_digits_inside_an_answer_and_token_zero_keep_their_readings() -> None:
    table = "Prompt: 'Write the number', Generated text: ' It is 1111111111111111111111111111111111111 in binary.'"
    assert classify_lines([table]).kind == "healthy"
    assert classify_lines(["Prompt: 'The capital of France is:', Generated text: '!!!!!!!!!!!!!!!!!!'"]
                          ).kind == "decode_error"


TPU_START = [  # keras-io's vLLM guide: Gemma 3 exported to safetensors, served on a Colab TPU
    "ERROR 06-17 21:26:41 [tpu_info.py:40] Unable to poll TPU GCE Metadata. Got status code: 404 and content: ",
    "",
    "Check failed with unknown exit code: -6.",
    "",
    "Loading safetensors checkpoint shards:   0% Completed | 0/1 [00:00<?, ?it/s]",
    "vLLM engine ready.",
]


def test_a_tpu_start_that_goes_on_past_the_metadata_look_up_is_healthy() -> None:
    assert classify_lines(TPU_START).kind == "healthy"


def test_a_tpu_start_that_fails_after_them_still_fails() -> None:
    failed = [*TPU_START[:4], "RuntimeError: TPU initialization failed: No ba16c7433 device found."]
    assert classify_lines(failed).kind != "healthy"


def test_a_short_run_or_a_prompt_is_no_answer_loop() -> None:
    # the session's review: 30 of one character matched an answer of 32 'f' and a prompt's text
    assert classify_lines(["Generated text: '" + "f" * 32 + "'"]).kind == "healthy"
    assert classify_lines(["Request 1: prompt_text='" + "0" * 64 + "', params=SamplingParams(n=1)"]).kind == "healthy"
