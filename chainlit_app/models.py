"""Which model to serve: the ERNIE hub id, a local folder, or the offline demo model we build."""

from __future__ import annotations

import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path

from chainlit_app.engine.childenv import engine_environment
from chainlit_app.hub import hub_reachable, in_hub_cache, is_local_path
from chainlit_app.i18n import Msg
from chainlit_app.settings import Settings

log = logging.getLogger(__name__)

DEMO_NAME = "demo"
DEMO_FOLDER = "smollm2-135m-instruct"
DEMO_SERVED_NAME = "smollm2-135m-instruct"
BUILD_SCRIPT = Path(__file__).resolve().parent / "modelprep" / "build.py"
COMPLETE_MARKER = "COMPLETE"


@dataclass(frozen=True)
class ResolvedModel:
    """The model argument for vLLM, the name clients use, and a notice when we fell back."""

    source: str  # "hub", "local" or "demo"
    model: str
    served_name: str
    notice: str | None = None


def demo_model_dir(settings: Settings) -> Path:
    return settings.storage.models_dir / DEMO_FOLDER


def is_complete(folder: Path) -> bool:
    """A folder built by us is usable only with its COMPLETE marker and its weights."""
    return (folder / COMPLETE_MARKER).is_file() and any(folder.glob("*.safetensors"))


def build_demo_model(settings: Settings) -> Path:
    """Build SmolLM2-135M-Instruct once (about a minute) into the cache; a half-built one is rebuilt."""
    folder = demo_model_dir(settings)
    if is_complete(folder):
        return folder
    if not settings.engine.python.exists():
        raise RuntimeError(
            f"the engine environment is missing ({settings.engine.python}); run `make run` or `make engine`"
        )
    log.info("building the demo model into %s (one time, about a minute)", folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [str(settings.engine.python), str(BUILD_SCRIPT), "demo", str(folder)],
        capture_output=True,
        text=True,
        check=False,
        # The engine's allowlist (never the app's secrets), and pip's settings: the build downloads a wheel.
        env=engine_environment(also=["PIP_*"]),
    )
    if result.returncode != 0 or not is_complete(folder):
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"building the demo model failed:\n{tail}")
    return folder


def _short_name(model: str) -> str:
    return Path(model.rstrip("/")).name.lower() or "model"


def resolve_model(settings: Settings) -> ResolvedModel:
    """CHAT_MODEL as asked, or the demo model with a notice when the hub model cannot be had."""
    wanted = settings.model.name.strip()
    if wanted == DEMO_NAME:
        folder = build_demo_model(settings)
        return ResolvedModel("demo", str(folder), settings.model.served_name or DEMO_SERVED_NAME)
    if is_local_path(wanted):
        return ResolvedModel("local", str(Path(wanted).expanduser().resolve()),
                             settings.model.served_name or _short_name(wanted))
    if in_hub_cache(wanted) or hub_reachable(wanted, settings.model.hub_probe_timeout):
        return ResolvedModel("hub", wanted, settings.model.served_name or _short_name(wanted))
    folder = build_demo_model(settings)
    notice = Msg("notice.demo_fallback", model=wanted, seconds=f"{settings.model.hub_probe_timeout:.0f}")
    log.warning(notice)
    return ResolvedModel("demo", str(folder), settings.model.served_name or DEMO_SERVED_NAME, notice)


def resolve_model_at_once(settings: Settings) -> ResolvedModel | None:
    """The model without building, downloading or asking the hub; None when that needs any of them."""
    wanted = settings.model.name.strip()
    if wanted == DEMO_NAME:
        folder = demo_model_dir(settings)
        return ResolvedModel("demo", str(folder), settings.model.served_name or DEMO_SERVED_NAME) \
            if is_complete(folder) else None
    if is_local_path(wanted):
        return ResolvedModel("local", str(Path(wanted).expanduser().resolve()),
                             settings.model.served_name or _short_name(wanted))
    if in_hub_cache(wanted):
        return ResolvedModel("hub", wanted, settings.model.served_name or _short_name(wanted))
    return None


def main() -> int:
    """`python -m chainlit_app.models`: resolve CHAT_MODEL now, building the demo model when needed."""
    from chainlit_app.settings import get_settings

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        resolved = resolve_model(get_settings())
    except RuntimeError as exc:
        print(f"model preparation failed: {exc}")
        return 1
    print(f"model: {resolved.model} (source: {resolved.source}, served as {resolved.served_name})")
    if resolved.notice:
        print(f"note: {resolved.notice}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
