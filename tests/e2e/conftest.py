"""A real `chainlit run app.py` (which spawns its own vLLM) and a real Chromium driven by Playwright."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from bench.apps import AppServer, start_app
from chainlit_app.doctor import config_from_settings
from chainlit_app.engine.facts import facts_are_cached, load_engine_facts
from chainlit_app.engine.supervisor import free_port
from chainlit_app.settings import PROJECT_ROOT
from chainlit_app.testing import ChatPage, MissingChromium
from chainlit_app.testing.browser import launch_options
from chainlit_app.testing.hooks import REPLY_STATE_JS
from tests.conftest import REQUIRE_ALL, need_engine, settings_for_tests

__all__ = ["AppServer", "run_app", "run_in_thread"]
T = TypeVar("T")

ADMIN_PASSWORD = "e2e-admin-password"
USER_PASSWORD = "e2e-user-password"
ARTIFACTS = PROJECT_ROOT / "test-results"
SCREENSHOTS = PROJECT_ROOT / "docs" / "screenshots"


def run_in_thread(coro: Coroutine[Any, Any, T]) -> T:
    """Run async test code in a thread of its own: Playwright's sync API keeps an event loop running in
    this session's main thread, so asyncio.run() cannot be called there."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@contextmanager
def run_app(data_dir: Path, ready_states: tuple[str, ...], **env_overrides: str) -> Iterator[AppServer]:
    """`chainlit run app.py` (the benchmark's launcher); yields once /healthz reports one of `ready_states`,
    and stops the app and its vLLM group afterwards."""
    server = start_app(data_dir, admin_password=ADMIN_PASSWORD, chat_user="alice", user_password=USER_PASSWORD,
                       **env_overrides)
    try:
        run_in_thread(server.wait_engine(ready_states, timeout=600, poll=1.0))
        yield server
    finally:
        server.stop()


@contextmanager
def attached_to_nothing(data_dir: Path, password: str) -> Iterator[AppServer]:
    """An app attached to an address where nothing listens: no vLLM starts, so input and history faults are
    tried in seconds. Users admin and alice, both with `password`."""
    dead = f"http://127.0.0.1:{free_port()}/v1"
    server = start_app(data_dir, admin_password=password, chat_user="alice", user_password=password,
                       CHAT_MODE="attach", CHAT_VLLM_URL=dead, CHAT_STARTUP_TIMEOUT="3")
    try:
        run_in_thread(server.wait_http(timeout=120))
        yield server
    finally:
        server.stop()


def warm_engine_facts(data_dir: Path) -> None:
    """Fill the preflight's engine-facts cache of a data folder (what the first start of an install does)."""
    config = config_from_settings(settings_for_tests(model="demo", data_dir=data_dir))
    load_engine_facts(config.engine_python, config.facts_cache)
    assert facts_are_cached(config.engine_python, config.facts_cache)


@pytest.fixture(scope="session")
def app_server(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The app on the demo model, spawning its own vLLM; waits until the engine is ready."""
    need_engine()
    data_dir = tmp_path_factory.mktemp("app-data")
    warm_engine_facts(data_dir)  # as after an install's first start: the app then launches vLLM while importing
    with run_app(data_dir, ("ready",), CHAT_MODEL="demo", CHAT_MAX_MODEL_LEN="2048",
                 CHAT_TEMPERATURE="0") as server:  # temperature 0: deterministic, so "Paris" can be asserted
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    try:
        options = launch_options()
    except MissingChromium as exc:
        if REQUIRE_ALL:
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**options)
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


def login(page: Page, url: str, user: str, password: str) -> ChatPage:
    """Log in and wait for the welcome notice: a message typed before the socket is up is lost."""
    chat = ChatPage(page, url)
    chat.login(user, password)
    return chat


LONG_QUESTION = "Write a very long story about a dragon who learns to cook. Make it at least 800 words."


def ask_long_and_wait_for_text(page: Page) -> None:
    """Ask for a long answer and return once its text has started to grow (a new answer, not an old one)."""
    chat = ChatPage(page, "")
    chat.ask(LONG_QUESTION)
    chat.wait_first_token(60)
    page.wait_for_function(f"() => ({REPLY_STATE_JS})().answers.some(a => a.text.length > 40)", timeout=60_000)


def ask(page: Page, text: str) -> None:
    ChatPage(page, "").ask(text)


def save_screenshot(page: Page, name: str, timeout_ms: float = 30_000) -> None:
    """README screenshots are taken by the browser tests; CHAT_UPDATE_SCREENSHOTS=1 refreshes docs/.
    `timeout_ms` is Playwright's wait allowance (pages holding huge text need more), never a timing check."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), timeout=timeout_ms)
    if os.environ.get("CHAT_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(ARTIFACTS / name, SCREENSHOTS / name)
