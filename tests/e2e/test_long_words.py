"""A message holding one very long word shows whole, the session keeps answering, and e-mail addresses in a
message are still links: the page runs Chainlit's markdown renderer with bundle_patch.py's linear e-mail
expression in place of the quadratic one (on the quadratic one a 100,000-letter word held the page for 10.8 s
and 300,000 letters for about a minute; `python -m bench.long_words` prints both side by side).

The app runs in attach mode on a dead URL: its reply is the start-up notice saying the engine is not there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from bench.apps import AppServer
from chainlit_app.bundle_patch import LINEAR_EMAIL
from chainlit_app.testing import ChatPage
from chainlit_app.testing.hooks import ReplyState
from tests.e2e.conftest import attached_to_nothing

pytestmark = pytest.mark.e2e

PASSWORD = "long-words-password"
USER_MESSAGES = "[data-step-type=user_message]"
WORD = "x" * 150_000  # under the app's 200,000 characters, so the app takes it and answers


@pytest.fixture(scope="module")
def attached_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    with attached_to_nothing(tmp_path_factory.mktemp("long-words-app"), PASSWORD) as server:
        yield server


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    yield context.new_page()
    context.close()


def _answered(state: ReplyState) -> bool:
    return any(n.testid == "chat-startup" and n.state == "failed" for n in state.notices)


def test_a_long_word_shows_whole_the_app_answers_and_addresses_stay_links(attached_app: AppServer,
                                                                          page: Page) -> None:
    chat = ChatPage(page, attached_app.url)
    chat.login("alice", PASSWORD)
    script = page.evaluate("[...document.scripts].map(s => s.src).find(s => s.includes('/assets/index-'))")
    assert LINEAR_EMAIL in page.request.get(script).text()  # the page runs the patched renderer

    chat.type_and_press_enter(f"{WORD} write to ops@example.com, or a.b+c@mail.example.org.")
    bubble = page.locator(USER_MESSAGES).last
    chat.wait_until(_answered, timeout=180, what="the app's answer after the long word")
    shown = bubble.inner_text()
    print(f"\nbubble: {len(shown):,} characters")
    assert WORD in shown
    links = bubble.locator("a[href^='mailto:']")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    print(f"links: {hrefs}")
    assert hrefs == ["mailto:ops@example.com", "mailto:a.b+c@mail.example.org"]
    assert page.locator(USER_MESSAGES).count() == 1
