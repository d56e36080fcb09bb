"""Nothing lost: a crash of the model server mid-answer, and a restart of the whole app."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from chainlit_app.testing.hooks import RETRY, WELCOME
from tests.e2e.conftest import ADMIN_PASSWORD, AppServer, ask_long_and_wait_for_text, login, run_app
from tests.e2e.test_accessibility import assert_app_chat_accessible
from tests.e2e.test_diagnostics_panel import _engine, _engine_key
from tests.timing import assert_within

pytestmark = pytest.mark.e2e


def test_crash_mid_answer_keeps_the_partial_answer_and_retry_works(app_server: AppServer, page: Page) -> None:
    chat = login(page, app_server.url, "admin", ADMIN_PASSWORD)
    expect(page.locator(WELCOME)).to_have_attribute("data-state", "ready")
    ask_long_and_wait_for_text(page)
    os.kill(int(_engine(app_server)["pid"]), signal.SIGKILL)
    killed = time.monotonic()
    page.wait_for_selector("[data-testid=chat-answer][data-failure]", timeout=10_000)
    # the user hears about the crash within 2 s; the page needs up to half a second more to show it
    assert_within(time.monotonic() - killed, 2.5, "showing the crash to the user (2 s + 0.5 s to render)")
    cut = chat.wait_answer(10).answers[-1]
    assert cut.failure == "connection", cut
    assert "cannot be reached" in cut.text
    assert len(cut.text.split("Interrupted")[0].strip()) > 40, "the partial answer must be kept"
    expect(page.locator(RETRY)).to_have_count(1)
    assert_app_chat_accessible(page)  # the failure note and the Retry button included
    # Retry waits for the automatic restart, then answers the same question again.
    chat.retry()
    page.wait_for_selector("[data-testid=chat-retrying]", timeout=10_000)
    again = chat.wait_until(lambda r: len(r.answers) == 2 and r.answers[-1].done and not r.answers[-1].failure,
                            timeout=300, what="the retried answer")
    assert len(again.text) > 200, again.text
    assert int(_engine(app_server)["restarts"]) >= 1


def test_history_survives_an_app_restart(app_server: AppServer, page: Page, tmp_path: Path) -> None:
    """A second app (attached to the first one's vLLM) with its own SQLite history, restarted in between."""
    engine = _engine(app_server)
    env = {"CHAT_MODE": "attach", "CHAT_VLLM_URL": f"http://127.0.0.1:{engine['port']}/v1",
           "CHAT_API_KEY": _engine_key(int(engine["pid"])), "CHAT_TEMPERATURE": "0"}
    with run_app(tmp_path, ("attached",), **env) as first:
        chat = login(page, first.url, "admin", ADMIN_PASSWORD)
        expect(page.locator(WELCOME)).to_have_attribute("data-state", "attached")  # attach mode's "ready"
        assert "Paris" in chat.ask_and_wait("What is the capital of France?", timeout=60).text
        thread = chat.thread_id()
        assert thread, page.url
        time.sleep(1.5)  # let the data layer write the last step
    assert (tmp_path / "chat.db").stat().st_size > 0
    with run_app(tmp_path, ("attached",), **env) as second:
        page.context.clear_cookies()  # cookies ignore the port: start as a new visitor of the new app
        chat = login(page, second.url, "admin", ADMIN_PASSWORD)
        chat.resume_thread(thread)
        page.wait_for_function("() => document.body.innerText.includes('Paris')", timeout=30_000)
        transcript = chat.transcript()
        assert ("user", "What is the capital of France?") in transcript, transcript
        assert any(role == "assistant" and "Paris" in text for role, text in transcript), transcript
        # and the resumed thread goes on: the model sees it again
        assert chat.ask_and_wait("And of Italy?", timeout=60).text
