"""The round-59 pass (issue 11: three of holdout round 59's four misses, moved to dev), on the real lines they were
written from, beside the shapes that must keep their reading: an app's words for a model that failed to load are a
wrapper that the refusal they quote names, a line that says it is not an error is no failure sentence, and the
tokenizers library handed a BPE's merges as pairs is a version mismatch.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

QUOTED = [  # nijaru/vllama's test results: the proxy's error body wrapping vLLM's refusal of a base model's chat
    "{",
    '  "error": "Chat failed: Failed to load model: OpenAI API error (400 Bad Request): {\\"error\\":{\\"message\\":'
    '\\"As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if '
    'the tokenizer does not define one. None\\",\\"type\\":\\"BadRequestError\\",\\"param\\":null,\\"code\\":400}}"',
    "}",
]


def test_a_refusal_quoted_in_an_apps_failure_names_it() -> None:
    assert classify_lines(QUOTED).kind == "chat_template"


def test_the_apps_words_alone_still_name_a_start_up_failure() -> None:
    assert classify_lines(["kserve ERROR [__main__.py:<module>():254] Failed to start model server: integer "
                           "division"]).kind == "startup_failure"
    assert classify_lines(["Traceback (most recent call last):", '  File "/x/vllm/worker/worker.py", line 1, in f',
                           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                           "ERROR Failed to load model: see above"]).kind == "out_of_memory"


def test_a_line_that_says_it_is_no_error_is_no_failure_sentence() -> None:
    # johnson7788/RLDecisionAgent's notes: Unsloth starting vLLM 0.10.0 for a 4-bit Qwen2.5-0.5B
    lines = ["Unsloth: Not an error, but `device` is not supported in vLLM. Skipping.",
             "INFO 08-12 22:32:00 [config.py:1604] Using max model len 32768"]
    assert classify_lines(lines).kind == "healthy"
    assert classify_lines(["Model `device` is not supported in vLLM.", lines[1]]).kind != "healthy"


def test_merges_as_pairs_for_an_older_tokenizers_is_a_version_mismatch() -> None:
    # 6/model-workbench's troubleshooting notes, as stored (the line's wrap kept)
    lines = ["TypeError: argument 'merges' failed to extract enum field PyMerges::Merges.0,",
             "caused by TypeError 'list' object cannot be converted to PyString"]
    assert classify_lines(lines).kind == "version_mismatch"


def test_the_apps_words_before_a_consequence_still_name_the_start() -> None:
    # found by the session's review: a 502 after the model failed to load is its consequence
    assert classify_lines(["2024-05-01 10:00:00 ERROR [app.py:12] Failed to load model: Qwen/Qwen2.5-7B-Instruct",
                           "2024-05-01 10:00:01 ERROR [app.py:40] Request failed with status code 502"]).kind \
        == "startup_failure"


def test_the_apps_words_quoting_a_body_no_rule_names_still_name_the_start() -> None:
    # found by the second review: a lookahead that dropped the rule left these lines unread
    assert classify_lines(['ERROR:root:Failed to load model: {"error":"exit status 1"}']).kind == "startup_failure"
    assert classify_lines(['2025-01-01 10:00:00 ERROR Failed to start model server: {"error": "no such file"}']).kind \
        == "startup_failure"


def test_a_symptom_on_the_quoted_body_names_the_line() -> None:
    # found by the third review: a weak rule on the body (a reset connection) tied with the app's words and lost
    assert classify_lines(['ERROR 2025-01-01 10:00:00 app.py:12] Failed to load model: {"error":{"message":"Connection '
                           'reset by peer"}}']).kind == "connection"
