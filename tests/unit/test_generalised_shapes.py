"""The general mechanisms that named round 4's misses, each on real lines (the threads are in
tests/data/logs/dev/SOURCES.md) and on the healthy shape next to it, so that a mechanism that fires on
everything fails here."""

from __future__ import annotations

from pathlib import Path

from chainlit_app.diagnostics import HEALTHY, classify_lines

DEV = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"

ACCESS_500 = 'INFO:     127.0.0.1:45442 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error'


def test_printed_lines_that_repeat_as_a_block_are_a_loop() -> None:
    block = ["Let me write.", "Go.", "Writing.", "OK."]  # workbuddy2api-intl #7
    report = classify_lines(block * 2)
    assert report.kind == "degenerate_output" and report.root is not None and report.root.line == 8
    assert classify_lines(block).kind == HEALTHY  # shown once
    # a log line between the two blocks: not one printout
    log_line = "INFO 02-12 15:20:24 logger.py:37] Added request chatcmpl-1."
    assert classify_lines([*block, log_line, *block]).kind == HEALTHY
    assert classify_lines(["Yes.", "No."] * 2).kind == HEALTHY  # two short lines need three rounds


def test_a_run_of_exclamation_marks_is_token_zero() -> None:
    line = ("Once upon a time, there was a young girl named Samantha who lived with her parents in a small town. "
            "Samantha had always dreamed of traveling the world and experiencing!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!")
    assert classify_lines([line]).kind == "decode_error"  # ipex-llm #9970
    assert classify_lines(["What a wonderful day it has been for all of us!!! Thank you!!"]).kind == HEALTHY


def test_a_generate_body_wrapped_by_a_paste_is_judged_as_an_answer() -> None:
    # vLLM #577, as posted: the paste wrapped the /generate body in the middle of its strings
    wrapped = (DEV / "decode_error" / "round4_gh577_open_llama_wrong_llama_tokenizer_garbled_generate.log"
               ).read_text().splitlines()
    assert len(wrapped) == 3
    report = classify_lines(wrapped)
    assert report.kind == "decode_error" and report.root is not None and report.root.rule == "body_decode_error"
    fine = ['{"text": ["San Francisco is a city in northern California, known for the', ' Golden Gate Bridge."]}']
    assert classify_lines(fine).kind == HEALTHY


def _stats_line(prompt: float, gen: float, running: int, pending: int, kv: float) -> str:
    return (f"2024-12-23 18:28:10 - vllm.engine.metrics - INFO - Avg prompt throughput: {prompt} tokens/s, Avg "
            f"generation throughput: {gen} tokens/s, Running: {running} reqs, Swapped: 0 reqs, Pending: {pending} "
            f"reqs, GPU KV cache usage: {kv}%, CPU KV cache usage: 0.0%.")


def test_requests_queued_beside_an_almost_empty_cache() -> None:
    assert classify_lines([_stats_line(0.0, 45.7, 1, 3, 3.1)]).kind == "slow_or_stalled"  # vLLM #11517
    assert classify_lines([_stats_line(0.0, 0.0, 1, 3, 3.1)]).kind == HEALTHY  # one long step: nothing done yet
    assert classify_lines([_stats_line(0.0, 45.7, 1, 3, 60.0)]).kind == HEALTHY  # memory may hold them
    assert classify_lines([_stats_line(512.0, 45.7, 1, 3, 3.1)]).kind == HEALTHY  # prompts are admitted


def test_an_empty_answer_is_explained_by_the_context_warning() -> None:
    empty = ("CompletionOutput(index=0, text='', token_ids=[], cumulative_logprob=0.0, logprobs=[], "
             "finish_reason=length)")
    warning = ("WARNING 07-28 03:23:18 scheduler.py:196] Input prompt (2716 tokens) is too long and exceeds "
               "limit of 4096")
    assert classify_lines([empty, warning]).kind == "context_length"  # vLLM #525
    assert classify_lines([empty]).kind == "empty_output"


def test_a_status_in_a_clients_words() -> None:
    assert classify_lines(['Dify 401. {"code": "unauthorized", "message": "Access token is invalid", "status": 401}'
                           ]).kind == "auth"  # AstrBot #971
    assert classify_lines(["Credentials validation failed with status code 403"]).kind == "auth"  # a symptom alone
    # 403 is weak: the body's own words (a gateway's missing model) decide
    lines = ["HTTP/1.1 403 Forbidden.", '{"error":{"message":"Model not found","code":403,"type":"Forbidden"}}']
    assert classify_lines(lines).kind == "model_not_found"
    assert classify_lines(["Error: 401 status code (no body)"]).kind == "auth"  # openai-node's words
    assert classify_lines(["urllib.error.HTTPError: HTTP Error 401: Unauthorized"]).kind == "auth"
    assert classify_lines(["<html><head><title>504 Gateway Time-out</title></head>"]).kind == "slow_or_stalled"
    assert classify_lines(["<center><h1>502 Bad Gateway</h1></center>"]).kind == "connection"  # nginx's page
    # a Prometheus label is no status a client saw
    metric = 'http_requests_total{handler="/v1/chat/completions",method="POST",status="500"} 0.0'
    assert classify_lines([metric]).kind == HEALTHY
    # access lines keep their own rule (a wrapper pointing at the server's cause)
    report = classify_lines([ACCESS_500])
    assert report.root is not None and report.root.rule == "access_5xx"


