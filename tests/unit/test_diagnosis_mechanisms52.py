"""The round-52 pass (issue 11: holdout round 52's false alarms, moved to dev), on the real lines it was written
from, beside the shapes that must keep their reading: vLLM's ERROR line refusing FlashAttention 2 on a GPU
before compute capability 8 is a probe it survives when the log shows the start-up going on, and all there is to
name when an excerpt holds that line alone; Ray's raylet noting, at `E`, a disk over 95 % full is a capacity
note, while its other `E` lines during a start-up stay failures.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

FA_PROBE = ("(EngineCore_DP0 pid=417364) ERROR 08-03 15:21:53 [fa_utils.py:57] Cannot use FA version 2 is not "
            "supported due to FA2 is only supported on devices with compute capability >= 8")
START = ["(EngineCore_DP0 pid=417364) INFO 08-03 15:21:52 [core.py:77] Initializing a V1 LLM engine "
         "(v0.11.0+torch271) with config: model='/root/Qwen3-VL-Embedding-2B', speculative_config=None"]
GOES_ON = ["(EngineCore_DP0 pid=417364) INFO 08-03 15:21:59 [cuda.py:331] Using XFormers backend on V1 engine.",
           "(APIServer pid=417108) INFO 08-03 15:22:16 [api_server.py:1912] Starting vLLM API server 0 on "
           "http://[::]:11457", "(APIServer pid=417108) INFO:     Application startup complete."]


def test_a_refused_flash_attention_probe_in_a_start_that_goes_on_is_no_failure() -> None:
    # a T4 serving Qwen3-VL-Embedding-2B with XFormers (zjpzhao/vllm-qwen3vl-cu118-t4's committed log)
    assert classify_lines([*START, FA_PROBE, *GOES_ON]).kind == "healthy"


def test_the_probe_line_alone_is_still_named() -> None:
    # vLLM #52181: an excerpt of that one line from a Quadro RTX 8000 whose start failed
    report = classify_lines([FA_PROBE])
    assert report.kind == "startup_failure" and report.root is not None and report.root.line == 1


def test_a_failure_after_the_probe_is_read_where_it_shows() -> None:
    died = "(EngineCore_DP0 pid=417364) ERROR 08-03 15:21:55 [core.py:708] EngineCore failed to start."
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    report = classify_lines([*START, FA_PROBE, died, oom])
    assert report.kind == "out_of_memory"


RAY_DISK = ("\x1b[2m\x1b[33m(raylet)\x1b[0m [2023-12-03 01:06:56,943 E 3883882 3883896] (raylet) "
            "file_system_monitor.cc:111: /tmp/ray/session_2023-12-03_01-06-44_873224_3883710 is over 95% full, "
            "available space: 2433503232; capacity: 232947798016. Object creation will fail if spilling is required.")
RAY_START = ["2023-12-03 01:06:47,045\tINFO worker.py:1642 -- Started a local Ray instance.",
             "INFO 12-03 01:06:48 llm_engine.py:72] Initializing an LLM engine with config: "
             "model='mistralai/Mistral-7B-Instruct-v0.1', tokenizer='mistralai/Mistral-7B-Instruct-v0.1'"]


def test_rays_disk_capacity_note_is_no_failure() -> None:
    # a 2023 LlamaIndex notebook's offline run on four GPUs: the note every ten seconds, the engine answers
    blocks = "INFO 12-03 01:07:19 llm_engine.py:205] # GPU blocks: 2764, # CPU blocks: 2048"
    lines = [*RAY_START, RAY_DISK, RAY_DISK, RAY_DISK, blocks]
    assert classify_lines(lines).kind == "healthy"


def test_rays_other_error_lines_during_a_start_stay_failures() -> None:
    gcs = ("[2024-05-01 10:00:00,000 E 1234 1234] gcs_client.cc:183: Failed to get cluster ID from GCS server: "
           "TimedOut: Timed out while waiting for GCS to become available.")
    assert classify_lines([*RAY_START[:1], gcs]).kind == "startup_failure"


def test_a_number_cut_by_a_fixed_width_is_joined_again() -> None:
    """`fold -w 80` broke 'utils.py:106: UserWarning' into 'utils.py:10' and '6: UserWarning', and the second
    piece, read as a line numbered by grep, became an error line of its own (a ROCm gfx1201 run's warning)."""
    warning = ("(EngineCore_DP0 pid=7089) /workspace/vllm/vllm/model_executor/layers/utils.py:106: UserWarning: "
               "Failed validator: GCN_ARCH_NAME (Triggered internally at /app/pytorch/aten/src/ATen/hip/tunable/"
               "Tunable.cpp:366.)")
    lines = [*START, warning, *GOES_ON]
    folded = [line[i:i + 80] for line in lines for i in range(0, max(len(line), 1), 80)]
    cut = next(i for i, piece in enumerate(folded) if piece.endswith("utils.py:10"))
    assert folded[cut + 1].startswith("6: UserWarning")
    assert classify_lines(folded).kind == "healthy"
