"""The general mechanisms that named round 18's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the shape beside it, so that a mechanism that fires on
everything, or on nothing, fails here."""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answers import judge_answer
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID
from chainlit_app.diagnostics.rules_shown import utf8_read_as_cp437
from chainlit_app.diagnostics.token_stutter import recall_stutters, repeated_tokens_in_copy


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root is not None else ""


def test_a_streamed_chunk_cut_mid_field_is_a_decode_error() -> None:
    # zai-org/GLM-5 #66: Bun's JSON.parse of an SSE event cut inside "object", the next event glued into it
    lines = [
        'JSON parsing failed: Text: {"id":"20260430204055297b97348c8e426c","created":1777552855,"object":"chat.c'
        'data: {"id":"2026043020420635c6abc56a2741ac",',
        '"created":1777552926,"object":"chat.completion.chunk","model":"glm-5.1","choices":[{"index":0,"delta":'
        '{"role":"assistant","content":"11"}}]}',
        "Error message: JSON Parse error: Expected '}'",
    ]
    assert _root(lines) == ("decode_error", "stream_chunk_cut")
    # the shapes beside it: a chunk that parsed, and a JSON config value named 'Expected'
    assert classify_lines(['data: {"id":"x","object":"chat.completion.chunk","choices":[]}']).kind == HEALTHY
    assert RULES_BY_ID["stream_chunk_cut"].pattern.search('{"Expected": "}"}') is None


def test_utf8_shown_in_code_page_437_is_a_decode_error_and_a_drawn_tree_is_not() -> None:
    # ollama-js #168: a Spanish answer printed on a Windows console
    line = "assistant: Hola! ┬┐C├│mo est├ís?"
    assert utf8_read_as_cp437(line)
    assert _root([line]) == ("decode_error", "utf8_read_as_code_page")
    # the shapes beside it: a tree drawn with box characters, and one stray pair
    tree = ["├── config.json", "├── model.safetensors", "└── tokenizer.json", "┬─┬ ├─┤"]
    assert not any(utf8_read_as_cp437(t) for t in tree)
    assert classify_lines(tree).kind == HEALTHY
    assert not utf8_read_as_cp437("est├ís")  # one letter only


def test_an_ollama_answer_that_only_loaded_the_model_is_empty() -> None:
    # langchain-mcp-adapters #111: ChatOllama's AIMessage with empty content and done_reason 'load'
    line = ("{'messages': [AIMessage(content='', additional_kwargs={}, response_metadata={'model': 'qwen2.5', "
            "'created_at': '2025-04-24T09:13:29.983043Z', 'done': True, 'done_reason': 'load', "
            "'total_duration': None, 'model_name': 'qwen2.5'}, id='run-6a897b3a-0')]}")
    assert _root([line]) == ("empty_output", "answer_only_loaded_model")
    # the shape beside it: the same message with an answer and done_reason 'stop'
    answered = line.replace("content=''", "content='Hello!'").replace("'load'", "'stop'")
    assert _root([answered])[1] != "answer_only_loaded_model"


def test_tokens_written_twice_by_speculative_decoding_are_degenerate() -> None:
    # vllm-ascend PR #9951: n-gram drafts on NPU, a copy of the sentence with its own words inserted
    text = ("The cat sits on the mat. The cat sits on the mat. The cat sits on the mat. The cat sits on the mat. "
            "The cat sits on the mat. The cat sits on the cat the mat. The cat sits on the mat. on the mat.")
    assert repeated_tokens_in_copy(text)
    verdict = judge_answer(text, "stop", 56)
    assert verdict is not None and verdict.kind == "degenerate_output"
    # the shapes beside it: a sentence repeated exactly (a drill), and sentences that differ in new words
    assert not repeated_tokens_in_copy("Repeat after me. " * 5)
    assert not repeated_tokens_in_copy("The cat sits on the mat. " * 3 + "The dog sits on the big mat.")
    assert judge_answer("The cat sits on the mat. " * 5, "stop", 30) is None


def test_a_recall_that_stutters_is_degenerate_and_a_wrong_recall_is_not() -> None:
    # vLLM #40831: TurboQuant KV cache with n-gram drafts, the needle test's recalls
    lines = [
        "[7/7] Long-context needle (10K / 30K / 60K / 90K) ...",
        "    ✗  29320 tokens: expected 'sapphire narwhal 77', got 'sapphire '",
        "    ✗  58569 tokens: expected 'silver iguana 24', got 'silver ig iguana '",
        "    ✗  91070 tokens: expected 'violet chinchilla 67', got 'violet violet chinchinchillailla 6 66 '",
    ]
    assert recall_stutters(lines[2]) and recall_stutters(lines[3])
    assert _root(lines) == ("degenerate_output", "recall_stutters")
    # the shapes beside it: a cut recall, a wrong one, and expected words that repeat themselves
    assert not recall_stutters(lines[1])
    assert not recall_stutters("expected 'silver iguana 24', got 'golden lizard 31'")
    assert not recall_stutters("expected 'bye bye 2', got 'bye bye 2 '")


