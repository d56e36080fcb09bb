"""A user in a real browser: log in, ask, watch the answer stream in, stop a long answer."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import ADMIN_PASSWORD, AppServer, ask, ask_long_and_wait_for_text, login, save_screenshot

pytestmark = pytest.mark.e2e

ANSWERS = ".ai-message .message-content"
RECORD_GROWTH = """
() => {
  window.__lengths = [];
  const seen = () => {
    const nodes = document.querySelectorAll('.ai-message .message-content');
    const last = nodes[nodes.length - 1];
    if (last) window.__lengths.push(last.innerText.length);
  };
  new MutationObserver(seen).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""


def _last_answer(page: Page) -> str:
    return page.locator(ANSWERS).last.inner_text()


def test_question_gets_a_streamed_correct_answer(app_server: AppServer, page: Page) -> None:
    login(page, app_server.url, "admin", ADMIN_PASSWORD)
    page.wait_for_selector("text=is ready", timeout=30_000)
    page.evaluate(RECORD_GROWTH)
    ask(page, "What is the capital of France?")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.ai-message .message-content')].some(n => n.innerText.includes('Paris'))",
        timeout=60_000,
    )
    time.sleep(1)
    lengths: list[int] = page.evaluate("window.__lengths")
    growing = sorted({n for n in lengths if n > 0})
    assert len(growing) >= 2, f"the answer did not grow while streaming: {lengths[:40]}"
    assert "Paris" in _last_answer(page)
    save_screenshot(page, "chat.png")


def test_stop_ends_a_long_answer(app_server: AppServer, page: Page) -> None:
    login(page, app_server.url, "admin", ADMIN_PASSWORD)
    page.wait_for_selector("text=is ready", timeout=30_000)
    ask_long_and_wait_for_text(page)
    page.click("#stop-button")
    marked = page.locator(ANSWERS, has_text="Stopped by the user")
    marked.wait_for(timeout=15_000)
    stopped_text = marked.last.inner_text()
    time.sleep(3)
    assert marked.last.inner_text() == stopped_text, "the answer kept growing after Stop"
    partial = stopped_text.replace("(Stopped by the user.)", "").strip()
    assert len(partial) > 40, "the partial answer must be kept"
    # The chat still works after a stop.
    ask(page, "What is the capital of France?")
    page.wait_for_function(
        "() => { const n = document.querySelectorAll('.ai-message .message-content');"
        " return n.length && n[n.length - 1].innerText.includes('Paris'); }",
        timeout=60_000,
    )


def test_vllm_was_launched_before_the_web_server_started(app_server: AppServer) -> None:
    """With a warm preflight cache (every start after an install's first), `chainlit run app.py` launches
    vLLM as its interpreter starts (the .pth hook of chainlit_app/prelaunch.py), before Chainlit imports
    itself, and start-up adopts that launch instead of launching again."""
    lines = app_server.log_text().splitlines()
    launched = [i for i, line in enumerate(lines) if "vLLM launched (pid" in line]
    serving = [i for i, line in enumerate(lines) if "Your app is available at" in line]
    assert launched and serving, "\n".join(lines[:40])
    assert launched[0] < serving[0], "vLLM should be launched before the web server starts"
    assert any("vLLM launched at interpreter start, before Chainlit was imported" in line for line in lines), \
        "\n".join(lines[:40])
