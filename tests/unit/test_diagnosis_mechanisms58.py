"""The round-58 pass (issue 11: holdout round 58's two false alarms, moved to dev), on the real lines they were
written from, beside the shapes that must keep their reading: CPython's resource tracker failing to forget a
shared-memory segment at exit, vLLM's retried look-up of safetensors metadata on the hub, torchao skipping its C++
extensions in a server that went on to serve, and torch's c10 logging with an unpadded month are no failure; the
same lines where they do mean one still are.
"""

from __future__ import annotations

from pathlib import Path

from chainlit_app.diagnostics import classify_lines
from chainlit_app.diagnostics.lineformat import parse_line

SERVED_LOG = (Path(__file__).parents[1] / "data/logs/holdout/healthy"
              / "round58h_vllmkvcache_llama31_8b_v090_lmcache_example_chat_200s.log")

TRACKER = [  # vLLM #5468 ("Benign error reported by Python multiprocessing resource_tracker")
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.10/multiprocessing/resource_tracker.py", line 209, in main',
    "    cache[rtype].remove(name)",
    "KeyError: '/psm_10b3d52e'",
]


def test_the_resource_trackers_cleanup_at_exit_is_no_failure() -> None:
    assert classify_lines(TRACKER * 3).kind == "healthy"


def test_a_key_error_raised_elsewhere_still_is_one() -> None:
    raised = [*TRACKER[:3], '  File "/x/vllm/engine/llm_engine.py", line 88, in step', "    seq = self.seqs[seq_id]",
              "KeyError: 'cmpl-1'"]
    assert classify_lines(raised).kind != "healthy"
    other = [TRACKER[0], '  File "/usr/lib/python3.10/multiprocessing/resource_tracker.py", line 209, in main',
             "    cache[rtype].remove(name)", "ValueError: bad name"]
    assert classify_lines(other).kind != "healthy"


SERVED = [  # a Kaggle notebook serving gpt-oss-120b with vLLM 0.11.2 (jxm020202/aimo3, vllm_server.txt)
    "Skipping import of cpp extensions due to incompatible torch version 2.9.0+cu128 for torchao version 0.15.0+cu128"
    "             Please see https://github.com/pytorch/ao/issues/2919 for more info",
    "(APIServer pid=130) INFO 03-02 07:08:39 [api_server.py:1977] vLLM API server version 0.11.2",
    "(APIServer pid=130) ERROR 03-02 07:08:46 [config.py:307] Error retrieving safetensors: Repo id must be in the "
    "form 'repo_name' or 'namespace/repo_name': '/kaggle/input/models/danielhanchen/gpt-oss-120b/transformers/default/"
    "1'. "
    "Use `repo_type` argument if needed., retrying 1 of 2",
    "(APIServer pid=130) ERROR 03-02 07:08:48 [config.py:305] Error retrieving safetensors: Repo id must be in the "
    "form 'repo_name' or 'namespace/repo_name': '/kaggle/input/models/danielhanchen/gpt-oss-120b/transformers/default/"
    "1'. "
    "Use `repo_type` argument if needed.",
    "[W302 07:08:56.175536091 socket.cpp:209] [c10d] The hostname of the client socket cannot be retrieved. err=-3",
    "(APIServer pid=130) INFO:     Application startup complete.",
    '(APIServer pid=130) INFO:     127.0.0.1:52914 - "POST /v1/completions HTTP/1.1" 200 OK',
]


def test_a_served_runs_retried_hub_look_up_and_torchaos_note_are_no_failure() -> None:
    assert classify_lines(SERVED).kind == "healthy"


def test_torchaos_note_alone_still_names_the_mismatch() -> None:
    # unsloth #4851: the one line `vllm --help` printed after an install that paired the wrong torch
    line = ("Skipping import of cpp extensions due to incompatible torch version. Please upgrade to torch >= 2.11.0 "
            "(found 2.10.0+cu128).")
    assert classify_lines([line]).kind == "version_mismatch"
    assert classify_lines([line, "(APIServer pid=1) INFO 03-02 07:08:39 [api_server.py:1977] vLLM API server version "
                                 "0.11.2", "Traceback (most recent call last):",
                           "ValueError: something no rule names"]).kind == "version_mismatch"


def test_a_model_the_hub_cannot_find_still_is_one() -> None:
    lines = [*SERVED[2:4], "OSError: /models/nope is not a local folder and is not a valid model identifier listed on "
                           "'https://huggingface.co/models'"]
    assert classify_lines(lines).kind == "model_not_found"