def test_the_async_engines_task_finished_unexpectedly_is_an_engine_error() -> None:
    # runpod-workers/worker-vllm #68: the handler relays AsyncEngineDeadError's words, the cause cut off
    lines = [
        '  "error": "handler: Task finished unexpectedly. This should never happen! Please open an issue on '
        'Github. See stack trace above for the actual cause.',
        "traceback: Traceback (most recent call last):",
        '  File \\"/vllm-installation/vllm/engine/async_llm_engine.py\\", line 29, in _raise_exception_on_finish',
        "    task.result()",
    ]
    assert _root(lines) == ("engine_error", "engine_dead")


def test_a_model_hub_cache_file_missing_on_a_worker_is_model_not_found() -> None:
    # vLLM #2056: a Ray worker on another node without the ModelScope download
    line = ("No such file or directory: '/home/ray/.cache/modelscope/hub/qwen/Qwen-14B-Chat/-home-ray-.cache-"
            "modelscope-hub-qwen-Qwen-14B-Chat.lock'")
    assert _root([line]) == ("model_not_found", "hub_cache_file_missing")
    # the shape beside it: a missing file outside any hub cache
    assert _root(["No such file or directory: '/tmp/ray/session_latest/logs'"])[1] != "hub_cache_file_missing"


def test_a_c10d_store_the_client_cannot_reach_is_a_connection_failure() -> None:
    # TRL #3736: vllm-serve answered 200, the GRPO trainer's weight-sync client never reached its TCPStore
    lines = [
        'INFO:     127.0.0.1:38010 - "POST /init_communicator/ HTTP/1.1" 200 OK',
        "W715 09:24:02.297720466 TCPStore.cpp:330] [c10d] TCP client failed to connect/validate to host "
        "0.0.0.0:51216 - retrying (try=0, timeout=300000ms, delay=59547ms): The client socket has timed out after "
        "300000ms while trying to connect to (0.0.0.0, 51216).",
    ]
    assert _root(lines) == ("connection", "c10d_store_unreachable")
    # the shape beside it: a store that answered
    answered = "I0715 09:24:02 TCPStore.cpp:120] [c10d] client connected to 10.0.0.2:51216"
    assert classify_lines([answered]).kind == HEALTHY


def test_nccls_last_cuda_error_out_of_memory_is_out_of_memory() -> None:
    # vLLM #18446: a V1 worker's NCCL 'unhandled cuda error' whose last CUDA error is out of memory
    lines = [
        "(VllmWorker rank=7 pid=240) torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/"
        "distributed/c10d/NCCLUtils.cpp:133, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL "
        "version 2.21.5",
        "(VllmWorker rank=7 pid=240) ncclUnhandledCudaError: Call to CUDA function failed.",
        "(VllmWorker rank=7 pid=240) Last error:",
        "(VllmWorker rank=7 pid=240) Cuda failure 'out of memory'",
    ]
    assert _root(lines)[0] == "out_of_memory"
    # the shape beside it: another last error is not out of memory
    assert RULES_BY_ID["nccl_last_error_oom"].pattern.search("Cuda failure 'invalid device ordinal'") is None


def test_nvml_refusing_a_device_index_is_a_startup_failure_wherever_it_was_raised() -> None:
    # vLLM #9865: the platform module asks NVML for a physical index it does not accept
    lines = [
        "ERROR 01-22 15:13:59 worker_base.py:467] Traceback (most recent call last):",
        'ERROR 01-22 15:13:59 worker_base.py:467]   File "/usr/local/lib/python3.12/dist-packages/vllm/platforms/'
        'cuda.py", line 159, in get_device_capability',
        "ERROR 01-22 15:13:59 worker_base.py:467]     handle = pynvml.nvmlDeviceGetHandleByIndex(physical_device_id)",
        'ERROR 01-22 15:13:59 worker_base.py:467]   File "/usr/local/lib/python3.12/dist-packages/pynvml.py", line '
        "979, in _nvmlCheckReturn",
        "ERROR 01-22 15:13:59 worker_base.py:467]     raise NVMLError(ret)",
        "ERROR 01-22 15:13:59 worker_base.py:467] pynvml.NVMLError_InvalidArgument: Invalid Argument",
    ]
    assert _root(lines) == ("startup_failure", "nvml_invalid_device_index")
    # the shape beside it: NVML without a driver is another error
    assert RULES_BY_ID["nvml_invalid_device_index"].pattern.search("pynvml.NVMLError_LibraryNotFound") is None


def test_a_device_library_without_the_plugins_op_is_a_version_mismatch() -> None:
    # vllm-ascend #218: torch_npu older than the op vllm-ascend calls
    line = "ERROR 03-02 22:42:58 [engine.py:409] module 'torch_npu' has no attribute '_npu_rotary_embedding'"
    assert _root(["INFO 03-02 22:42:57 [loader.py:422] Loading weights took 0.84 seconds", line]) == (
        "version_mismatch", "device_library_lacks_op")
    # the shape beside it: a missing attribute of the user's own module is no version mismatch of this kind
    assert _root(["AttributeError: module 'my_plugin' has no attribute 'run'"])[1] != "device_library_lacks_op"
