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
