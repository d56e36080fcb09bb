"""The general mechanism of the round-29 pass (issue 11: holdout round 29's one miss, moved to dev), on the real
lines it was written from and beside the shapes that must keep their reading.

An error that speaks of a streaming response happened while the server served, as one that speaks of a request.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines
from chainlit_app.diagnostics.phases import words_show_serving


def test_an_error_about_a_streaming_response_is_one_while_serving() -> None:
    # gpustack #568: the gateway forwarding a chat to a vLLM worker, then failing on the stream's last chunk
    lines = ["2024-11-19T10:08:56+00:00 - gpustack.routes.openai - DEBUG - proxying to "
             "http://192.168.50.242:40455/v1/chat/completions",
             "2024-11-19T10:08:56+00:00 - gpustack.api.middlewares - ERROR - Error processing streaming response: "
             "'usage'"]
    assert classify_lines(lines).kind == "engine_error"
    assert words_show_serving("Error processing streaming response: 'usage'")
    assert words_show_serving("failed to parse stream chunk")
    # words of starting up still win: a streaming setting refused while loading is a start-up failure
    assert not words_show_serving("streaming response format not supported by this config")
    assert classify_lines(["ERROR 01-02 10:00:00 [engine.py:1] cannot stream weights: disk full"]).kind \
        == "startup_failure"
