"""The round-53 pass (issue 11: three of holdout round 53's false alarms, moved to dev), on the real lines it was
written from, beside the shapes that must keep their reading: a sentence that says what it did instead (`type
hints mismatch, override to`) and the words a line quotes (a printed answer) are no failure sentence, while a
plain failure sentence still is; a code block's repeated identifiers and a Markdown title's `=====` underline in
an answer cut at its length limit are no loop, while an answer that runs into the limit repeating still loops.
"""

from __future__ import annotations

import json

from chainlit_app.diagnostics import classify_lines

AITER = ("(RayWorkerWrapper pid=372171) [aiter] type hints mismatch, override to --> rmsnorm2d_fwd(input: "
         "torch.Tensor, weight: torch.Tensor, epsilon: float, use_model_sensitive_rmsnorm: int = 0) -> torch.Tensor")
OUTPUT = "Output:    ' in their hands. We cannot prevent the future.\\nAgreed.  '"


def test_a_sentence_that_says_what_it_did_instead_is_no_failure() -> None:
    # AMD's ROCm 7 Ray blog: aiter's notes while a tensor-parallel worker loads
    assert classify_lines([AITER] * 3).kind == "healthy"


def test_the_words_a_printed_answer_quotes_are_no_failure() -> None:
    # an offline OPT-125m run in a notebook: the prompt and the generated text printed
    assert classify_lines(["Prompt:    'The future of AI is'", OUTPUT]).kind == "healthy"


def test_a_plain_failure_sentence_still_is_one() -> None:
    assert classify_lines(["Could not load the model weights from /models/qwen"]).kind == "startup_failure"
    assert classify_lines(["The server failed to start: 'config.json' is missing"]).kind == "startup_failure"


def _body(content: str) -> list[str]:
    body = {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
            "finish_reason": "length"}], "usage": {"prompt_tokens": 40, "completion_tokens": 150, "total_tokens": 190}}
    return json.dumps(body, indent=2).split("\n")


CODE_ANSWER = (
    "**Segment Tree Implementation in Python**\n=====================================================\n\n"
    "A segment tree is a data structure used for efficient range queries on a set of elements.\n\n"
    "**Code**\n--------\n\n```python\nclass Node:\n    \"\"\"Represents a node in the segment tree.\"\"\"\n"
    "    def __init__(self, value, left=None, right=None, parent=None):\n        self.value = value\n"
    "        self.left = left\n        self.right = right\n        self.parent = parent\n\nclass SegmentTree:\n"
    "    \"\"\"Represents a segment tree with in-order traversal.\"\"\"\n    def __init__(self, arr, id):\n"
    "        self.arr = arr\n        self.id = id\n        self.root = self.build(arr, 0, len(arr) - 1)\n"
)


def test_an_answer_with_code_and_an_underline_cut_at_its_limit_is_no_loop() -> None:
    # KServe's LMCache page: Llama-3.2-1B's answer at max_tokens 150
    assert classify_lines(_body(CODE_ANSWER)).kind == "healthy"


def test_an_answer_that_runs_into_its_limit_repeating_still_loops() -> None:
    assert classify_lines(_body("Here is the table:\n" + "=-" * 200)).kind == "degenerate_output"
    words = "the the model model the model the the model the " * 12
    assert classify_lines(_body(words)).kind == "degenerate_output"


PREEMPTED = ("WARNING 11-19 22:29:45 scheduler.py:1242] Sequence group 98 is preempted by PreemptionMode.RECOMPUTE "
             "mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase "
             "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory.")
BAR = "Processed prompts:  {}%|█████     | {}/512 [02:37<01:50,  2.29it/s, est. speed input: 1492.45 toks/s]"


def test_a_preemption_in_a_batch_that_finishes_is_no_stall() -> None:
    # vLLM 0.5.5 on a Turing GPU: 512 prompts, sequences preempted, every one answered in 4 minutes
    assert classify_lines([BAR.format(0, 0), PREEMPTED, BAR.format(51, 259), BAR.format(100, 512)]).kind == "healthy"


def test_a_preemption_in_a_batch_that_never_moves_again_or_while_serving_stays() -> None:
    # a bar that counts more prompts done after the warning shows the batch going on (the round-62 pass)
    assert classify_lines([BAR.format(0, 0), PREEMPTED, BAR.format(51, 259)]).kind == "healthy"
    assert classify_lines([BAR.format(51, 259), PREEMPTED]).kind == "slow_or_stalled"
    assert classify_lines([BAR.format(51, 259), PREEMPTED, BAR.format(51, 259)]).kind == "slow_or_stalled"
    serving = "INFO 11-19 22:29:40 api_server.py:1] Starting vLLM API server on http://0.0.0.0:8000"
    assert classify_lines([serving, PREEMPTED]).kind == "slow_or_stalled"


def test_foreign_letters_in_one_word_are_a_slip_and_in_many_are_garbage() -> None:
    # a Korean answer spelling 'philoso-' in Cyrillic inside one word
    slip = "- 해리는 친구들인 론과 헤르미온느와 함께 필ософ스의 돌을 찾기 위해 모험을 떠난다."
    assert classify_lines([slip]).kind == "healthy"
    garbage = "- 해리는 친구ые들인 론과 헤르ми온느와 함께 필ософ스의 돌을 찾기 위해 모험ность을 떠난다."
    assert classify_lines([garbage]).kind == "decode_error"
