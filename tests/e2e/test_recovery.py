"""Nothing lost: a crash of the model server mid-answer, and a restart of the whole app."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import ADMIN_PASSWORD, AppServer, ask, ask_long_and_wait_for_text, login, run_app
from tests.e2e.test_diagnostics_panel import _engine, _engine_key
from tests.timing import assert_within

pytestmark = pytest.mark.e2e

ANSWERS = ".ai-message .message-content"


def test_crash_mid_answer_keeps_the_partial_answer_and_retry_works(app_server: AppServer, page: Page) -> None:
    login(page, app_server.url, "admin", ADMIN_PASSWORD)
    page.wait_for_selector("text=is ready", timeout=60_000)
    ask_long_and_wait_for_text(page)
    os.kill(int(_engine(app_server)["pid"]), signal.SIGKILL)
    killed = time.monotonic()
    interrupted = page.locator(ANSWERS, has_text="Interrupted")
    interrupted.first.wait_for(timeout=10_000)
    # the user hears about the crash within 2 s; the page needs up to half a second more to show it
    assert_within(time.monotonic() - killed, 2.5, "showing the crash to the user (2 s + 0.5 s to render)")
    text = interrupted.first.inner_text()
    assert "cannot be reached" in text
    assert len(text.split("Interrupted")[0].strip()) > 40, "the partial answer must be kept"
    # Retry waits for the automatic restart, then answers the same question again.
    page.get_by_role("button", name="Retry").first.click()
    page.wait_for_selector("text=Retrying", timeout=10_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.ai-message .message-content')].some("
        "n => n.innerText.length > 200 && !n.innerText.includes('Interrupted'))",
        timeout=300_000,
    )
    assert int(_engine(app_server)["restarts"]) >= 1


def test_history_survives_an_app_restart(app_server: AppServer, page: Page, tmp_path: Path) -> None:
    """A second app (attached to the first one's vLLM) with its own SQLite history, restarted in between."""
    engine = _engine(app_server)
    env = {"CHAT_MODE": "attach", "CHAT_VLLM_URL": f"http://127.0.0.1:{engine['port']}/v1",
           "CHAT_API_KEY": _engine_key(int(engine["pid"])), "CHAT_TEMPERATURE": "0"}
    with run_app(tmp_path, ("attached",), **env) as first:
        login(page, first.url, "admin", ADMIN_PASSWORD)
        page.wait_for_selector("text=is ready", timeout=30_000)
        ask(page, "What is the capital of France?")
        page.locator(ANSWERS, has_text="Paris").first.wait_for(timeout=60_000)
        time.sleep(1.5)  # let the data layer write the last step
    assert (tmp_path / "chat.db").stat().st_size > 0
    with run_app(tmp_path, ("attached",), **env) as second:
        page.context.clear_cookies()  # cookies ignore the port: start as a new visitor of the new app
        login(page, second.url, "admin", ADMIN_PASSWORD)
        history = page.locator("#thread-history")
        history.get_by_text("What is the capital of France?").first.click(timeout=30_000)
        expect(page.locator(ANSWERS, has_text="Paris").first).to_be_visible(timeout=30_000)
        expect(page.get_by_text("What is the capital of France?").first).to_be_visible()
