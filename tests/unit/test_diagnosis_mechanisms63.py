"""The round-63 pass (issue 11: holdout round 63's one miss, moved to dev), on the real line it was written from: a
name in quotes is not the word it spells. JAX's sharding error names a mesh axis called 'model'; the readings of a
model the server could not find take the word `model`, not a quoted name, and a model that was not found, in any
case and with its owner's apostrophe, keeps its reading.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

MESH = (  # MaxText #3574: Gemma 4 on the TPU plugin, which builds no attn_dp axis unless NEW_MODEL_DESIGN=1
    "(EngineCore_DP0 pid=1356450) ERROR 04-04 21:50:30 [core.py:1111] ValueError: Resource axis: attn_dp of "
    "PartitionSpec('data', None, ('model', 'attn_dp')) is not found in mesh: ('data', 'model')."
)


def test_a_mesh_axis_named_model_is_no_model_not_found() -> None:
    report = classify_lines([MESH])
    assert report.kind == "startup_failure"
    assert classify_lines(['ValueError: axis "model" is not found in mesh']).kind != "model_not_found"


def test_a_model_that_was_not_found_still_is() -> None:
    for line in ('The model "llama3.1:8b" was not found. To download it, run `ollama run llama3.1:8b`.',
                 "[xinference] Error: Failed to get the model description, detail: Not Found",
                 "RuntimeError: The model's repository was not found on the hub"):
        assert classify_lines([line]).kind == "model_not_found", line


def test_a_requests_model_key_is_still_the_word() -> None:
    # the session's review: the quoted-name exclusion first skipped a request body's key
    assert classify_lines(['ERROR request {"model": "qwen"} failed: 404 Not Found']).kind == "model_not_found"
