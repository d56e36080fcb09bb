"""The general mechanisms of the round-31 pass (issue 11: holdout round 31's misses, moved to dev), each on the
real lines it was written from and each beside the shape that must keep its reading.

A build check whose message starts on the line below its `RuntimeError:`; a model's `rope_scaling` or processor
newer than the installed vLLM or transformers; vLLM unable to read its own version under a fork's package name; the
user's own file shadowing a package; a serving platform's start-up limit running out.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_build_check_whose_message_starts_below_its_exception() -> None:
    lines = [  # OpenBMB/MiniCPM #44 (pip building MiniCPM's vLLM fork)
        "pip install inference/vllm",
        "",
        "RuntimeError:",
        "      The detected CUDA version (11.8) mismatches the version that was used to compile",
        "      PyTorch (12.1). Please make sure to use the same CUDA versions.",
    ]
    assert _root(lines) == ("version_mismatch", "cuda_toolkit_mismatch")
    # the same `RuntimeError:` over a message no rule names stays a start-up failure, named by the phase
    other = [*lines[:3], "      Error compiling objects for extension"]
    assert _root(other)[0] == "startup_failure"


_ROPE_ASSERT = [  # QwenLM/Qwen3-VL #123 (Qwen2-VL-2B GPTQ on a vLLM without Qwen2-VL)
    ' File "/venv/lib/python3.10/site-packages/vllm/config.py", line 222, in __init__',
    "    self.max_model_len = _get_and_verify_max_len(",
    ' File "/venv/lib/python3.10/site-packages/vllm/config.py", line 1739, in _get_and_verify_max_len',
    '    assert "factor" in rope_scaling',
    "AssertionError",
]


def test_a_rope_scaling_the_installed_release_does_not_know() -> None:
    assert _root(_ROPE_ASSERT) == ("version_mismatch", "rope_scaling_of_a_newer_model")
    # another assertion in the same function is a start-up failure, not a version mismatch
    other = [*_ROPE_ASSERT[:3], "    assert max_model_len > 0", "AssertionError"]
    assert _root(other)[0] == "startup_failure"
    # a config printout naming rope_scaling is no failure at all
    printout = ["INFO 05-10 03:15:26 [config.py:1] This model's config: rope_scaling=None, rope_theta=10000.0"]
    assert _root(printout)[0] == HEALTHY


def test_a_processor_for_a_model_type_transformers_lacks() -> None:
    lines = [  # vLLM #12604 (Qwen2.5-VL served before transformers had it)
        "TypeError: Unknown image model type: qwen2_5_vl",
        "vllm serve Qwen/Qwen2.5-VL-72B-Instruct --quantization bitsandbytes --load-format bitsandbytes "
        "--pipeline_parallel_size 2 --max_model_len 10000",
    ]
    assert _root(lines) == ("version_mismatch", "transformers_too_old")


_PASCAL = [  # sasha0552/pascal-pkgs-ci #51 (vllm-pascal 0.8.5.post1)
    "WARNING 05-10 03:15:22 [__init__.py:25] The vLLM package was not found, so its version could not be "
    "inspected. This may cause platform detection to fail.",
    "INFO 05-10 03:15:22 [__init__.py:243] No platform detected, vLLM is running on UnspecifiedPlatform",
    "INFO 05-10 03:15:26 [api_server.py:1043] vLLM API server version 0.8.5.post1",
]


def test_vllm_without_its_own_version_explains_the_platform_it_could_not_detect() -> None:
    assert _root(_PASCAL) == ("version_mismatch", "vllm_distribution_unnamed")
    # without the warning, no platform detected stays what it was
    assert _root(_PASCAL[1:]) == ("startup_failure", "no_platform_detected")
    # the warning beside a failure it does not explain (memory) leaves that failure the root
    oom = [_PASCAL[0], "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."]
    assert _root(oom)[0] == "out_of_memory"


def test_a_users_file_shadowing_a_package() -> None:
    lines = [  # modal-labs/modal-examples #546 (the example saved as vllm.py)
        "Traceback (most recent call last):",
        '  File "/root/vllm.py", line 91, in __enter__',
        "    from vllm.engine.arg_utils import AsyncEngineArgs",
        "ModuleNotFoundError: No module named 'vllm.engine'; 'vllm' is not a package",
    ]
    assert _root(lines) == ("startup_failure", "module_shadowed_by_a_file")
    # a module that a release removed stays a version mismatch
    removed = [*lines[:3], "ModuleNotFoundError: No module named 'vllm.engine.ray_utils'"]
    assert _root(removed)[0] == "version_mismatch"


def test_a_platforms_start_up_limit() -> None:
    lines = [  # modal-labs/modal-examples #1154 (vLLM still compiling when Modal's limit ran out)
        "May 01  14:38:19.519 | INFO 05-01 12:38:19 gpu_model_runner.py:872] Loading model weights took 5.3800 GB",
        "May 01  14:39:12.189 | INFO 05-01 12:39:12 backends.py:311] Cache the graph of shape None for later use",
        "Runner failed with exception: Runner has been initializing for too long: 300 seconds",
    ]
    assert _root(lines) == ("startup_failure", "platform_start_timeout")
    # a log line telling how long initialisation took is not a timeout
    took = ["INFO 05-01 12:39:40 [core.py:1] init engine (profile, create kv cache, warmup model) took 41.2 seconds"]
    assert _root(took)[0] == HEALTHY
