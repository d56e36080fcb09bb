"""The general mechanisms of the round-36 pass (issue 11: holdout round 36's misses, moved to dev), on the real
lines they were written from and beside the shapes that must keep their reading: a plugin's own
`entrypoints/openai/` package is not the openai library, and XLA's status for a TPU's memory is an out-of-memory.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_plugin_importing_a_vllm_module_that_moved_is_a_version_mismatch() -> None:
    # vllm-omni #1294: vllm-omni's own `entrypoints/openai/` package imports a module vLLM no longer has; the path
    # had been read as the openai library's, so the import looked like vLLM's own (an incomplete install)
    lines = [
        "Traceback (most recent call last):",
        '  File "/home/ubuntu/vllm-omni/vllm_omni/entrypoints/openai/api_server.py", line 96, in <module>',
        "    from vllm_omni.entrypoints.openai.serving_video import OmniOpenAIServingVideo",
        '  File "/home/ubuntu/vllm-omni/vllm_omni/entrypoints/openai/serving_video.py", line 3, in <module>',
        "    from vllm.entrypoints.openai.serving_engine import OpenAIServing",
        "ModuleNotFoundError: No module named 'vllm.entrypoints.openai.serving_engine'",
    ]
    assert _root(lines) == ("version_mismatch", "exc_ModuleNotFoundError")
    # vLLM's own CLI importing its own missing module (vllm-ascend #707): an incomplete install, as before
    own = [
        "Traceback (most recent call last):",
        '  File "/workspace/vllm/vllm/entrypoints/cli/benchmark/serve.py", line 4, in <module>',
        "    from vllm.benchmarks.serve import add_cli_args, main",
        "ModuleNotFoundError: No module named 'vllm.benchmarks.serve'",
    ]
    assert _root(own) == ("startup_failure", "vllm_own_module_missing")


def test_xlas_status_for_a_tpus_memory() -> None:
    # AI-Hypercomputer/tpu-recipes #151: gpt-oss on a TPU with --gpu-memory-utilization 0.93
    line = ("RESOURCE_EXHAUSTED: Error loading program 'jit__multi_slice': Attempting to reserve 6.14G at the bottom "
            "of memory. That was not possible.")
    assert _root([line]) == ("out_of_memory", "gpu_oom")
    # gRPC's same status for a quota is not memory
    assert _root(["RESOURCE_EXHAUSTED: Quota exceeded for requests per minute"])[1] != "gpu_oom"
