"""Settings from the environment and model resolution (hub id, local folder, demo fallback)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chainlit_app import models
from chainlit_app.models import resolve_model, resolve_model_at_once
from chainlit_app.settings import FLAT_NAMES, PROJECT_ROOT, Settings
from tests.conftest import settings_for_tests


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("CHAT_MODEL", "CHAT_MODE", "CHAT_PORT", "CHAT_MAX_MODEL_LEN"):
        monkeypatch.delenv(key, raising=False)
    settings = Settings()
    assert settings.model.name == "baidu/ERNIE-4.5-0.3B-PT"
    assert settings.engine.mode == "spawn"
    assert settings.engine.host == "127.0.0.1"
    assert settings.engine.port == 0
    assert settings.engine.max_model_len == 4096
    assert settings.engine.python == PROJECT_ROOT / ".venv-vllm" / "bin" / "python"


def test_environment_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CHAT_MODEL", "demo")
    monkeypatch.setenv("CHAT_MAX_MODEL_LEN", "1024")
    monkeypatch.setenv("CHAT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CHAT_ADMIN_PASSWORD", "pw")
    settings = Settings()
    assert settings.model.name == "demo"
    assert settings.engine.max_model_len == 1024
    assert settings.storage.models_dir == tmp_path / "models"
    assert settings.auth.admin_password is not None and "pw" not in repr(settings)


def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAT_MODE", "sideways")
    with pytest.raises(ValueError, match="mode"):
        Settings()


def _fake_demo(tmp_path: Path) -> Path:
    folder = tmp_path / "models" / models.DEMO_FOLDER
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"x")
    (folder / "COMPLETE").write_text("ok")
    return folder


def test_local_folder_is_served_as_is(tmp_path: Path) -> None:
    folder = tmp_path / "My-Model"
    folder.mkdir()
    resolved = resolve_model(Settings(model=str(folder), data_dir=tmp_path))
    assert resolved == models.ResolvedModel("local", str(folder), "my-model")


def test_unreachable_hub_model_falls_back_to_demo_with_a_notice(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    demo = _fake_demo(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    resolved = resolve_model(Settings(data_dir=tmp_path, hub_probe_timeout=1))
    assert resolved.source == "demo"
    assert resolved.model == str(demo)
    assert resolved.notice is not None and "baidu/ERNIE-4.5-0.3B-PT" in resolved.notice


def test_hub_model_in_local_cache_is_used_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    snapshot = tmp_path / "hf" / "hub" / "models--baidu--ERNIE-4.5-0.3B-PT" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolved = resolve_model(Settings(data_dir=tmp_path))
    assert resolved.source == "hub"
    assert resolved.model == "baidu/ERNIE-4.5-0.3B-PT"
    assert resolved.notice is None


def test_half_built_demo_is_not_used(tmp_path: Path) -> None:
    folder = _fake_demo(tmp_path)
    (folder / "COMPLETE").unlink()
    assert not models.is_complete(folder)
    with pytest.raises(RuntimeError, match="engine environment is missing"):
        models.build_demo_model(Settings(data_dir=tmp_path, engine_venv=tmp_path / "no-venv"))


def test_model_at_once_never_builds_downloads_or_asks_the_hub(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """What the app may launch while importing; everything slow is left to start-up."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert resolve_model_at_once(settings_for_tests(model="demo", models_dir=tmp_path / "none")) is None
    assert resolve_model_at_once(settings_for_tests(model="baidu/ERNIE-4.5-0.3B-PT")) is None
    local = tmp_path / "my-model"
    local.mkdir()
    resolved = resolve_model_at_once(settings_for_tests(model=str(local)))
    assert resolved is not None and resolved.source == "local" and resolved.model == str(local)
    snapshot = tmp_path / "hub" / "models--baidu--ERNIE-4.5-0.3B-PT" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    cached = resolve_model_at_once(settings_for_tests(model="baidu/ERNIE-4.5-0.3B-PT"))
    assert cached is not None and cached.source == "hub"


def test_every_documented_variable_is_read_into_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's configuration table is the contract: each CHAT_ name lands in one grouped field."""
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `CHAT_([A-Z_]+)`", readme, flags=re.MULTILINE)) - {"PRELAUNCH"}
    assert documented == {name.upper() for name in FLAT_NAMES}, "README table and settings differ"
    monkeypatch.setenv("CHAT_PORT", "8123")
    monkeypatch.setenv("chat_model", "demo")  # any case, as before
    monkeypatch.setenv("CHAT_MODELS_DIR", "/models")
    monkeypatch.setenv("CHAT_ENFORCE_EAGER", "false")
    monkeypatch.setenv("CHAT_ADMIN_PASSWORD", "pw")
    settings = Settings()
    assert (settings.engine.port, settings.model.name, settings.storage.models_dir) == (8123, "demo", Path("/models"))
    assert settings.engine.enforce_eager is False and settings.auth.admin_password is not None
    assert settings.auth.admin_password.get_secret_value() == "pw"


def test_flat_arguments_override_one_field_and_unknown_names_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAT_HUB_PROBE_TIMEOUT", "9")
    settings = Settings(model="demo", port=5)
    assert settings.model.name == "demo" and settings.model.hub_probe_timeout == 9.0, "the rest of the group stays"
    assert settings.engine.port == 5
    with pytest.raises(ValueError, match="CHAT_MAX_MODEL_LENGTH"):
        Settings(max_model_length=5)
    monkeypatch.setenv("CHAT_PORT", "eighty")
    with pytest.raises(ValueError, match=r"engine\.port"):
        Settings()
