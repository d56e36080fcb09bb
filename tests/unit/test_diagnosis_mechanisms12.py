"""The general mechanisms that named round 12's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the healthy shape beside it, so that a mechanism that fires
on everything fails here."""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answers import judge_answer
from chainlit_app.diagnostics.platforms import PlatformWatch
from chainlit_app.diagnostics.rules_figures import prompt_exceeds_maximum
from chainlit_app.diagnostics.turn_markers import spelled_marker

# vLLM PR #50219: an IBM Z (s390x) CPU server's normal stats, V1's wording: 'GPU KV cache usage' on a CPU
S390X = [
    "(APIServer pid=1) INFO 07-29 07:14:56 [loggers.py:310] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg "
    "generation throughput: 1.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache "
    "hit rate: 0.0%",
    "(APIServer pid=1) INFO 07-29 07:15:06 [loggers.py:310] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg "
    "generation throughput: 1.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache "
    "hit rate: 0.0%",
    "(APIServer pid=1) INFO 07-29 07:15:16 [loggers.py:310] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg "
    "generation throughput: 1.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache "
    "hit rate: 0.0%",
]
ON_CUDA = "INFO 01-02 16:10:03 __init__.py:183] Automatically detected platform cuda."
ON_CPU = "INFO 05-14 04:44:35 [__init__.py:239] Automatically detected platform cpu."


def _watch(*lines: str) -> PlatformWatch:
    watch = PlatformWatch()
    for line in lines:
        watch.observe(line.lower())
    return watch


def test_slow_decoding_needs_an_accelerator_shown_and_no_cpu() -> None:
    # the stats lines alone show no hardware: V1 prints 'GPU KV cache usage' on s390x, V0 on any CPU server
    assert classify_lines(S390X).kind == HEALTHY
    assert not _watch(*S390X).gpu and not _watch(*S390X).cpu
    # a CPU shown anywhere silences it, before or after the stats, and beside an accelerator's words
    for cpu in (ON_CPU, "WARNING 01-17 07:57:05 _logger.py:72] Pin memory is not supported on CPU.",
                "INFO 07-29 07:12:01 [cpu_worker.py:102] OMP threads binding of Process 88: 0-15 on s390x",
                "INFO 05-02 10:11:12 selector.py:193] Using Torch SDPA backend.",
                "INFO 05-02 10:11:13 executor_base.py:110] # CPU blocks: 2340"):
        assert classify_lines([cpu, *S390X]).kind == HEALTHY, cpu
        assert classify_lines([*S390X, cpu]).kind == HEALTHY, cpu
        assert classify_lines([ON_CUDA, cpu, *S390X]).kind == HEALTHY, cpu
        assert _watch(ON_CUDA, cpu).cpu and not _watch(ON_CUDA, cpu).accelerator
    # on an accelerator shown before or after them, the same rates crawl
    for gpu in (ON_CUDA, "INFO 01-02 16:10:40 model_runner.py:1430] Capturing cudagraphs for decoding.",
                "INFO 01-02 16:10:20 gpu_executor.py:122] # GPU blocks: 2081, # CPU blocks: 2048",
                "INFO 01-02 16:10:05 pynccl.py:69] vLLM is using nccl==2.21.5"):
        assert _watch(gpu).accelerator, gpu
        assert classify_lines([gpu, *S390X]).kind == "slow_or_stalled", gpu
        assert classify_lines([*S390X, gpu]).kind == "slow_or_stalled", gpu
    # V0's GPU report names its CPU swap space beside the GPU cache: no CPU evidence
    v0 = ("INFO 03-18 09:04:46 [metrics.py:481] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
          "0.4 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.6%, CPU KV cache "
          "usage: 0.0%.")
    assert not _watch(v0).cpu
    assert _watch("INFO 05-02 10:11:14 metrics.py:345] Avg prompt throughput: 0.0 tokens/s, Running: 1 reqs, "
                  "CPU KV cache usage: 0.1%").cpu


def test_a_signal_handlers_report_by_number_is_a_fatal_signal() -> None:
    stats = ("INFO 06-07 17:14:07 metrics.py:161] Avg prompt throughput: 2102.7 tokens/s, Avg generation throughput: "
             "146.2 tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 4.5%, CPU KV "
             "cache usage: 0.0%")
    # Triton Inference Server #7332: its vLLM backend dies under concurrent requests
    crash = ["Signal (11) received.", " 0# 0x0000559334F1667D in /opt/tritonserver/bin/tritonserver",
             " 1# 0x00007FA5EAD8D520 in /usr/lib/x86_64-linux-gnu/libc.so.6"]
    report = classify_lines([stats, *crash])
    assert report.kind == "engine_error" and report.root is not None and report.root.basis == "phase"
    assert classify_lines(["Signal (6) received."]).kind == "engine_error"
    # words about signals that report none stay quiet
    assert classify_lines([stats, "INFO 06-07 17:14:09 server.py:88] Signal handlers installed for SIGTERM."]
                          ).kind == HEALTHY


