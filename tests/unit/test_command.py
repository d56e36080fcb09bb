"""Settings -> the vLLM command line and environment."""

from __future__ import annotations

from pathlib import Path

from chainlit_app.engine import command
from chainlit_app.engine.command import LaunchSpec, build_argv, build_env, effective_dtype, redacted_argv


def _spec(**overrides: object) -> LaunchSpec:
    base: dict[str, object] = dict(model="/models/m", served_model_name="m", host="127.0.0.1", port=8123,
                                   api_key="s3cret-key", max_model_len=4096)
    base.update(overrides)
    return LaunchSpec(**base)  # type: ignore[arg-type]


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_argv_uses_the_module_entry_point_and_loopback() -> None:
    argv = build_argv(Path("/env/bin/python"), _spec())
    assert argv[:3] == ["/env/bin/python", "-m", "vllm.entrypoints.openai.api_server"]
    assert _flag(argv, "--host") == "127.0.0.1"
    assert _flag(argv, "--port") == "8123"
    assert _flag(argv, "--served-model-name") == "m"
    assert _flag(argv, "--max-model-len") == "4096"
    assert "--enforce-eager" in argv


def test_the_api_key_never_appears_in_argv() -> None:
    spec = _spec()
    argv = build_argv("python", spec)
    assert all("s3cret-key" not in arg for arg in argv)
    assert build_env(spec, base={})["VLLM_API_KEY"] == "s3cret-key"


def test_cpu_env_sets_kv_cache_and_single_process() -> None:
    env = build_env(_spec(kv_cache_gib=3, cache_dir=Path("/cache")), base={"PATH": "/bin"})
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "3"
    assert env["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
    assert env["VLLM_NO_USAGE_STATS"] == "1"
    assert env["VLLM_CACHE_ROOT"] == "/cache/vllm"
    assert env["PATH"] == "/bin"


def test_gpu_launch_has_memory_utilisation_and_no_cpu_knobs() -> None:
    spec = _spec(on_gpu=True, gpu_memory_utilization=0.5)
    argv = build_argv("python", spec)
    assert _flag(argv, "--gpu-memory-utilization") == "0.5"
    assert _flag(argv, "--dtype") == "auto"
    env = build_env(spec, base={})
    assert "VLLM_CPU_KVCACHE_SPACE" not in env


def test_auto_dtype_is_float32_on_cpu_and_left_to_vllm_on_gpu() -> None:
    assert effective_dtype("auto", on_gpu=False) == "float32"
    assert effective_dtype("auto", on_gpu=True) == "auto"
    assert effective_dtype("bfloat16", on_gpu=False) == "bfloat16"
    assert _flag(build_argv("python", _spec()), "--dtype") == "float32"


def test_extra_args_are_shell_split_and_keys_in_them_masked() -> None:
    spec = _spec(extra_args=command.split_extra_args("--api-key 'abc def' --seed 3"))
    argv = build_argv("python", spec)
    assert argv[-4:] == ["--api-key", "abc def", "--seed", "3"]
    assert "abc def" not in redacted_argv(argv)
