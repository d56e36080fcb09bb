"""The async page objects drive the same page as the sync ones (the suite uses the sync ones)."""

from __future__ import annotations

import pytest
from playwright.async_api import async_playwright

from chainlit_app.testing.async_pages import AsyncChatPage, AsyncDiagnosticsPanel
from chainlit_app.testing.browser import MissingChromium, launch_options
from tests.conftest import REQUIRE_ALL
from tests.e2e.conftest import ADMIN_PASSWORD, AppServer, run_in_thread

pytestmark = pytest.mark.e2e


async def _script(url: str) -> tuple[str, str, list[str], int]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**launch_options())
        try:
            page = await browser.new_page()
            chat = AsyncChatPage(page, url)
            await chat.login("admin", ADMIN_PASSWORD)
            reply = await chat.ask_and_wait("What is the capital of France?", timeout=120)
            panel = AsyncDiagnosticsPanel(page)
            await panel.open()
            state = await panel.wait_engine_state("ready", timeout=60)
            kinds = [f.kind for f in await panel.findings()]
            lines = await panel.log_lines()
            return reply.text, state, kinds, len(lines)
        finally:
            await browser.close()


def test_async_page_objects_log_in_ask_and_read_the_panel(app_server: AppServer) -> None:
    try:
        launch_options()
    except MissingChromium as exc:
        if REQUIRE_ALL:
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    text, state, kinds, lines = run_in_thread(_script(app_server.url))
    print(f"\nasync: answer {text!r}, engine {state}, open findings {kinds}, {lines} log lines")
    assert "Paris" in text and state == "ready" and lines > 0
