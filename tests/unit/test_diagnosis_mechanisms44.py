"""The round-44 pass (issue 11: holdout round 44's misses, moved to dev), on the real lines it was written from,
beside the shapes that must keep their reading: vLLM's V1 engine refusing what a caller written for V0 asks of it
is a version mismatch, not the harmless fallback warning with the same words; and the frames of Python's own
library (typing's `__call__`) say nothing of whether a traceback ran while serving.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

V1_REFUSAL = "ValueError: vLLM V1 does not support per request user provided logits processors."
V1_START = ("INFO 03-27 10:53:26 [core.py:54] Initializing a V1 LLM engine (v0.8.2) with config: "
            "model='microsoft/Phi-3-mini-4k-instruct', speculative_config=None")


def test_v1_engine_refusing_a_v0_feature_is_a_version_mismatch() -> None:
    # outlines #1517: outlines 0.1's per-request logits processors on vLLM 0.8.2
    report = classify_lines([V1_REFUSAL, V1_START])
    assert report.kind == "version_mismatch"
    assert report.root is not None and report.root.rule == "v1_engine_lacks_feature"
    assert classify_lines(["NotImplementedError: VLLM_USE_V1=1 is not supported with --speculative-model."]
                          ).kind == "version_mismatch"


def test_the_v1_fallback_warning_stays_harmless() -> None:
    warning = ("WARNING 06-25 17:38:13 [arg_utils.py:1684] device type=cpu is not supported by the V1 Engine. "
               "Falling back to V0.")
    assert classify_lines([warning, "INFO 06-25 17:38:20 [api_server.py:1289] Starting vLLM API server on "
                           "http://0.0.0.0:8000"]).kind == "healthy"


OPENLLM = [
    "It is recommended to specify the backend explicitly. Cascading backend might lead to unexpected behaviour.",
    "Traceback (most recent call last):",
    "....",
    "    llm = openllm.LLM[t.Any, t.Any](",
    '  File "/usr/lib/python3.10/typing.py", line 957, in __call__',
    "    result = self.__origin__(*args, **kwargs)",
    '  File "/home/u/.venv/lib/python3.10/site-packages/openllm/_llm.py", line 205, in __init__',
    "    quantise=getattr(self._Quantise, backend)(self, quantize),",
    "TypeError: getattr(): attribute name must be string",
]


def test_a_stdlib_call_frame_does_not_put_a_traceback_in_serving() -> None:
    # OpenLLM #787: typing's `__call__` built the server's LLM object; the server never started
    report = classify_lines(OPENLLM)
    assert report.kind == "startup_failure" and report.root is not None and report.root.basis == "phase"


def test_a_servers_own_call_frame_still_shows_serving() -> None:
    served = ["Traceback (most recent call last):",
              '  File "/w/site-packages/uvicorn/protocols/http/httptools_impl.py", line 409, in run_asgi',
              "    result = await app(  # type: ignore[func-returns-value]",
              '  File "/w/site-packages/starlette/applications.py", line 112, in __call__',
              "    await self.middleware_stack(scope, receive, send)",
              "TypeError: getattr(): attribute name must be string"]
    assert classify_lines(served).kind == "engine_error"
