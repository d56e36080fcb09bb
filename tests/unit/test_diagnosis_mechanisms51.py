"""The round-51 pass (issue 11: holdout round 51's false alarm, moved to dev), on the real lines it was written
from, beside the shapes that must keep their reading: a library's line behind its bracketed name, printed once per
process group, is logged, not an answer repeating itself; a printed answer that loops, or loops on a chat marker,
still does.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

SERVING = ["(APIServer pid=291) INFO 09-21 23:16:28 [api_server.py:1957] Starting vLLM API server 0 on "
           "http://0.0.0.0:8000", "(APIServer pid=291) INFO:     Application startup complete."]
GLOO = "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0"


def test_a_library_line_once_per_process_group_is_no_loop() -> None:
    # a Jetson Thor build guide's healthy start (vLLM 0.10.2): five process groups, five identical lines
    assert classify_lines([GLOO] * 5 + SERVING).kind == "healthy"


def test_printed_answers_that_loop_still_loop() -> None:
    answer = "The capital of France is Paris. The capital of France is Paris."
    assert classify_lines([answer] * 3 + SERVING).kind == "degenerate_output"
    marker = "[INST] What is the capital of France? Answer in one word please"
    assert classify_lines([marker] * 3 + SERVING).kind != "healthy"


def test_an_answer_behind_any_other_bracketed_word_still_loops() -> None:
    """Only communication libraries are named: '[Answer] ' or a Mistral '[THINK] ' opens an answer like any word."""
    for opening in ("[Answer] ", "[THINK] ", "[USER] ", "[Output] "):
        line = opening + "The capital of France is Paris. The capital of France is Paris."
        assert classify_lines([line] * 5 + SERVING).kind == "degenerate_output", opening
    assert classify_lines(["[c10d] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks "
                           "is : 0"] * 5 + SERVING).kind == "healthy"