def test_a_prompt_count_above_the_maximum_is_context_length() -> None:
    swift = ("[WARNING:swift] max_model_len(40960) - num_tokens(118444) < max_tokens(1024). Setting max_tokens: "
             "-77484")  # ms-swift #4893
    assert prompt_exceeds_maximum(swift)
    report = classify_lines([swift])
    assert report.kind == "context_length" and report.root is not None
    assert report.root.rule == "prompt_count_above_maximum"
    # the same words with the count below the maximum: the answer's budget trimmed to what is left
    trimmed = swift.replace("118444", "40000").replace("-77484", "960")
    assert not prompt_exceeds_maximum(trimmed) and classify_lines([trimmed]).kind == HEALTHY
    assert prompt_exceeds_maximum("prompt length 9000 exceeds max_model_len=8192")
    assert not prompt_exceeds_maximum("INFO Using max_model_len=8192, max_num_batched_tokens=16384")


def test_a_template_marker_spelled_in_pieces_is_a_template_mismatch() -> None:
    baichuan = "None<|im_end| | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | |None"  # Baichuan2 #202
    assert spelled_marker(baichuan) == "<|im_end|>"
    report = classify_lines([baichuan])
    assert report.kind == "chat_template" and report.root is not None
    assert report.root.rule == "marker_spelled_in_pieces"
    verdict = judge_answer(baichuan, "length", 512)
    assert verdict is not None and verdict.kind == "chat_template"
    # a whole marker, a marker explained in code, a Markdown table's pipes: not spelled pieces
    assert spelled_marker("Hello!<|im_end|>\n| a | b |\n|---|---|\n| 1 | 2 |") is None
    assert spelled_marker("ChatML ends a turn with `<|im_end| | | | | |`") is None
    assert classify_lines(["| name | size | | | | | |", "| a | 1 | | | | | |"]).kind == HEALTHY


# DeepSeek-OCR #299 under journald: the EngineCore stack cut inside Triton's launch of the fused-MoE kernel
OCR = [f"Dec 09 13:35:40 host deepseek-ocr[206214]: (EngineCore_DP0 pid=86) {line}" for line in (
    "^^^^^^^^^^^^^^^^^^^",
    'File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/fused_moe.py", line 1896, in '
    "fused_experts_impl",
    "invoke_fused_moe_kernel(",
    'File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/fused_moe.py", line 693, in '
    "invoke_fused_moe_kernel",
    "fused_moe_kernel[grid](",
    'File "/usr/local/lib/python3.12/dist-packages/triton/runtime/jit.py", line 419, in',
    "return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)",
    'File "/usr/local/lib/python3.12/dist-packages/triton/runtime/jit.py", line 756, in run',
)]


def test_a_stack_cut_inside_a_kernel_launch_is_read_by_its_phase() -> None:
    report = classify_lines(OCR)
    assert report.kind == "engine_error" and report.root is not None and report.root.basis == "phase"
    # the same stack under the start-up's profiling run: a kernel that fails there is a build that does not fit
    profiling = [OCR[0].replace("^^^^^^^^^^^^^^^^^^^", 'File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/'
                                'gpu_model_runner.py", line 2400, in profile_run'), *OCR[1:]]
    assert classify_lines(profiling).kind == "version_mismatch"
    # with its exception line the exception decides, as before
    error = OCR[0].replace("^^^^^^^^^^^^^^^^^^^", "RuntimeError: Triton Error [CUDA]: device kernel image is invalid")
    assert classify_lines([*OCR, error]).kind == "version_mismatch"


def test_a_model_path_or_device_that_is_not_there() -> None:
    for line in ("OSError: Incorrect path_or_model_id: '/data1/models/deepseek'. Please provide either the path to a "
                 "local folder or the repo_id of a model on the Hub.",  # vLLM #8262
                 "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
                 "cached files and it looks like Qwen-14B-Chat-AWQ is not the path to a directory containing a file "
                 "named config.json."):  # vLLM #2247
        assert classify_lines([line]).kind == "model_not_found", line
    # a hub id in the same offline words: the hub is out of reach
    offline = ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
               "cached files and it looks like Qwen/Qwen-14B-Chat is not the path to a directory containing a file "
               "named config.json.")
    assert classify_lines([offline]).kind == "startup_failure"
    # no device: a start-up failure, not a version problem (vLLM #13946, #12847)
    tail = ['  File "/usr/local/lib/python3.12/dist-packages/vllm/config.py", line 1433, in __init__',
            '    raise RuntimeError("Failed to infer device type")', "RuntimeError: Failed to infer device type"]
    report = classify_lines(["             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^", *tail])
    assert report.kind == "startup_failure" and [f.rule for f in report.findings] == ["no_platform_detected"]
    assert classify_lines(["INFO 05-14 04:44:35 [__init__.py:243] No platform detected, vLLM is running on "
                           "UnspecifiedPlatform"]).kind == "startup_failure"


def test_a_function_refusing_an_argument_quoted_while_starting_is_a_version_mismatch() -> None:
    lines = ['INFO 12-16 10:12:37 [__init__.py:216] Automatically detected platform cuda.',
             'E1216 02:12:49.624646 179 model.py:248] "[vllm] Failed to start engine: NoneType: None\\n"',
             'I1216 02:12:49.624943 179 pb_stub.cc:388] "Failed to initialize Python stub: TypeError: '
             "build_async_engine_client_from_engine_args() got an unexpected keyword argument 'stat_loggers'\\n\\nAt:"
             '\\n  /opt/tritonserver/backends/vllm/model.py(301): _run_llm_engine\\n"']  # Triton server #8578
    report = classify_lines(lines)
    assert report.kind == "version_mismatch" and report.root is not None
    assert report.root.rule == "call_signature_mismatch"
