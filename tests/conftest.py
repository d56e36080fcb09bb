"""Shared test fixtures: built models (cached between runs) and one real vLLM server per session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from chainlit_app.engine.command import LaunchSpec
from chainlit_app.engine.supervisor import Supervisor, SupervisorConfig
from chainlit_app.models import BUILD_SCRIPT, build_demo_model, is_complete
from chainlit_app.settings import PROJECT_ROOT, Settings

ENGINE_PYTHON = PROJECT_ROOT / ".venv-vllm" / "bin" / "python"
MODELS_DIR = Path(os.environ.get("CHAT_MODELS_DIR", PROJECT_ROOT / ".data" / "models"))
REQUIRE_ALL = os.environ.get("CHAT_TEST_REQUIRE_ALL") == "1"
DEMO_SERVED = "demo"


def need_engine() -> None:
    """Integration tests need the engine environment; under `make test` its absence is a failure."""
    if ENGINE_PYTHON.exists():
        return
    if REQUIRE_ALL:
        pytest.fail(f"engine environment missing: {ENGINE_PYTHON} (run `make install`)")
    pytest.skip(f"engine environment missing: {ENGINE_PYTHON}; run `make install`")


def need_haproxy() -> str:
    """The cluster's balancer (`make haproxy`); under `make test` its absence is a failure. Returns its path."""
    haproxy = shutil.which("haproxy")
    if haproxy is not None:
        return haproxy
    if REQUIRE_ALL:
        pytest.fail("haproxy missing (make haproxy)")
    pytest.skip("haproxy missing (make haproxy, or apt-get install haproxy): the cluster needs it")


def settings_for_tests(**overrides: object) -> Settings:
    base: dict[str, object] = {"models_dir": MODELS_DIR}
    base.update(overrides)
    return Settings(**base)


@pytest.fixture(scope="session")
def demo_model() -> Path:
    need_engine()
    return build_demo_model(settings_for_tests())


def build_tiny_ernie(name: str, tokenizer_from: Path, *flags: str) -> Path:
    """A tiny random ERNIE-4.5 (real Ernie4_5ForCausalLM code path in vLLM), built once and cached."""
    out = MODELS_DIR / name
    if not is_complete(out):
        subprocess.run(
            [str(ENGINE_PYTHON), str(BUILD_SCRIPT), "tiny-ernie", str(out), "--tokenizer", str(tokenizer_from),
             *flags],
            check=True,
            capture_output=True,
        )
    return out


@pytest.fixture(scope="session")
def tiny_ernie(demo_model: Path) -> Path:
    return build_tiny_ernie("tiny-ernie", demo_model)


def make_supervisor(model: Path | str, log_dir: Path, served: str = DEMO_SERVED, max_model_len: int = 2048,
                    port: int = 0, extra_args: tuple[str, ...] = (), extra_env: dict[str, str] | None = None,
                    **config: Any) -> Supervisor:
    """A supervisor as the app builds it (float32 on the CPU, a fresh port and key per launch)."""
    spec = LaunchSpec(
        model=str(model),
        served_model_name=served,
        host="127.0.0.1",
        port=port,
        api_key="",
        max_model_len=max_model_len,
        dtype="float32",
        extra_args=extra_args,
        extra_env=extra_env or {},
        cache_dir=PROJECT_ROOT / ".data" / "cache",
    )
    return Supervisor(SupervisorConfig(python=ENGINE_PYTHON, spec=spec, log_file=log_dir / "vllm.log",
                                       fixed_port=bool(port), **config))


@pytest_asyncio.fixture(scope="session")
async def demo_server(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Supervisor]:
    """One real vLLM serving the demo model for the whole session (start-up costs 20 to 90 s)."""
    supervisor = make_supervisor(demo_model, tmp_path_factory.mktemp("demo-server"))
    await supervisor.start()
    if not supervisor.is_ready():
        tail = "\n".join(Path(supervisor.config.log_file).read_text(errors="replace").splitlines()[-30:])
        pytest.fail(f"vLLM did not start: {supervisor.status.error}\n{tail}")
    yield supervisor
    await supervisor.stop()


def pytest_report_header() -> list[str]:
    return [f"python {sys.version.split()[0]}, engine python: {ENGINE_PYTHON} (exists: {ENGINE_PYTHON.exists()})"]
