"""Every knob of the app, read once from the environment (prefix CHAT_) and passed down."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = "baidu/ERNIE-4.5-0.3B-PT"


class Settings(BaseSettings):
    """Configuration of the chat console; see the README's configuration table."""

    model_config = SettingsConfigDict(env_prefix="CHAT_", extra="ignore", populate_by_name=True)

    # What to serve and how to reach it.
    mode: Literal["spawn", "attach"] = "spawn"
    model: str = DEFAULT_MODEL
    served_model_name: str | None = None
    vllm_url: str | None = None
    api_key: SecretStr | None = None

    # The engine we spawn.
    engine_venv: Path = PROJECT_ROOT / ".venv-vllm"
    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port")
    max_model_len: int = Field(default=4096, ge=16)
    dtype: str = Field(default="auto", description="auto: float32 on CPUs without bf16, else vLLM's choice")
    enforce_eager: bool = True
    kv_cache_gib: int = Field(default=1, ge=1, description="VLLM_CPU_KVCACHE_SPACE (GiB) on CPU machines")
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)
    single_process: bool = Field(default=True, description="VLLM_ENABLE_V1_MULTIPROCESSING=0 on CPUs")
    extra_args: str = ""
    device: Literal["auto", "cpu", "gpu"] = "auto"

    # Supervision.
    preflight: bool = Field(default=True, description="run the doctor's checks before every spawn")
    startup_timeout: float = Field(default=900.0, gt=0)
    stop_grace: float = Field(default=10.0, ge=0)
    max_restarts: int = Field(default=3, ge=0)
    hub_probe_timeout: float = Field(default=4.0, gt=0)

    # Files.
    data_dir: Path = PROJECT_ROOT / ".data"
    models_path: Path | None = Field(default=None, alias="CHAT_MODELS_DIR", description="default DATA_DIR/models")
    log_dir: Path = PROJECT_ROOT / ".chainlit" / "logs"
    log_keep: int = Field(default=5, ge=1)
    log_file: Path | None = None

    # Chat defaults.
    request_timeout: float = Field(default=300.0, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2, description="None: 0.2 for the demo model, else 0.7")
    top_p: float = Field(default=0.95, gt=0, le=1)
    max_tokens: int = Field(default=512, ge=1)
    system_prompt: str = "You are a helpful assistant."
    stream_batching: bool = Field(default=True, description="under load, ask vLLM for tokens in UI-update groups")

    # Users.
    admin_user: str = "admin"
    admin_password: SecretStr | None = None
    users: str = Field(default="", description="extra users: name:password:role, comma separated")

    @field_validator("engine_venv", "data_dir", "log_dir", mode="after")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value if value.is_absolute() else (PROJECT_ROOT / value)

    @property
    def engine_python(self) -> Path:
        return self.engine_venv / "bin" / "python"

    @property
    def models_dir(self) -> Path:
        return self.models_path or (self.data_dir / "models")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The one settings object of the process (read once)."""
    return Settings()