def test_torchs_c10_lines_carry_their_level() -> None:
    assert parse_line(SERVED[4]).level == "WARNING"
    old = parse_line("[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:127.0.0.1]:29500")
    assert (old.level, old.message[:6]) == ("WARNING", "[c10d]")
    nccl = parse_line("[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout")
    assert nccl.level == "ERROR"
    assert classify_lines(["[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: "
                           "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800013 milliseconds "
                           "before timing out."]).kind != "healthy"


def test_a_request_line_folded_at_a_width_stays_one_line() -> None:
    # shinrin2/vllm-kvcache's served log (held out, read right at its first time; `fold -w 80` made it read as a
    # loop): one prompt, bash's manual page, sent six times, each request line cut into 25 pieces that open with
    # whatever the prompt holds there (`       bash - GNU`, `string | file]`, `[], include_stop_str_in_output`)
    lines = SERVED_LOG.read_text().splitlines()
    folded = [line[i:i + 80] for line in lines for i in range(0, max(len(line), 1), 80)]
    assert classify_lines(folded).kind == "healthy"
    failed = [*folded, "ERROR 06-02 14:50:00 [core.py:700] RuntimeError: CUDA error: an illegal memory access was "
              "encountered"]
    assert classify_lines(failed).kind != "healthy"


def _request(n: int) -> str:
    return (f"INFO 01-01 00:00:0{n} [logger.py:39] Received request chatcmpl-{n:032x}: prompt: '<|im_start|>user\\n"
            "Hello there<|im_end|>\\n', params: SamplingParams(n=1, temperature=0.7, max_tokens=64), prompt_token_ids: "
            "None, lora_request: None.")


def test_a_failure_right_after_a_request_line_of_the_width_is_read() -> None:
    # found by the session's review: two request lines of one length are the log's longest, and so its "width"
    served = ["INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.6.3", _request(1),
              'INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK', _request(2)]
    assert classify_lines([*served, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."]).kind \
        == "out_of_memory"
    assert classify_lines([*served, "[rank0]: RuntimeError: NCCL error in: /x/ProcessGroupNCCL.cpp:1, unhandled cuda "
                                    "error"]).kind == "engine_error"


def test_torchaos_note_explains_a_torchao_failure_after_the_server_served() -> None:
    lines = [SERVED[0], "(APIServer pid=1) INFO 03-02 07:08:39 [api_server.py:1977] vLLM API server version 0.9.0",
             "(APIServer pid=1) INFO:     Application startup complete.",
             "ERROR 03-02 07:09:00 [core.py:700] EngineCore encountered a fatal error.",
             "Traceback (most recent call last):",
             '  File "/x/torchao/quantization/utils.py", line 90, in dequantize',
             "NotImplementedError: Could not run 'torchao::dequantize_tensor_core_tiled_layout' with arguments from "
             "the 'CUDA' backend."]
    assert classify_lines(lines).kind == "version_mismatch"


def test_torchaos_note_does_not_take_over_a_later_failure() -> None:
    # found by the second review: kept whenever anything else was found, the note outranked an out-of-memory error
    lines = [SERVED[0], "(APIServer pid=1) INFO:     Application startup complete.",
             '(APIServer pid=1) INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
             "ERROR 03-02 07:09:00 [core.py:700] EngineCore encountered a fatal error.",
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."]
    assert classify_lines(lines).kind == "out_of_memory"


def test_brackets_inside_a_quoted_parameter_do_not_hold_the_line_open() -> None:
    # found by the second review: `stop=['(']` counted as an open parenthesis
    served = [line.replace("SamplingParams(n=1,", "SamplingParams(n=1, stop=['('],") for line in
              ("INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.6.3", _request(1),
               'INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK', _request(2))]
    assert classify_lines([*served, "[rank0]: RuntimeError: NCCL error in: /x/ProcessGroupNCCL.cpp:1, unhandled cuda "
                                    "error"]).kind == "engine_error"


def test_torchaos_note_explains_a_later_failure_in_any_case() -> None:
    # found by the third review: "TorchAO" in the failure's words did not keep the note
    lines = [SERVED[0], "(APIServer pid=1) INFO:     Application startup complete.",
             "ERROR 03-02 07:09:00 [core.py:700] EngineCore encountered a fatal error.",
             "RuntimeError: TorchAO kernel int4_mm is not available for this build"]
    assert classify_lines(lines).kind == "version_mismatch"
