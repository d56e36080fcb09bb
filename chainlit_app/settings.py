"""Every knob of the app, read once from the environment and passed down, grouped by concern.

The groups (model, engine, chat, auth, storage, logging) are nested pydantic models, in the manner of
Chainlit's own config; the environment names stay flat and exactly as documented (`CHAT_` + the field's
alias or name: `settings.engine.port` is `CHAT_PORT`, `settings.model.name` is `CHAT_MODEL`). Settings
may also be built from those flat names (`Settings(port=0, model="demo")`), as tests and the bench do.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from chainlit_app import passwords
from chainlit_app.answer_markup import DEFAULT_BOUND as DEFAULT_MARKUP_BOUND
from chainlit_app.users import parse_users

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = "baidu/ERNIE-4.5-0.3B-PT"
ENV_PREFIX = "CHAT_"


def _in_project(value: Path) -> Path:
    """Relative folders are taken from the project root, wherever the app is started from."""
    return value if value.is_absolute() else (PROJECT_ROOT / value)


class _Group(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid", validate_assignment=True)


class ModelSettings(_Group):
    """What to serve."""

    name: str = Field(default=DEFAULT_MODEL, alias="model", description="hub id, local folder, or demo")
    served_name: str | None = Field(default=None, alias="served_model_name")
    hub_probe_timeout: float = Field(default=4.0, gt=0)


class EngineSettings(_Group):
    """The engine we spawn, or the server we attach to, and its supervision."""

    mode: Literal["spawn", "attach"] = "spawn"
    vllm_url: str | None = None
    api_key: SecretStr | None = None
    venv: Path = Field(default=PROJECT_ROOT / ".venv-vllm", alias="engine_venv")
    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port")
    max_model_len: int = Field(default=4096, ge=16)
    dtype: str = Field(default="auto", description="auto: float32 on CPUs (see command.effective_dtype)")
    enforce_eager: bool = True
    kv_cache_gib: int = Field(default=1, ge=1, description="VLLM_CPU_KVCACHE_SPACE (GiB) on CPU machines")
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)
    single_process: bool = Field(default=True, description="VLLM_ENABLE_V1_MULTIPROCESSING=0 on CPUs")
    extra_args: str = ""
    env_pass: str = Field(default="", alias="engine_env",
                          description="more environment variables vLLM may see (names, or PREFIX_*)")
    device: Literal["auto", "cpu", "gpu"] = "auto"
    preflight: bool = Field(default=True, description="run the doctor's checks before every spawn")
    startup_timeout: float = Field(default=900.0, gt=0)
    stop_grace: float = Field(default=10.0, ge=0)
    max_restarts: int = Field(default=3, ge=0)
    health_probe_seconds: float = Field(default=60.0, ge=0,
                                        description="idle one-token completion probe interval; 0 = off")
    health_probe_timeout: float = Field(default=30.0, gt=0, description="seconds a probe completion may take")
    degraded_restart_after: int = Field(default=3, ge=0,
                                        description="failed probes in a row before a spawned engine is restarted")
    auto_remedy: Literal["off", "safe"] = Field(
        default="off", description="safe: apply a finding's safe remedy by itself, once per kind per app run")

    _venv_in_project = field_validator("venv", mode="after")(_in_project)

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


class ChatSettings(_Group):
    """Defaults of every answer (users change some in the chat settings)."""

    request_timeout: float = Field(default=300.0, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2, description="None: 0.2 for the demo model, else 0.7")
    top_p: float = Field(default=0.95, gt=0, le=1)
    repetition_penalty: float | None = Field(default=None, ge=1, le=2,
                                             description="None: 1.1 for the demo model (it loops), else 1.0")
    max_tokens: int = Field(default=512, ge=1)
    system_prompt: str = "You are a helpful assistant."
    max_system_prompt_chars: int = Field(default=20_000, ge=0,
                                         description="longer system prompts (settings or chat) are cut")
    stream_batching: bool = Field(default=True, description="under load, ask vLLM for tokens in UI-update groups")
    answer_markup_limit: int = Field(
        default=DEFAULT_MARKUP_BOUND, ge=0,
        description="an answer with more markdown delimiters (* _ [ ] ~) is shown as text; 0: always markdown")
    language: Literal["auto", "en", "zh-CN"] = Field(
        default="auto", description="auto: each browser's language (zh-CN, zh, zh-Hans: Chinese; else English)")

    @model_validator(mode="after")
    def _prompt_within_bound(self) -> ChatSettings:
        if len(self.system_prompt) > self.max_system_prompt_chars:
            raise ValueError(
                f"CHAT_SYSTEM_PROMPT has {len(self.system_prompt):,} characters, over CHAT_MAX_SYSTEM_PROMPT_CHARS "
                f"({self.max_system_prompt_chars:,}): shorten the prompt or raise the limit")
        return self


class AuthSettings(_Group):
    """Who may log in, for how long, and from which web origins."""

    admin_user: str = Field(default="admin", min_length=1, pattern=r"^\S+$")
    admin_password: SecretStr | None = Field(default=None, description="plain text, or an argon2 or bcrypt hash")
    users: str = Field(default="", description="extra users: name:password:role, comma separated")
    session_hours: float = Field(default=24.0, gt=0, description="how long a login lasts (the token's lifetime)")
    allowed_origins: str = Field(default="", description="more web origins than the app's own, comma separated")

    @model_validator(mode="after")
    def _accounts_are_well_formed(self) -> AuthSettings:
        """Refuse a malformed CHAT_USERS or password hash at start, not at the first failed login."""
        parse_users(self.users, self.admin_user)
        if self.admin_password is not None and (bad := passwords.problem(self.admin_password.get_secret_value())):
            raise ValueError(f"CHAT_ADMIN_PASSWORD {bad}")
        return self

    @field_validator("allowed_origins")
    @classmethod
    def _origins_are_origins(cls, value: str) -> str:
        """Each entry is scheme://host[:port]; `*` is refused, it would let every site act for a user."""
        for origin in (part.strip() for part in value.split(",")):
            if origin and not re.fullmatch(r"https?://[^/\s*]+/?", origin):
                raise ValueError(f"CHAT_ALLOWED_ORIGINS entry {origin!r} is not an origin like https://chat.example.org"
                                 " (scheme and host, optional port, no path, no '*')")
        return value

    @property
    def origins(self) -> list[str]:
        """CHAT_ALLOWED_ORIGINS as a list (scheme://host[:port], no trailing slash)."""
        return [origin.strip().rstrip("/") for origin in self.allowed_origins.split(",") if origin.strip()]