def test_a_jinja_statement_quoted_in_an_error_names_the_template() -> None:
    line = ('API request failed with status 500: {"error":{"code":500,"message":"Value is not callable: null at row '
            "49, column 79:\\n                {%- set content = (m_content.split('</think>')|last)"
            ".lstrip('\\n') %}\"}}")
    assert classify_lines([line]).kind == "chat_template"  # jan #6123
    banner = "INFO 11-30 14:00:01 [chat_utils.py:1] Using supplied chat template: {% for message in messages %}"
    assert classify_lines([banner]).kind == HEALTHY


def test_bind_errors_by_errno() -> None:
    errno99 = ("ERROR:    [Errno 99] error while attempting to bind on address ('::1', 21002, 0, 0): cannot assign "
               "requested address")  # FastChat #3185
    errno98 = ("ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already "
               "in use")
    assert classify_lines([errno99]).kind == "startup_failure"
    assert classify_lines([errno98]).kind == "port_in_use"


def test_a_launch_that_timed_out_is_a_start_up_failure() -> None:
    launch = ("2024-10-25 12:21:14,974 xinference.api.restful_api 37502 ERROR    [address=172.22.149.188:45585, "
              "pid=43525] Timed out after 601 seconds waiting for clients. 1/2 clients joined.")  # Xinference #2486
    assert classify_lines([launch]).kind == "startup_failure"
    assert classify_lines(["openai.APITimeoutError: Request timed out."]).kind == "slow_or_stalled"


def test_kv_cache_memory_below_zero() -> None:
    assert classify_lines(["Available KV cache memory: -0.87 GiB"]).kind == "out_of_memory"  # vllm-ascend #9372
    assert classify_lines(["INFO 05-01 10:00:00 [gpu_worker.py:1] Available KV cache memory: 3.21 GiB"]).kind == HEALTHY


def test_the_container_runtime_refuses_an_image_for_a_newer_cuda() -> None:
    lines = [  # vLLM #5635
        "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
        "runtime create failed: runc create failed: unable to start container process: error during container init: "
        "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a "
        "newer version, or use an earlier cuda container: unknown.",
    ]
    assert classify_lines(lines).kind == "version_mismatch"
    assert classify_lines(lines[:1]).kind == "startup_failure"


def test_a_build_that_does_not_fit_explains_an_unrecognised_start_up_failure() -> None:
    # vLLM #9713: no compiled vllm._C on Windows, then the model registry's subprocess fails
    log = DEV / "version_mismatch" / "round4_gh9713_windows_no_vllm_c_inspect_architecture_failed.log"
    report = classify_lines(log.read_text().splitlines())
    assert report.kind == "version_mismatch"
    # a start-up failure a rule names keeps its name beside the same warning
    warning = ("WARNING 10-26 16:13:52 _custom_ops.py:19] Failed to import from vllm._C with "
               "ModuleNotFoundError(\"No module named 'vllm._C'\")")
    named = "ValueError: User-specified max_model_len (200000) is greater than the derived max_model_len"
    assert classify_lines([warning, named]).kind == "startup_failure"


def test_an_offline_progress_bar_left_at_zero() -> None:
    init = ("INFO 04-09 02:07:01 [core.py:162] init engine (profile, create kv cache, warmup model) took "
            "68.69 seconds")
    zero = ("Processed prompts:   0%|                   | 0/1 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, "
            "output: 0.00 toks/s]")  # vLLM #16301: the excerpt's last line
    done = ("Processed prompts: 100%|██████████| 1/1 [00:02<00:00,  2.10s/it, est. speed input: 9.51 toks/s, "
            "output: 60.87 toks/s]")
    report = classify_lines([init, zero])
    assert report.kind == "slow_or_stalled" and report.root is not None and report.root.line == 2
    assert classify_lines([init, zero, done]).kind == HEALTHY
    assert classify_lines([init, f"{zero}\r{done}"]).kind == HEALTHY  # tqdm's updates pasted on one line


def test_an_error_response_is_never_healthy() -> None:
    # vLLM's own error body: no rule knows the message; its type and status name it, else the phase
    body = ("{\"object\":\"error\",\"message\":\"[{'type': 'extra_forbidden', 'loc': ('body', 'foo'), 'msg': "
            "'Extra inputs are not permitted'}]\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}")
    assert classify_lines([body]).kind == "engine_error"
    limited = '{"error": {"message": "Rate limit exceeded", "type": "rate_limit_error", "code": 429}}'
    assert classify_lines([limited]).kind == "slow_or_stalled"
    assert classify_lines(['{"error": "upstream connect error or disconnect/reset before headers"}']).kind != HEALTHY
    assert classify_lines(['{"id": "x", "object": "list", "data": []}']).kind == HEALTHY
    assert classify_lines(["Error: 429 Rate limit reached for requests"]).kind == "slow_or_stalled"  # openai-node


def test_an_answer_of_one_symbol_is_broken_output_a_printed_banner_is_not() -> None:
    answer = ('{"choices":[{"message":{"role":"assistant","content":"@@@@@@@@@@@@@@@@@@@@@@@@@@"},'
              '"finish_reason":"stop"}]}')  # the shape of ollama #9345's '@@@@' answer, as a body
    assert classify_lines([answer]).kind == "decode_error"
    banner = "=" * 50
    assert classify_lines([banner, "Results", banner]).kind == HEALTHY
