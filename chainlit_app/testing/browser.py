"""Where Chromium is, found the way the project's own browser tests find it: Debian's package.

Playwright's own browser downloads cannot be had on every machine; Debian's chromium can, so the page
objects, the smoke command and the tests all drive `/usr/bin/chromium` (or CHAT_TEST_CHROMIUM).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

CHROMIUM_ENV = "CHAT_TEST_CHROMIUM"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


class MissingChromium(RuntimeError):
    """No Chromium where the tests look for it; the message says how to get one."""


def chromium_path(explicit: str | None = None) -> Path:
    wanted = explicit or os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM
    path = Path(wanted)
    if not path.exists() and not explicit and not os.environ.get(CHROMIUM_ENV):
        found = shutil.which("chromium")
        path = Path(found) if found else path
    if not path.exists():
        raise MissingChromium(
            f"Chromium was not found at {path}. Install Debian's package (`apt-get install chromium`, "
            f"or `make chromium`), or name another Chromium with {CHROMIUM_ENV} or --chromium.")
    return path


def launch_options(explicit: str | None = None) -> dict[str, Any]:
    """Keyword arguments for `playwright.chromium.launch(...)`, sync or async."""
    return {"executable_path": str(chromium_path(explicit)), "args": CHROMIUM_ARGS}


def launch_chromium(playwright: Any, explicit: str | None = None) -> Any:
    """A headless Chromium from Playwright's sync API (async: `await p.chromium.launch(**launch_options())`)."""
    return playwright.chromium.launch(**launch_options(explicit))
