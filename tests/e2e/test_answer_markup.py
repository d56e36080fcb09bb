"""An answer carrying more markdown delimiters than CHAT_ANSWER_MARKUP_LIMIT is shown as a text block, through the
app's own chat path: the session's real vLLM on the demo model, a second app attached to it with a low limit, a
real Chromium. At the default limit (1,000) only runaway answers trip it (`python -m bench.answer_markup` shows
what such answers cost the page as markdown); here the limit is 10, so that the demo model's short answer that
copies twenty bracketed letters trips it. A short answer without markup in the same app stays markdown, and a
resumed thread shows the stored answer as it streamed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from chainlit_app.answer_markup import MarkupBudget
from chainlit_app.testing import ChatPage
from chainlit_app.testing.hooks import MESSAGE_TEXT
from tests.e2e.conftest import USER_PASSWORD, AppServer, run_app, save_screenshot
from tests.e2e.test_diagnostics_panel import _engine, _engine_key

pytestmark = pytest.mark.e2e

LIMIT = 10
# at temperature 0 the demo model copies the brackets back (36 delimiters when this test was written)
COPY_BRACKETS = "Copy exactly: " + " ".join(f"[{letter}]" for letter in "abcdefghijklmnopqrst")
TEXT_BLOCK = "pre code"


@pytest.fixture(scope="module")
def low_limit_app(app_server: AppServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    engine = _engine(app_server)
    url, key = f"http://127.0.0.1:{engine['port']}/v1", _engine_key(int(engine["pid"]))
    with run_app(Path(tmp_path_factory.mktemp("markup-app")), ("attached",), CHAT_MODE="attach", CHAT_VLLM_URL=url,
                 CHAT_API_KEY=key, CHAT_TEMPERATURE="0", CHAT_ANSWER_MARKUP_LIMIT=str(LIMIT)) as server:
        yield server


def delimiters(text: str) -> int:
    """As the app counts them (answer_markup.py)."""
    budget = MarkupBudget(LIMIT)
    budget.add(text)
    return budget.count


def test_an_answer_over_the_markup_limit_shows_as_text_also_when_resumed(low_limit_app: AppServer,
                                                                         page: Page) -> None:
    chat = ChatPage(page, low_limit_app.url)
    chat.login("alice", USER_PASSWORD)
    reply = chat.ask_and_wait(COPY_BRACKETS, timeout=300)
    answer = reply.answers[-1]
    assert delimiters(answer.text) > LIMIT, f"the demo model no longer copies the brackets: {answer}"
    shown = chat.answer_text(answer.step_id)
    assert shown.locator(TEXT_BLOCK).count() == 1, shown.inner_html()
    block = shown.locator(TEXT_BLOCK).inner_text()
    assert block.count("[") + block.count("]") > LIMIT, block  # every delimiter shows, as written
    # it wraps like prose (public/answer_text.css): the reader scrolls down, not sideways
    assert shown.locator(TEXT_BLOCK).evaluate("e => e.scrollWidth <= e.clientWidth + 1"), block
    save_screenshot(page, "answer-markup-as-text.png")

    plain = chat.ask_and_wait("What is the capital of France?", timeout=300).answers[-1]
    assert delimiters(plain.text) <= LIMIT, plain
    assert chat.answer_text(plain.step_id).locator(TEXT_BLOCK).count() == 0  # still markdown

    thread_id = chat.thread_id()
    assert thread_id, page.url
    chat.resume_thread(thread_id)
    resumed = page.locator(f"#{answer.step_id} {MESSAGE_TEXT} {TEXT_BLOCK}")  # stored messages carry no hooks
    resumed.wait_for(timeout=60_000)
    assert resumed.inner_text() == block
