"""The general mechanisms that named round 19's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the shape beside it, so that a mechanism that fires on
everything, or on nothing, fails here."""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID
from chainlit_app.diagnostics.unfinished_start import step_of


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root is not None else ""


def test_an_error_output_that_is_only_the_word_unauthorized_is_auth() -> None:
    # continuedev/continue #11748: the whole error the extension showed for Ollama cloud's qwen3-coder
    assert _root(["unauthorized"]) == ("auth", "bare_unauthorized")
    assert _root(["401 Unauthorized"]) == ("auth", "bare_unauthorized")
    # the shapes beside it: a sentence that mentions the word, a setting's name
    pattern = RULES_BY_ID["bare_unauthorized"].pattern
    assert pattern.search("Retrying the request that came back unauthorized before the key was set") is None
    assert pattern.search("allow_unauthorized: false") is None


def test_tool_call_arguments_in_escape_codes_are_a_decode_error() -> None:
    # QwenLM/Qwen3 #1009: Qwen2.5-72B on vLLM 0.6.3, the location '北京, 中国' sent to the tool as codes
    lines = [
        '        "tool_calls": [',
        "            {",
        '                "function": {',
        '                    "arguments": "{\\"location\\": \\"\\\\u5317\\\\u4eac, \\\\u4e2d\\\\u56fd\\", '
        '\\"unit\\": \\"celsius\\"}",',
        '                    "name": "get_current_temperature"',
    ]
    assert _root(lines) == ("decode_error", "tool_arguments_escaped")
    # the shapes beside it: the same arguments in readable characters, and an escaped quote or Latin-1 letter
    readable = '"arguments": "{\\"location\\": \\"北京, 中国\\", \\"unit\\": \\"celsius\\"}",'
    assert classify_lines([readable]).kind == HEALTHY
    pattern = RULES_BY_ID["tool_arguments_escaped"].pattern
    assert pattern.search('"arguments": "{\\"city\\": \\"Z\\\\u00fcrich\\\\u00e9\\"}"') is None


def test_vllm_dumping_the_input_of_a_failed_step_is_an_engine_error() -> None:
    # vLLM #10389 (0.6.4.post1): the dump after a 200, with the pickling failing on an illegal memory access
    lines = [
        'INFO:     ::1:59242 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
        "INFO 11-16 10:37:53 model_runner_base.py:120] Writing input of failed execution to "
        "/tmp/err_execute_model_input_20241116-103753.pkl...",
    ]
    assert _root(lines) == ("engine_error", "failed_step_dumped")
    # the shape beside it: the pickle's name in a listing of /tmp is no failed step
    assert classify_lines(["-rw-r--r-- 1 root root 2048 input.pkl"]).kind == HEALTHY


def test_a_tensor_parallel_start_that_stops_on_the_nccl_lines_is_stalled() -> None:
    # vLLM #8087: TP 2 whose start stopped after the NCCL library's lines
    lines = [
        "(VllmWorkerProcess pid=1153488) INFO 09-03 02:15:41 multiproc_worker_utils.py:215] Worker ready; "
        "awaiting tasks",
        "(VllmWorkerProcess pid=1153488) INFO 09-03 02:15:42 utils.py:965] Found nccl from environment variable "
        "VLLM_NCCL_SO_PATH=/home/wyl/llm/qwen/nccl_2.21.5-1+cuda12.4_x86_64/lib/libnccl.so",
        "INFO 09-03 02:15:42 pynccl.py:63] vLLM is using nccl==2.21.5",
    ]
    assert _root(lines) == ("slow_or_stalled", "start_ends_nccl_setup")
    # the shape beside it: the same start going on to its next step's end, and serving
    assert classify_lines([*lines, "INFO 09-03 02:15:50 model_runner.py:1025] Loading model weights took 7.1 GB",
                           "INFO:     Uvicorn running on http://0.0.0.0:8000"]).kind == HEALTHY
    step = step_of("INFO 09-03 02:15:42 utils.py:965] Found nccl from library libnccl.so.2")
    assert step is not None and step.id == "start_ends_nccl_setup"


def test_a_stream_of_identical_empty_chunks_is_an_empty_answer_not_a_loop() -> None:
    # langchain #30580: QwQ-Plus streamed through LangChain, every printed chunk with content=''
    chunk = "content='' additional_kwargs={} response_metadata={} id='run-00c44c92-10a5-41e1-8449-94d4dd615006'"
    assert _root([chunk] * 13) == ("empty_output", "empty_chunks_repeat")
    # the shapes beside it: the same line repeated with text in it is still a loop, and two empty chunks
    # around an answer (a stream's first and last) are no finding
    looping = chunk.replace("content=''", "content='I will check the weather now.'")
    assert _root([looping] * 13) == ("degenerate_output", "printed_output_loops")
    answered = [chunk, looping.replace("check the weather now", "answer: sunny, 21 C"), chunk]
    assert classify_lines(answered).kind == HEALTHY


def test_a_model_version_above_every_supported_one_is_a_version_mismatch() -> None:
    # vLLM #23955: MiniCPM-V 4.5 on a nightly built before its support was added
    line = ("ERROR 08-29 13:40:25 [multiproc_executor.py:559] ValueError: Currently, MiniCPMV only supports "
            "versions 2.0, 2.5, 2.6, 4.0. Got version: (4, 5)")
    assert _root([line]) == ("version_mismatch", "model_version_above_supported")
    # the shapes beside it: a version between the listed ones is a checkpoint no release serves
    between = line.replace("(4, 5)", "(2, 7)")
    assert RULES_BY_ID["model_version_above_supported"].check is not None
    assert not RULES_BY_ID["model_version_above_supported"].check(between)
    assert _root([between])[0] != "version_mismatch"


def test_the_transformers_fallback_lacking_a_feature_yet_is_a_version_mismatch() -> None:
    # J1-micro #1: Qwen3 on vLLM 0.7.2, which falls back to the Transformers backend, started with LoRA
    lines = [
        "WARNING 06-01 22:29:39 utils.py:69] Qwen3ForCausalLM has no vLLM implementation, falling back to "
        "Transformers implementation. Some features may not be supported and performance may not be optimal.",
        "INFO 06-01 22:29:39 transformers.py:132] Using Transformers backend.",
        "ERROR 06-01 22:29:41 engine.py:389] TransformersModel does not support LoRA yet.",
    ]
    assert _root(lines) == ("version_mismatch", "transformers_backend_lacks_feature")
    # the shape beside it: the fallback alone, with no refusal, is a working start
    assert classify_lines(lines[:2]).kind == HEALTHY
