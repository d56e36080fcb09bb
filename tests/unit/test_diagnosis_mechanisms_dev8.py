"""The general mechanisms of the seventh generalising pass (branch diag-dev8, made beside the sixth while
holdout round 8 was collected), each on the real lines it was written from, and each with the healthy shape
next to it that must stay quiet.

Exception chains (the separator and blank ERROR lines are no errors; an unnamed later link points back at
its cause), a model file missing while serving, 'EngineCore hit an exception' placed by its stack, gin's
access lines (status and duration), a client's own request log, Go's and Node's runtime words, SIGKILL
however it is reported, Windows socket errors by their code, the Chinese gateways' words, memory a server
could not get, a pod without a GPU, a prompt too long next to a maximum, and mojibake quoted in an exception.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.chains import SEPARATOR

_P = "ERROR 06-13 11:11:23 async_llm_engine.py:44]"
# vLLM #5199: a LoRA adapter given as a hub id; V0 logs the chain with an ERROR prefix on every line
LORA_CHAIN = [
    f"{_P}   File \"/usr/local/lib/python3.10/dist-packages/vllm/lora/models.py\", line 314, in from_local_checkpoint",
    f"{_P}     with open(lora_config_path) as f:",
    f"{_P} FileNotFoundError: [Errno 2] No such file or directory: "
    "'jashing/tinyllama-colorist-lora/adapter_config.json'",
    f"{_P} ",
    f"{_P} The above exception was the direct cause of the following exception:",
    f"{_P} ",
    f"{_P} Traceback (most recent call last):",
    f"{_P}   File \"/usr/local/lib/python3.10/dist-packages/vllm/engine/async_llm_engine.py\", line 39, in "
    "_raise_exception_on_finish",
    f"{_P}     task.result()",
    f"{_P}   File \"/usr/local/lib/python3.10/dist-packages/vllm/engine/async_llm_engine.py\", line 517, in "
    "run_engine_loop",
    f"{_P}     has_requests_in_progress = await asyncio.wait_for(",
]


def _rules(lines: list[str]) -> list[str]:
    return [f.rule for f in classify_lines(lines).findings]


def test_chain_separator_and_blank_error_lines_are_not_errors() -> None:
    assert SEPARATOR.match("The above exception was the direct cause of the following exception:")
    assert SEPARATOR.match("During handling of the above exception, another exception occurred:")
    report = classify_lines(LORA_CHAIN)
    flagged = {f.line for f in report.findings}
    assert not flagged & {4, 5, 6}, [f.to_json() for f in report.findings]


def test_model_file_missing_while_serving_is_the_engines() -> None:
    report = classify_lines(LORA_CHAIN)
    assert report.kind == "engine_error"
    assert report.root is not None and report.root.line == 3 and report.root.basis == "phase"
    # the same missing file before the server is ready is the model's files not there (model_not_found since the
    # round-16 pass: a folder without a file it needs is a model not found where it was looked for)
    start = ["INFO 06-13 11:10:00 api_server.py:1] vLLM API server version 0.5.0", LORA_CHAIN[2]]
    assert classify_lines(start).kind == "model_not_found"


def test_an_unnamed_later_link_points_back_at_its_cause() -> None:
    chain = [
        "Traceback (most recent call last):",
        '  File "/x/httpx/_transports/default.py", line 69, in map_httpcore_exceptions',
        "    yield",
        "httpx.ReadTimeout: timed out",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/x/app/agent.py", line 69, in run',
        "    step()",
        "app.errors.AgentStepFailed: step 3 failed",
    ]
    report = classify_lines(chain)
    assert report.kind == "slow_or_stalled"
    later = [f for f in report.findings if f.line == 11]
    assert later and later[0].role == "wrapper" and later[0].points_to == 4


def test_gin_access_lines_are_read_by_status_and_duration() -> None:
    # ollama #8387: requests that hang half an hour, then 500
    hung = ('Dec 11 09:58:58 quorra ollama[1543654]: [GIN] 2024/12/11 - 09:58:58 | 500 |        29m59s |      '
            '10.0.0.123 | POST     "/api/chat"')
    assert _rules([hung]) == ["gin_status_hung"]
    assert classify_lines([hung]).kind == "slow_or_stalled"
    # ollama #8983: a quick 500
    quick = '[GIN] 2025/02/10 - 11:20:45 | 500 | 51.787708541s |       127.0.0.1 | POST     "/api/chat"'
    assert classify_lines([quick]).kind == "engine_error"
    # one-api #1553: its request id column, then 401 and 403
    denied = ("2024-06-23 03:55:07 [GIN] 2024/06/22 - 19:55:07 | 2024062219550783290268839514798 | 401 |     "
              "423.215µs |      172.22.0.7 |    POST /v1/chat/completions")
    assert _rules([denied]) == ["gin_status_auth"]
    # healthy neighbours: successful requests, however long
    ok = ['[GIN] 2025/02/10 - 11:20:29 | 200 | 35.684791792s |       127.0.0.1 | POST     "/api/chat"',
          '2025-01-19 19:57:37 [GIN] 2025/01/19 - 17:57:37 | 200 |         8m44s |      172.22.0.3 | '
          'POST     "/api/pull"',  # ollama-intel-gpu #22
          '[GIN] 2024/12/11 - 09:58:58 | 200 |        29m59s |      10.0.0.123 | POST     "/api/chat"']
    assert classify_lines(ok).kind == HEALTHY


def test_go_and_node_runtime_words() -> None:
    assert classify_lines(["Error: ollama: context deadline exceeded"]).kind == "slow_or_stalled"  # GoClaw #926
    assert classify_lines(["Error: read ECONNRESET"]).kind == "connection"  # vLLM #2484
    assert classify_lines(["ctx, cancel := context.WithTimeout(ctx, deadline)"]).kind == HEALTHY


def test_sigkill_however_it_is_reported() -> None:
    # ScaleLLM #38
    assert _rules(["scalellm          | ./entrypoint.sh: line 28:     7 Killed                  "
                   "LD_LIBRARY_PATH=/app/lib:$LD_LIBRARY_PATH /app/bin/scalellm $ARGS \"$@\""]) == ["killed_exit_137"]
    assert classify_lines(["scalellm exited with code 137"]).kind == "out_of_memory"
    assert classify_lines(["scalellm exited with code 0", "Exit Code: 0"]).kind == HEALTHY


def test_windows_socket_errors_by_their_code() -> None:
    # Langchain-Chatchat #2985 (Chinese Windows); the bare codes in any language
    assert classify_lines(["[WinError 10061] 由于目标计算机积极拒绝，无法连接。"]).kind == "connection"
    assert classify_lines(["[WinError 10054] 远程主机强迫关闭了一个现有的连接。"]).kind == "connection"
    assert classify_lines(["listening on port 10061"]).kind == HEALTHY


def test_chinese_gateway_words() -> None:
    # one-api #1553
    assert classify_lines(["2024-06-23 03:55:07 [ERR] 2024/06/22 - 19:55:07 | 2024062219550783290268839514798 | "
                           "无效的令牌"]).kind == "auth"
    assert classify_lines(["该令牌无权使用模型：qwen2"]).kind == "auth"
    # FastGPT #2455
    assert classify_lines(["undefined 当前分组 default 下对于模型 xxxx 无可用渠道"]).kind == "model_not_found"
    # a healthy Chinese start-up notice (Langchain-Chatchat prints these)
    assert classify_lines(["2024-04-25 14:33:09,572 - startup.py[line:655] - INFO: 正在启动服务："]).kind == HEALTHY


def test_prompt_too_long_next_to_a_maximum() -> None:
    line = "ValueError: Prompt is too long, max tokens supported is 226 or less, got 303"  # CogVideoXWrapper #204
    assert _rules([line]) == ["prompt_too_long_for_maximum"]
    # a maximum of something other than tokens or length is not the model's context
    assert classify_lines(["WARNING: prompt is too long to print in full; max 200 characters shown"]).kind == HEALTHY
    assert classify_lines(["the answer is too long for the maximum of 200 words"]).kind == HEALTHY


def test_mojibake_quoted_in_an_exception_is_a_decode_error() -> None:
    line = "KeyError: '<ï½\x9cendâ\x96\x81ofâ\x96\x81sentenceï½\x9c>'"  # ex-ui #22 (DeepSeek's EOS piece)
    assert _rules([line]) == ["exception_quotes_mojibake"]
    assert classify_lines([line]).kind == "decode_error"
    # the same piece decoded right is an ordinary KeyError (no mojibake): not a decode error
    assert classify_lines(["KeyError: '<｜end▁of▁sentence｜>'"]).kind != "decode_error"
    # accented words in an exception are not mojibake
    assert classify_lines(["ValueError: café déjà vu: élève"]).kind != "decode_error"


def test_engine_core_hit_an_exception_is_placed_by_its_stack() -> None:
    """vLLM 0.8's run_engine_core logs 'EngineCore hit an exception' for a failed start as for a crash while
    serving: the stack says which (EngineCoreProc(...) and _initialize_kv_caches: a start; run_busy_loop:
    serving), not the words."""
    p = "ERROR 11-26 14:34:34 [core.py:387]"
    site = "/root/miniconda3/envs/apirefcheck/lib/python3.10/site-packages/vllm/v1/engine/core.py"
    start = [  # vLLM #29481: a second instance on the same GPU fails while sizing its KV cache
        f"{p} EngineCore hit an exception: Traceback (most recent call last):",
        f"{p}   File \"{site}\", line 378, in run_engine_core",
        f"{p}     engine_core = EngineCoreProc(*args, **kwargs)",
        f"{p}   File \"{site}\", line 320, in __init__",
        f"{p}     super().__init__(vllm_config, executor_class, log_stats)",
        f"{p}   File \"{site}\", line 71, in __init__",
        f"{p}     self._initialize_kv_caches(vllm_config)",
    ]
    assert classify_lines(start).kind == "startup_failure"
    serving = [start[0], f"{p}   File \"{site}\", line 378, in run_engine_core", f"{p}     engine_core.run_busy_loop()",
               f"{p}   File \"{site}\", line 400, in run_busy_loop", f"{p}     self._process_engine_step()",
               f"{p} ValueError: a message no rule knows"]
    assert classify_lines(serving).kind == "engine_error"


def test_memory_a_server_could_not_get_and_a_pod_without_a_gpu() -> None:
    assert _rules(["RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."]) == \
        ["not_enough_memory"]  # SGLang #4330
    unschedulable = ("FailedScheduling  53s (x3 over 119s)  default-scheduler   0/2 nodes are available: "
                     "2 Insufficient nvidia.com/gpu, 2 node(s) didn't match node selector.")  # KServe #794
    assert classify_lines([unschedulable]).kind == "startup_failure"
    # healthy neighbours: a node that advertises its GPUs; memory that was enough
    assert classify_lines(["  nvidia.com/gpu:                 1",
                           "INFO: enough memory for 4096 tokens; not enough room to print the table"]).kind == HEALTHY


def test_a_gateways_429_in_gin_and_in_chinese() -> None:
    # FastGPT #1595 (one-api in front of the embedding model)
    gin = ("[GIN] 2024/05/25 - 02:20:27 | 2024052502202733503658994402104 | 429 |   94.358928ms |    192.168.96.6 "
           "|    POST /v1/embeddings")
    assert _rules([gin]) == ["gin_status_timeout"]
    assert classify_lines(["[ERR] 2024/05/25 - 02:20:27 | 2024052502202733503658994402104 | relay error (channel "
                           "#5): 当前分组上游负载已饱和，请稍后再试"]).kind == "slow_or_stalled"
    assert classify_lines(["[INFO] 2024/05/25 - 02:20:27 | 2024052502202733673623654963543 | user 1 has enough "
                           "quota 499999999437192, trusted and no need to pre-consume"]).kind == HEALTHY


def test_a_clients_own_request_log_is_read_by_its_status() -> None:
    # chat.publicai.co #9: httpx's request log under the openai library, 500 twice then 200
    lines = ['2025-09-05 15:26:55,667 - INFO - HTTP Request: POST https://api.publicai.co/v1/chat/completions '
             '"HTTP/1.1 500 Internal Server Error"',
             '2025-09-05 15:27:08,567 - INFO - HTTP Request: POST https://api.publicai.co/v1/chat/completions '
             '"HTTP/1.1 200 OK"']
    assert classify_lines(lines).kind == "engine_error"
    assert classify_lines(lines[1:]).kind == HEALTHY
    # Plush-for-ComfyUI #152: a base URL without /v1
    assert classify_lines(['HTTP Request: POST http://127.0.0.1:11434/chat/completions "HTTP/1.1 404 Not Found"'
                           ]).kind == "model_not_found"


def test_no_5xx_in_a_client_log_or_gin_line_is_healthy() -> None:
    """The shape, for every 5xx (the real lines above carry 500): never healthy while a 5xx is in sight."""
    for status in ("502 Bad Gateway", "503 Service Unavailable", "504 Gateway Timeout"):
        code = status.split()[0]
        client = f'HTTP Request: POST http://localhost:8000/v1/chat/completions "HTTP/1.1 {status}"'
        gin = f'[GIN] 2025/02/10 - 11:20:45 | {code} |  1.2s |       127.0.0.1 | POST     "/api/chat"'
        assert classify_lines([client]).kind != HEALTHY, status
        assert classify_lines([gin]).kind != HEALTHY, status


def test_chinese_client_words_for_a_server_out_of_reach_or_too_slow() -> None:
    # Langchain-Chatchat #1165 and #4096
    assert classify_lines(["依据源文件重建向量库失败：无法连接API服务器，请确认已执行python server\\api.py"]).kind == \
        "connection"
    assert _rules(["请求超时"]) == ["zh_timed_out"]
    assert classify_lines(["请求超时时间: 600", "请求超时: 60"]).kind == HEALTHY  # a setting, not a timeout
    # its healthy start-up notices in Chinese
    assert classify_lines(["2024-04-25 14:33:09,572 - startup.py[line:655] - INFO: 正在启动服务：",
                           "2024-04-25 14:33:09,572 - startup.py[line:656] - INFO: 如需查看 llm_api 日志，请前往 "
                           "/home/langchain/Langchain-Chatchat-master/logs"]).kind == HEALTHY


def test_a_5xx_next_to_its_reason_phrase_in_any_clients_words() -> None:
    assert _rules(["POST http://localhost:5173/api/llmcall 500 (Internal Server Error)"]) == \
        ["status_with_reason_phrase"]  # bolt.diy #1550
    # the shapes of other clients (Spring, .NET, Rust's reqwest): never healthy
    for line in ("org.springframework.web.client.HttpServerErrorException$InternalServerError: 500 Internal Server "
                 "Error: [no body]",
                 "System.Net.Http.HttpRequestException: Response status code does not indicate success: 500 "
                 "(Internal Server Error).",
                 "Error: HTTP status server error (500 Internal Server Error) for url (http://localhost:8000/v1)"):
        assert classify_lines([line]).kind == "engine_error", line
    # uvicorn's own 5xx line keeps its rule; a 200 and a 4xx phrase are not 5xx
    assert _rules(['INFO:     127.0.0.1:5555 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error']) \
        == ["access_5xx"]
    assert classify_lines(["GET http://localhost:5173/api/models 200 (OK)"]).kind == HEALTHY
