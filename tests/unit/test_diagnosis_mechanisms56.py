"""The round-56 pass (issue 11: six of holdout round 56's eight false alarms, moved to dev), on the real lines they
were written from, beside the shapes that must keep their reading: a record written behind a progress bar's redraw,
other libraries' own lines in a working run (TensorFlow registering CUDA's libraries twice, LMCache's warnings,
torchvision's image decoder, vLLM's default MoE configuration) and an answer's capitalised label above its text are
no failure, while the same libraries' failures, a record of failure behind a bar and an empty answer still are.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

BAR = "Processed prompts:   0%|  | 0/4 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, output: 0.00 toks/s]"
DONE = "Processed prompts: 100%|█| 4/4 [00:00<00:00, 21.02it/s, est. speed input: 136.62 toks/s, output: 336"


def test_a_warning_behind_a_progress_bars_redraw_is_a_warning() -> None:
    # vLLM #15528: the CPU backend's offline example
    lines = [BAR + "WARNING 03-26 13:39:39 [cpu.py:154] Pin memory is not supported on CPU.", DONE,
             "Prompt: 'Hello, my name is', Generated text: '\\nRobert.\\nI am the founder of the Peace Corps.'"]
    assert classify_lines(lines).kind == "healthy"


def test_a_failure_behind_a_progress_bars_redraw_is_still_one() -> None:
    lines = [BAR + "ERROR 03-26 13:39:39 [core.py:700] EngineCore encountered a fatal error.",
             "ERROR 03-26 13:39:39 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB."]
    assert classify_lines(lines).kind == "out_of_memory"


def test_other_libraries_notes_in_a_working_run_are_no_failure() -> None:
    lines = [
        "2025-11-05 11:26:51.332963: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:467] Unable to register "
        "cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered",
        "(EngineCore_DP0 pid=340) [2026-02-01 23:02:02,086] LMCache WARNING: Could not load 'builtin' from vLLM. Using "
        "builtin hash. This may cause inconsistencies in distributed caching. (token_database.py:136:lmcache.v1.token"
        "_database)",
        "/usr/local/lib/python3.12/dist-packages/torchvision/io/image.py:14: UserWarning: Failed to load image Python "
        "extension: 'Could not load this library: /usr/local/lib/python3.12/dist-packages/torchvision/image.so'If you "
        "don't plan on using image functionality from `torchvision.io`, you can ignore this",
        "WARNING [fused_moe.py:886] Using default MoE config. Performance might be sub-optimal!",
        "Config file not found at ['/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/"
        "configs/E=128,N=1024,device_name=AMD_Instinct_MI325X,dtype=fp8_w8a8.json']",
        "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    ]
    assert classify_lines(lines).kind == "healthy"


def test_those_libraries_failures_still_are() -> None:
    assert classify_lines(["2025-11-05 11:26:51.332963: E tensorflow/stream_executor/cuda/cuda_dnn.cc:389] Could not "
                           "create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR"]).kind != "healthy"
    assert classify_lines(["OSError: Could not load this library: /opt/venv/lib/python3.12/site-packages/torchvision/"
                           "_C.so"]).kind == "version_mismatch"
    assert classify_lines(["Config file not found at /models/qwen/config.json"]).kind != "healthy"


LABELLED = [  # llm-compressor's end-to-end test printing each prompt and answer under a label (a CI log's times)
    "2026-05-29T02:42:39.2382989Z PROMPT:",
    "2026-05-29T02:42:39.2383205Z The capital of France is",
    "2026-05-29T02:42:39.2383552Z GENERATED TEXT:",
    "2026-05-29T02:42:39.2383859Z  Paris, with the city's population of over 2 million people. Paris",
    "2026-05-29T02:42:39.2384186Z PROMPT:",
    "2026-05-29T02:42:39.2384405Z The president of the US is",
    "2026-05-29T02:42:39.2384640Z GENERATED TEXT:",
    "2026-05-29T02:42:39.2384967Z  Donald Trump, and the vice president is Mike Pence. The president-elect",
    "2026-05-29T02:42:39.2385186Z PROMPT:",
    "2026-05-29T02:42:39.2385405Z My name is",
    "2026-05-29T02:42:39.2385640Z GENERATED TEXT:",
    "2026-05-29T02:42:39.2385967Z  John and I work as a teacher in a small town.",
]


def test_an_answer_under_its_label_is_no_empty_answer_nor_a_loop() -> None:
    assert classify_lines(LABELLED).kind == "healthy"


def test_an_empty_answer_beside_its_prompt_still_is_one() -> None:
    assert classify_lines(["Prompt: 'Where is the CEO of Nvida was born?', Generated text:"]).kind == "empty_output"


def test_a_warning_whose_path_was_cut_off_is_no_exception() -> None:
    # torch's note in NVIDIA's container, its `library.py:357:` left on the line before by a fold at 80 columns
    note = "UserWarning: Warning only once for all operators,  other operators may also be overridden."
    assert classify_lines([note]).kind == "healthy"
    raised = ["Traceback (most recent call last):", '  File "/srv/app.py", line 3, in <module>',
              "    warnings.warn('boom')", "UserWarning: boom"]  # a warning raised as an error (-W error)
    assert classify_lines(raised).kind != "healthy"


TRACEBACK = ["Traceback (most recent call last):", '  File "/workspace/offline.py", line 12, in <module>',
             "    llm = LLM(model=path)", "MyCustomConfigError: unknown field 'rope_scaling.type' in config for model"]


def test_a_traceback_behind_torchruns_or_mpiruns_worker_tag_is_read() -> None:
    # found by the review of this session's passes: behind these tags an unknown exception read as healthy
    for tag in ("[default0]:", "[1,0]<stderr>:"):
        assert classify_lines([tag + line for line in TRACEBACK]).kind == "startup_failure", tag
        started = ["INFO 10-16 08:00:00 api_server.py:528] vLLM API server version 0.6.3",
                   "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)"]
        assert classify_lines([tag + line for line in started]).kind == "healthy", tag
