"""The general mechanisms of the round-20 pass (issue 11: the misses of holdout round 20, moved to dev), each on
the real lines it was written from and each beside the healthy shape that must stay quiet.

Clients' own sentences for an empty answer, a torch.compile time far beyond minutes, one running request holding
nearly the whole KV cache, vLLM skipping its C++ extensions for an older torch, an output of '< <', and a cut
stream whose every chunk is one lone digit or letter.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.rules_quiet_signs import (
    COMPILE_STALL_SECONDS,
    compile_far_beyond_minutes,
    one_request_fills_cache,
)
from chainlit_app.diagnostics.stuck_token_stream import stuck_on_one_token

_STATS = ("INFO 12-16 00:58:{s} llm_engine.py:649] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
          "311.1 tokens/s, Running: {r} reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: {kv}%, "
          "CPU KV cache usage: 0.0%")
_COMPILE = "(EngineCore_DP0 pid=6448) INFO 02-12 15:00:36 [monitor.py:34] torch.compile takes {t} s in total"


def test_clients_words_for_an_empty_answer() -> None:
    for line in ("Invalid API Response: The provider returned an empty or unparsable response. This is a "
                 "provider-side issue where the model failed to generate valid output",  # cline #10238
                 "Unexpected API Response: The language model did not provide any assistant messages. This may "
                 "indicate an issue with the API or the model's output.",  # roo code #1089
                 "empty content: the answer never started because the token budget went to reasoning"):  # imp #1442
        assert classify_lines([line]).kind == "empty_output", line
    assert classify_lines(["The assistant messages were saved to history."]).kind == HEALTHY


def test_a_compile_time_far_beyond_minutes_is_a_stalled_start() -> None:
    assert compile_far_beyond_minutes(_COMPILE.format(t="2222.52"))
    assert classify_lines([_COMPILE.format(t="2222.52")]).kind == "slow_or_stalled"  # vllm #34399
    for seconds in ("54.73", "180.2", f"{COMPILE_STALL_SECONDS:g}"):  # healthy starts: seconds to a few minutes
        assert not compile_far_beyond_minutes(_COMPILE.format(t=seconds))
        assert classify_lines([_COMPILE.format(t=seconds)]).kind == HEALTHY


def test_one_running_request_filling_the_kv_cache_is_a_freeze() -> None:
    # vllm #1879: 84.9 -> 91.5 -> 97.3 % with one request running, then the server froze
    lines = [_STATS.format(s="56", r=1, kv="84.9"), _STATS.format(s="57", r=1, kv="91.5"),
             _STATS.format(s="58", r=1, kv="97.3")]
    assert one_request_fills_cache(lines[2]) and not one_request_fills_cache(lines[1])
    report = classify_lines(lines)
    assert report.kind == "slow_or_stalled" and report.root is not None and report.root.line == 3
    # many requests sharing a full cache is load, not one answer that never stops; a small share is healthy
    assert not one_request_fills_cache(_STATS.format(s="58", r=12, kv="97.3"))
    assert classify_lines(lines[:2]).kind == HEALTHY


def test_cpp_extensions_skipped_for_an_older_torch() -> None:
    line = ("Skipping import of cpp extensions due to incompatible torch version. Please upgrade to torch >= "
            "2.11.0 (found 2.10.0+cu128).")  # unsloth #4851
    assert classify_lines([line]).kind == "version_mismatch"


def test_an_output_of_angle_brackets_is_degenerate() -> None:
    assert classify_lines(["< <", "", "", " <"]).kind == "degenerate_output"  # vllm #1929 (0.2.2)
    assert classify_lines(["<html>", "<body>"]).kind == HEALTHY


def test_a_cut_stream_stuck_on_one_token_is_degenerate() -> None:
    assert stuck_on_one_token(["0", "0", "0"]) and stuck_on_one_token(["m", "m", "m"])
    assert not stuck_on_one_token(["0", "m"]) and not stuck_on_one_token(["Hello"]) and not stuck_on_one_token([])
    assert not stuck_on_one_token(["1"]) and not stuck_on_one_token(["1", "1"])  # a numbered answer, cut early
    assert not stuck_on_one_token(["I"])  # an answer's first word, cut
    chunk = ['data: {"id":"chatcmpl-e85b","object":"chat.completion.chunk","model":"qwen2.5-72b-instruct-q4_K_S",'
             '"choices":[{"index":0,"delta":{"content":"0"},"logprobs":null,"finish_reason":null}]}'] * 3
    assert classify_lines(chunk).kind == "degenerate_output"  # vllm #11160 (GGUF, tp 4)
    words = [c.replace('"0"', f'"{w}"') for c, w in zip(chunk, ("Hello", " there", "!"), strict=True)]
    assert classify_lines(words).kind == HEALTHY


def test_an_error_body_whose_type_names_authentication_is_auth() -> None:
    body = ["{", '    "error": {', '        "message": "invalid x-api-key",', '        "type": "authentication_error"',
            "    },", '    "level": "error",', '    "message": "[handleAbortError] AI response error; aborting reques']
    assert classify_lines(body).kind == "auth"  # LibreChat #4154, printed one field per line
    other = [line.replace("authentication_error", "invalid_request_error").replace("invalid x-api-key", "bad input")
             for line in body]
    assert classify_lines(other).kind != "auth"


def test_a_worker_that_cannot_reach_the_gcs_is_a_connection_failure() -> None:
    line = ("[2025-06-13 01:49:41,730 E 1 1] gcs_rpc_client.h:179: Failed to connect to GCS at address "
            "10.108.0.184:6379 within 5 seconds.")  # vllm #19543: a worker given 127.0.0.1 for the head
    assert classify_lines([line]).kind == "connection"
    core = "[2026-03-03 21:12:46,736 E 46008 46008] core_worker_process.cc:232: Failed to register worker to Raylet"
    assert classify_lines([core]).kind == "startup_failure"  # Ray's other core errors keep their reading


_SSE_TRACE = [
    "'data: {\"id\":\"chatcmpl-471\",\"object\":\"chat.completion.chunk\",\"model\":\"llama3\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"I\"},\"finish_reason\":null}]}\\n'",
    "Traceback (most recent call last):",
    '  File "<string>", line 1, in <module>',
    '  File "/usr/lib/python3.9/json/__init__.py", line 346, in loads',
    "    return _default_decoder.decode(s)",
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
]


def test_json_loads_of_a_printed_sse_line_is_a_decode_error() -> None:
    report = classify_lines(_SSE_TRACE)  # MetaGPT #1340: the client kept the 'data: ' prefix
    assert report.kind == "decode_error" and report.root is not None and report.root.rule == "sse_line_parsed_as_json"
    # the same JSON error with no printed SSE line before it is not this reading
    assert classify_lines(_SSE_TRACE[1:]).kind != "decode_error"
    # a raw SSE line (not a string the client printed) followed by the error is not it either
    assert classify_lines([_SSE_TRACE[0].strip("'").removesuffix("\\n'"), *_SSE_TRACE[1:]]).kind != "decode_error"
