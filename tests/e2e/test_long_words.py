"""A message holding one very long word, or 60,000 characters of markdown's delimiters, shows whole and at once,
exactly as typed, and the session keeps answering. User messages are shown as text (`.chainlit/config.toml`,
`user_message_markdown = false`): Chainlit's markdown parser held the page 31 to 47 s on such pastes, and its
e-mail autolinking 22 s on 199,000 letters. Answers are still markdown, rendered by the page script
bundle_patch.py serves with a linear e-mail expression (`python -m bench.long_words` prints both side by side).

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
LOG_LINE = 'File "/x/vllm/__init__.py", line 7, in <module> **kwargs [see](here) # not a heading ops@example.com'
PASTES = {
    "one long word": "x" * 150_000,  # under the app's 200,000 characters, so the app takes it and answers
    "link labels": "[a]" * 20_000,
    "emphasis": "a*" * 30_000,
}


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


@pytest.mark.parametrize("shape", list(PASTES))
def test_a_paste_shows_whole_as_typed_and_the_app_answers(attached_app: AppServer, page: Page, shape: str) -> None:
    chat = ChatPage(page, attached_app.url)
    chat.login("alice", PASSWORD)
    script = page.evaluate("[...document.scripts].map(s => s.src).find(s => s.includes('/assets/index-'))")
    assert LINEAR_EMAIL in page.request.get(script).text()  # answers are rendered with the linear expression

    chat.type_and_press_enter(f"{PASTES[shape]}\n{LOG_LINE}")
    bubble = page.locator(USER_MESSAGES).last
    chat.wait_until(_answered, timeout=180, what="the app's answer after the paste")
    shown = bubble.inner_text()
    print(f"\n{shape}: bubble {len(shown):,} characters")
    assert PASTES[shape] in shown and LOG_LINE in shown  # as typed: no markup taken out
    assert bubble.locator("a, strong, em, h1").count() == 0  # nothing turned into links, emphasis or headings
    assert page.locator(USER_MESSAGES).count() == 1
