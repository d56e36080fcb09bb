"""The round-42 pass (issue 11: holdout round 42's failure called healthy, moved to dev), on the real lines it was
written from, beside the shapes that must keep their reading: a log line holding unbalanced braces is a line, not
the first line of a pretty-printed JSON body that swallows the traceback after it; and a gRPC servicer's
`Generate` handler is serving.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

P = "ERROR 08-06 23:49:35 grpc_server.py:145] "
ECHO = ("ERROR 08-06 23:49:35 logs.py:91] generate{input=[b'<|user|>\\\\nThe future of ai is'] prefix_id= adapter_id= "
        "input_chars=[28] params=stopping { max_new_tokens: 16 } response { generated_tokens: true token_logprobs: "
        "true } decoding { repetition_penalty: 1.0 }: '>=' not supported between instances of 'NoneType' and 'int'")
TGIS = [ECHO, P + "Generate failed", P + "Traceback (most recent call last):",
        P + '  File "/w/site-packages/vllm_tgis_adapter/grpc/grpc_server.py", line 162, in func_with_log',
        P + "    return await func(*args, **kwargs)",
        P + '  File "/w/site-packages/vllm_tgis_adapter/grpc/grpc_server.py", line 275, in Generate',
        P + "    async for i, res in result_generator:",
        P + '  File "/w/site-packages/vllm/utils.py", line 346, in']


def test_unbalanced_braces_in_a_line_do_not_swallow_the_traceback_after_it() -> None:
    # vLLM #7232: read as the start of a body, the echo swallowed every line after it and the log read healthy
    assert classify_lines(TGIS).kind == "engine_error"


def test_pretty_printed_bodies_still_fold() -> None:
    body = ["{", '  "id": "cmpl-1",', '  "object": "chat.completion",',
            '  "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}],',
            '  "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}', "}"]
    assert classify_lines(body).kind == "empty_output"
    labelled = ['data: {"id": "cmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": '
                '{"role": "assistant", "content": ""}, "finish_reason": "stop"}],',
                '"usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}']
    assert classify_lines(labelled).kind == "empty_output"
