"""Page objects for scripted UI tests of the chat (Playwright; sync here, async in `.async_pages`).

Playwright is needed only here: `pip install 'chainlit-vllm-console[smoke]'` (or the dev extra) brings it,
and importing `chainlit_app` never does. Example (README, "Scripted UI tests"):

    from playwright.sync_api import sync_playwright
    from chainlit_app.testing import ChatPage, DiagnosticsPanel, launch_chromium

    with sync_playwright() as p:
        page = launch_chromium(p).new_page()
        chat = ChatPage(page, "http://127.0.0.1:8000")
        chat.login("admin", "...")
        assert "Paris" in chat.ask_and_wait("What is the capital of France?").text
        panel = DiagnosticsPanel(page)
        panel.open()
        assert not panel.findings(kind="connection")
"""

from __future__ import annotations

from chainlit_app.testing.browser import MissingChromium, chromium_path, launch_chromium
from chainlit_app.testing.hooks import Finding, LogLine, Notice, ProbeState, ReplyState
from chainlit_app.testing.sync_pages import ChatPage, DiagnosticsPanel, FindingCard

__all__ = ["ChatPage", "DiagnosticsPanel", "Finding", "FindingCard", "LogLine", "MissingChromium", "Notice",
           "ProbeState", "ReplyState",
           "chromium_path", "launch_chromium"]
