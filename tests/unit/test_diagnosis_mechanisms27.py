"""The general mechanisms of the round-27 pass (issue 11: two of holdout round 27's misses, moved to dev), each on
the real lines it was written from and each beside the shape that must keep its reading.

ECONNREFUSED given by its number (Envoy's `delayed connect error: 111`), and pydantic refusing a field vLLM's
configuration does not have while the engine starts (a config written for another release).
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_refused_connection_given_by_its_errno_is_connection() -> None:
    # vllm-project/aibrix #1111: the gateway sent the request to port 8000, the pod listened on 8080
    lines = ['{"error":{"code":500,"message":"invalid character \'u\' looking for beginning of value"}}',
             '{"error":{"code":503,"message":"upstream connect error or disconnect/reset before headers. reset '
             'reason: remote connection failure, transport failure reason: delayed connect error: 111. "}}']
    assert _root(lines) == ("connection", "connection_refused")
    # the number elsewhere is no errno
    pattern = RULES_BY_ID["connection_refused"].pattern
    for line in ("INFO 03-01 10:00:00 [loggers.py:123] Processed 111 requests, connect errors: 0",
                 "delayed connect error: 1110", "errno=1112"):
        assert not pattern.search(line), line


def test_a_field_the_starting_engines_config_does_not_have_is_another_release() -> None:
    # vllm-project/llm-compressor #2234: a checkpoint made with llm-compressor 0.9.0 on the vLLM 0.13.0 image
    lines = ["pydantic_core._pydantic_core.ValidationError: 2 validation errors for VllmConfig",
             "scale_dtype  Extra inputs are not permitted",
             "zp_dtype     Extra inputs are not permitted"]
    report = classify_lines(lines)
    assert report.kind == "version_mismatch"
    assert report.root is not None and report.root.rule == "config_field_of_another_release"
    assert report.root.line == 2
    # pydantic 2's own layout: the field on one line, the message indented on the next
    two_lines = [lines[0], "scale_dtype", "  Extra inputs are not permitted [type=extra_forbidden, "
                 "input_value='float16', input_type=str]"]
    assert _root(two_lines) == ("version_mismatch", "config_field_of_another_release")
    # the same words quoted in a JSON error body (a request's extra field) are the body's, not this rule's
    body = ("{\"object\":\"error\",\"message\":\"[{'type': 'extra_forbidden', 'loc': ('body', 'foo'), 'msg': "
            "'Extra inputs are not permitted'}]\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}")
    assert _root([body])[1] != "config_field_of_another_release"
    # another field error of the same config stays a start-up failure
    wrong_value = ["pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
                   "  Value error, max_model_len must be positive [type=value_error, input_value=-1]"]
    assert classify_lines(wrong_value).kind == "startup_failure"
    # a request refused for an extra field while serving is not the engine's configuration
    serving = ["INFO:     Application startup complete.",
               'INFO:     127.0.0.1:5555 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
               "WARNING 03-01 10:00:05 [protocol.py:58] foo  Extra inputs are not permitted"]
    assert classify_lines(serving).kind != "version_mismatch"
    assert classify_lines(serving[:2]).kind == HEALTHY