class StorageSettings(_Group):
    """Where secrets, caches, built models and chat history live."""

    data_dir: Path = PROJECT_ROOT / ".data"
    models_folder: Path | None = Field(default=None, alias="models_dir", description="default DATA_DIR/models")
    shared_findings: bool = Field(default=False, description="the cluster's processes share findings (PostgreSQL)")

    _data_in_project = field_validator("data_dir", mode="after")(_in_project)

    @property
    def models_dir(self) -> Path:
        return self.models_folder or (self.data_dir / "models")


class LoggingSettings(_Group):
    """vLLM's log files."""

    log_dir: Path = PROJECT_ROOT / ".chainlit" / "logs"
    log_keep: int = Field(default=5, ge=1)
    log_file: Path | None = None
    launch_records: int = Field(default=20, ge=1, description="launch records kept in DATA_DIR/launches")

    _dir_in_project = field_validator("log_dir", mode="after")(_in_project)

    @property
    def engine_log(self) -> Path:
        """CHAT_LOG_FILE, else CHAT_LOG_DIR/vllm.log."""
        return self.log_file or (self.log_dir / "vllm.log")


GROUPS: dict[str, type[_Group]] = {
    "model": ModelSettings, "engine": EngineSettings, "chat": ChatSettings,
    "auth": AuthSettings, "storage": StorageSettings, "logging": LoggingSettings,
}


def _flat_name(name: str, info: FieldInfo) -> str:
    return info.alias or name


# Flat name (the environment name without CHAT_, lower case) -> its group.
FLAT_NAMES: dict[str, str] = {
    _flat_name(name, info): group for group, model in GROUPS.items() for name, info in model.model_fields.items()
}


class FlatEnvironment(PydanticBaseSettingsSource):
    """Reads CHAT_<FLAT NAME> (any case) for every grouped field and nests it under its group."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        raise NotImplementedError  # __call__ reads all fields at once

    def __call__(self) -> dict[str, Any]:
        environ = {key.upper(): value for key, value in os.environ.items()}
        nested: dict[str, dict[str, str]] = {}
        for flat, group in FLAT_NAMES.items():
            value = environ.get(ENV_PREFIX + flat.upper())
            if value is not None:
                nested.setdefault(group, {})[flat] = value
        return nested


class Settings(BaseSettings):
    """Configuration of the chat console; see the README's configuration table."""

    # An error names the setting and what is wrong, never the value given: a refused CHAT_USERS or
    # CHAT_ADMIN_PASSWORD must not print passwords into a terminal or log (pydantic shows inputs otherwise).
    model_config = SettingsConfigDict(extra="forbid", validate_assignment=True, hide_input_in_errors=True)

    model: ModelSettings = Field(default_factory=ModelSettings)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments first, then the flat CHAT_* environment; nothing else (no .env files, no secrets dir)."""
        return init_settings, FlatEnvironment(settings_cls)

    def __init__(self, **values: Any) -> None:
        """Flat names are nested before the environment is merged in, so that `Settings(model="demo")`
        overrides CHAT_MODEL alone, not the whole model group."""
        super().__init__(**nest_flat_names(values))


def nest_flat_names(values: dict[str, Any]) -> dict[str, Any]:
    """`port=0` means `engine={"port": 0}` (a group may be given whole, as a dict or a group model); an
    unknown name is an error that names the environment variable it would be."""
    nested: dict[str, Any] = {}
    for key, value in values.items():
        if key in GROUPS and isinstance(value, dict | BaseModel):
            group = value.model_dump(by_alias=True, exclude_unset=True) if isinstance(value, BaseModel) else value
            nested.setdefault(key, {}).update(group)
        elif key in FLAT_NAMES:
            nested.setdefault(FLAT_NAMES[key], {})[key] = value
        else:
            raise ValueError(f"unknown setting {key!r} (environment {ENV_PREFIX}{key.upper()})")
    return nested


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The one settings object of the process (read once)."""
    return Settings()


def settings_or_exit() -> Settings:
    """get_settings() for the app's start: a refused setting ends the start with its message alone (which
    setting, what is wrong, how to fix it), not a traceback that buries it."""
    try:
        return get_settings()
    except ValidationError as exc:
        raise SystemExit(f"chat console: not started, the configuration is refused: {exc}") from None
