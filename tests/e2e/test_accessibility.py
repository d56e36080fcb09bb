"""Accessibility of what the app draws itself: axe-core (npm, `make axe`) injected by Playwright into the
real page, and the diagnostics panel used with the keyboard alone.

Chainlit's own page is reported (printed) but not held against the app: only the panel and the chat's
own notices and answers must have no serious or critical violation.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from chainlit_app.testing import ChatPage, DiagnosticsPanel
from chainlit_app.testing.a11y import MissingAxe, Violation, axe_path, check_sync
from tests.conftest import REQUIRE_ALL
from tests.e2e.conftest import ADMIN_PASSWORD, AppServer

pytestmark = pytest.mark.e2e

# The app's own parts of the chat: the text of its notices and answers, and its buttons. Chainlit's own
# icon buttons under every message (copy, feedback) are Chainlit's, reported with the whole page.
APP_CHAT_ELEMENTS = ["[data-testid^='chat-'] .message-content", "button[data-testid^='chat-']"]
FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || !el.closest('[data-testid=diag-panel]')) return null;
  const style = getComputedStyle(el);
  return {testid: el.getAttribute('data-testid') || el.tagName.toLowerCase(),
          outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
          shadow: style.boxShadow !== 'none'};
}"""


def need_axe() -> None:
    """axe-core comes from `make axe` (npm); under `make test` its absence is a failure."""
    try:
        axe_path()
    except MissingAxe as exc:
        if REQUIRE_ALL:
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.fixture(autouse=True)
def _axe() -> None:
    need_axe()


def _report(where: str, violations: list[Violation]) -> list[Violation]:
    print(f"\naxe on {where}: {len(violations)} violations"
          + "".join(f"\n  {v}" for v in violations))
    return [v for v in violations if v.blocking]


def test_chat_notices_and_answers_pass_axe(app_server: AppServer, page: Page) -> None:
    chat = ChatPage(page, app_server.url)
    chat.login("admin", ADMIN_PASSWORD)
    assert "paris" in chat.ask_and_wait("What is the capital of France?").text.lower()
    _report("the whole chat page (Chainlit's included; not asserted)", check_sync(page, ["body"]))
    assert_app_chat_accessible(page)


def assert_app_chat_accessible(page: Page) -> None:
    """No serious or critical axe violation in the app's own chat elements present on the page."""
    need_axe()
    present = [selector for selector in APP_CHAT_ELEMENTS if page.locator(selector).count()]
    blocking = _report(f"the app's own chat elements ({', '.join(present)})", check_sync(page, present))
    assert not blocking, "\n".join(map(str, blocking))


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_panel_passes_axe_and_works_by_keyboard_alone(app_server: AppServer, page: Page, theme: str) -> None:
    page.add_init_script(f"localStorage.setItem('vite-ui-theme', '{theme}')")  # Chainlit's theme switch
    chat = ChatPage(page, app_server.url)
    chat.login("admin", ADMIN_PASSWORD)
    panel = DiagnosticsPanel(page)
    panel.open()
    panel.wait_engine_state("ready")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=diag-log-line]').length > 5")
    assert page.evaluate("document.documentElement.classList.contains('dark')") == (theme == "dark")
    blocking = _report(f"the diagnostics panel ({theme} theme)", check_sync(page, ["[data-testid=diag-panel]"]))
    assert not blocking, "\n".join(map(str, blocking))

    # Keyboard only: Tab from the composer until the focus is in the panel, then through it (panel.open() has
    # waited for the panel's second showing on a chat's first interaction).
    page.focus("#chat-input")
    order: list[str] = []
    for _ in range(80):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused is None:
            if order:
                break
            continue
        assert focused["outline"] or focused["shadow"], f"no visible focus on {focused['testid']}"
        order.append(focused["testid"])
    print("focus order in the panel:", order)
    wanted = ["diag-log-follow", "diag-log-level", "diag-log-filter", "diag-log-lines"]
    assert [t for t in order if t in wanted] == wanted, order

    # ... and each control does its job from the keyboard.
    page.focus("[data-testid=diag-log-follow]")
    page.keyboard.press("Space")
    expect(page.locator("[data-testid=diag-log-follow]")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Enter")
    expect(page.locator("[data-testid=diag-log-follow]")).to_have_attribute("aria-pressed", "false")
    page.focus("[data-testid=diag-log-filter]")
    page.keyboard.type("vllm")
    page.wait_for_timeout(1500)  # a poll of the panel
    lines = panel.log_lines()
    assert lines and all("vllm" in line.text.lower() for line in lines), lines[:3]
    page.focus("[data-testid=diag-log-level]")
    page.select_option("[data-testid=diag-log-level]", "ERROR")  # what ArrowDown x3 then Enter does
    page.wait_for_timeout(1500)
    assert all(line.level == "ERROR" for line in panel.log_lines())
