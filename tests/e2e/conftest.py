"""A real `chainlit run app.py` (which spawns its own vLLM) and a real Chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from chainlit_app.engine.supervisor import free_port
from chainlit_app.settings import PROJECT_ROOT
from tests.conftest import MODELS_DIR, REQUIRE_ALL, need_engine

CHROMIUM = os.environ.get("CHAT_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ADMIN_PASSWORD = "e2e-admin-password"
USER_PASSWORD = "e2e-user-password"
ARTIFACTS = PROJECT_ROOT / "test-results"
SCREENSHOTS = PROJECT_ROOT / "docs" / "screenshots"


@dataclass
class AppServer:
    url: str
    process: subprocess.Popen[bytes]
    data_dir: Path
    log_path: Path

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def run_app(data_dir: Path, ready_states: tuple[str, ...], **env_overrides: str) -> Iterator[AppServer]:
    """`chainlit run app.py` as a user starts it; yields once /healthz reports one of `ready_states`."""
    port = free_port()
    env = dict(os.environ)
    env.update(
        CHAT_MODELS_DIR=str(MODELS_DIR),
        CHAT_DATA_DIR=str(data_dir),
        CHAT_LOG_DIR=str(data_dir / "logs"),
        CHAT_ADMIN_PASSWORD=ADMIN_PASSWORD,
        CHAT_USERS=f"alice:{USER_PASSWORD}:user",
    )
    env.update(env_overrides)
    env.pop("CHAINLIT_AUTH_SECRET", None)
    log_path = data_dir / "app.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(PROJECT_ROOT / ".venv" / "bin" / "chainlit"), "run", "app.py", "--headless", "--port", str(port)],
            cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    server = AppServer(f"http://127.0.0.1:{port}", process, data_dir, log_path)
    try:
        deadline = time.monotonic() + 600
        state = ""
        while time.monotonic() < deadline:
            assert process.poll() is None, f"the app exited:\n{server.log_text()[-3000:]}"
            try:
                state = httpx.get(server.url + "/healthz", timeout=2).json()["engine"]
            except (httpx.HTTPError, ValueError):
                state = ""
            if state in (*ready_states, "failed"):
                break
            time.sleep(1)
        assert state in ready_states, f"engine state {state!r}\n{server.log_text()[-3000:]}"
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="session")
def app_server(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The app on the demo model, spawning its own vLLM; waits until the engine is ready."""
    need_engine()
    with run_app(tmp_path_factory.mktemp("app-data"), ("ready",), CHAT_MODEL="demo", CHAT_MAX_MODEL_LEN="2048",
                 CHAT_TEMPERATURE="0") as server:  # temperature 0: deterministic, so "Paris" can be asserted
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        if REQUIRE_ALL:
            pytest.fail(f"Chromium missing at {CHROMIUM} (make chromium)")
        pytest.skip(f"Chromium missing at {CHROMIUM}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"))
    (ARTIFACTS / f"{request.node.name}.console.txt").write_text("\n".join(console))
    context.close()


def login(page: Page, url: str, user: str, password: str) -> None:
    """Log in and wait for the welcome message: a message typed before the socket is up is lost."""
    page.goto(url + "/login")
    page.fill("#email", user)
    page.fill("#password", password)
    page.click("button[type=submit]")
    page.wait_for_selector("text=Welcome!", timeout=60_000)


LONG_QUESTION = "Write a very long story about a dragon who learns to cook. Make it at least 800 words."


def ask_long_and_wait_for_text(page: Page) -> None:
    """Ask for a long answer and return once its text has started to grow (a new answer, not an old one)."""
    before = page.locator(".ai-message .message-content").count()
    ask(page, LONG_QUESTION)
    page.wait_for_function(
        "(before) => { const n = document.querySelectorAll('.ai-message .message-content');"
        " return n.length > before && n[before].innerText.length > 40; }",
        arg=before, timeout=60_000,
    )


def ask(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#chat-submit")


def save_screenshot(page: Page, name: str) -> None:
    """README screenshots are taken by the browser tests; CHAT_UPDATE_SCREENSHOTS=1 refreshes docs/."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))
    if os.environ.get("CHAT_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(ARTIFACTS / name, SCREENSHOTS / name)
