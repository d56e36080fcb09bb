"""A message over the socket's 1 MiB frame, pasted in a real Chromium: public/input_guard.js keeps it in the
composer with an alert (size, limit, what to do) and the socket stays up; shortened under the frame but over
200,000 characters, it reaches the app, which refuses it with its own answer. English and Chinese browsers.

The app runs in attach mode on a dead URL: the engine plays no part in either refusal, so no vLLM is started.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, WebSocket, expect
from playwright.sync_api import Error as PlaywrightError

from bench.apps import AppServer
from chainlit_app.cleaning import MAX_INPUT_CHARS, MAX_MESSAGE_BYTES
from chainlit_app.testing import ChatPage
from chainlit_app.testing.a11y import MissingAxe, axe_path, check_sync
from chainlit_app.testing.hooks import INPUT_TOO_LARGE, ReplyState
from chainlit_app.web import FRAME_RESERVE_BYTES
from tests.conftest import REQUIRE_ALL
from tests.e2e.conftest import ARTIFACTS, attached_to_nothing, save_screenshot

pytestmark = pytest.mark.e2e

PASSWORD = "big-paste-password"
LIMIT = MAX_MESSAGE_BYTES - FRAME_RESERVE_BYTES
PASTE_BYTES = 1_200_000
SHORTENED_CHARS = 300_000
SEND_WAIT_MS = 120_000
USER_MESSAGES = "[data-step-type=user_message]"


@pytest.fixture(scope="module")
def attached_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    with attached_to_nothing(tmp_path_factory.mktemp("big-paste-app"), PASSWORD) as server:
        yield server


@pytest.fixture(params=["en-US", "zh-CN"])
def localized_page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale=request.param)
    page = context.new_page()
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    # A debugging picture, not a check: on a box of 300,000 characters Chromium's layout outlasted Playwright's
    # default 30 s once in CI and the teardown error failed a test whose every assertion had passed.
    try:
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), timeout=SEND_WAIT_MS)
    except PlaywrightError as exc:
        print(f"teardown screenshot not taken: {str(exc)[:300]}")
    context.close()


def _socket_io(sockets: list[WebSocket]) -> list[WebSocket]:
    return [ws for ws in sockets if "socket.io" in ws.url]


def _refused(state: ReplyState) -> bool:
    return any(n.testid == "chat-input-refused" for n in state.notices)


def test_a_paste_over_the_frame_stays_in_the_composer_and_the_socket_stays_up(
        attached_app: AppServer, localized_page: Page) -> None:
    page = localized_page
    chinese = page.evaluate("navigator.language") == "zh-CN"
    sockets: list[WebSocket] = []
    page.on("websocket", lambda ws: sockets.append(ws))
    chat = ChatPage(page, attached_app.url)
    chat.login("alice", PASSWORD)
    assert len(_socket_io(sockets)) == 1, [ws.url for ws in sockets]
    frames: list[str | bytes] = []
    _socket_io(sockets)[0].on("framesent", lambda payload: frames.append(payload))

    # 1.2 MB of UTF-8: 400,000 Chinese characters (3 bytes each) in Chinese, 1,200,000 letters in English.
    unit = "汉" if chinese else "x"
    paste = unit * (PASTE_BYTES // len(unit.encode()))
    chat.type_and_press_enter(paste)
    alert = chat.too_large_alert
    expect(alert).to_be_visible(timeout=30_000)
    expect(alert).to_have_attribute("role", "alert")
    shown = alert.inner_text()
    print(f"\n[{page.evaluate('navigator.language')}] {shown}")
    assert alert.get_attribute("data-size") == str(PASTE_BYTES)
    assert alert.get_attribute("data-limit") == str(LIMIT)
    assert f"{PASTE_BYTES:,}" in shown and f"{LIMIT:,}" in shown
    assert ("字节" in shown and "缩短" in shown) if chinese else ("bytes" in shown and "shorten" in shown)
    assert chat.composer_text() == paste  # nothing typed is lost
    assert page.locator(USER_MESSAGES).count() == 0  # not sent
    save_screenshot(page, f"input-too-large-{'zh-CN' if chinese else 'en'}.png", timeout_ms=SEND_WAIT_MS)

    # The send button is guarded too; still one alert, still nothing sent.
    page.click("#chat-submit")
    expect(alert).to_have_count(1)
    assert chat.composer_text() == paste and page.locator(USER_MESSAGES).count() == 0
    _check_axe(page)

    # Shortened under the frame but over the app's limit: the alert goes, the app's own refusal comes back
    # over the same socket (had the paste gone out, the transport would have closed it).
    shortened = unit * SHORTENED_CHARS
    page.fill("#chat-input", shortened)
    expect(alert).to_have_count(0)
    # A key or a click on a box holding 300,000 characters waits for Chromium to lay the box out again, which on a
    # busy 2-core machine outlasted Playwright's default 30 s once (a wait allowance, not a timing assertion).
    if chinese:  # both ways of sending let a message under the limit through
        page.click("#chat-submit", timeout=SEND_WAIT_MS)
    else:
        page.press("#chat-input", "Enter", timeout=SEND_WAIT_MS)
    # In English this failed four times out of four on 2026-12-03: Chainlit's markdown renderer looked for e-mail
    # addresses with a quadratic expression and blocked the page for about a minute on one 300,000-letter word, so
    # the socket missed its pings and the refusal went to a closed session. bundle_patch.py serves a linear one;
    # the wait still allows 180 s for a loaded machine (a wait allowance, not a timing assertion).
    state = chat.wait_until(_refused, timeout=180, what="the app's refusal of the shortened message")
    refusal = next(n.text for n in state.notices if n.testid == "chat-input-refused")
    print(f"[{page.evaluate('navigator.language')}] {refusal}")
    assert f"{SHORTENED_CHARS:,}" in refusal and f"{MAX_INPUT_CHARS:,}" in refusal
    assert ("个字符" in refusal) if chinese else ("characters" in refusal)
    assert page.locator(USER_MESSAGES).count() == 1
    # The JSON the browser puts around the text fits in the room the limit leaves for it.
    sent = [f for f in frames if isinstance(f, str) and shortened in f]
    assert len(sent) == 1, [len(f) for f in frames]
    around = len(sent[0].encode()) - len(shortened.encode())
    print(f"frame {len(sent[0].encode()):,} bytes; around the text {around:,} of {FRAME_RESERVE_BYTES:,} reserved")
    assert 0 < around < FRAME_RESERVE_BYTES
    opened = _socket_io(sockets)
    print(f"socket.io websockets opened: {len(opened)}, closed: {sum(ws.is_closed() for ws in opened)}")
    assert len(opened) == 1 and not opened[0].is_closed(), [(ws.url, ws.is_closed()) for ws in sockets]


def _check_axe(page: Page) -> None:
    """The alert itself, judged by axe-core when it is installed (`make axe`); serious or critical fails."""
    try:
        axe_path()
    except MissingAxe as exc:
        if REQUIRE_ALL:
            pytest.fail(str(exc))
        print(f"axe skipped: {exc}")
        return
    violations = check_sync(page, [INPUT_TOO_LARGE])
    print(f"axe on the alert: {len(violations)} violations" + "".join(f"\n  {v}" for v in violations))
    assert not [v for v in violations if v.blocking]
