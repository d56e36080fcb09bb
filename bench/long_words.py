"""How long a real Chromium page takes to show one message holding one long word, with Chainlit's own page
script and with the app's (bundle_patch.py's linear e-mail expression), side by side in one run.

`python -m bench.long_words`. The app runs in attach mode on a dead URL (the engine plays no part). One
browser, one login per variant; the original script is put back with Playwright's request routing, so both
variants run against the same app. Figures only, never asserted: the ratio is what to read.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import chainlit
from playwright.sync_api import Route, sync_playwright

from bench.apps import CHAT_USER, free_port, start_app
from bench.browser_check import ARGS, CHROMIUM
from chainlit_app.bundle_patch import entry_script
from chainlit_app.testing import ChatPage

LENGTHS = (25_000, 50_000, 100_000, 199_000)  # the app takes up to 200,000 characters
BUILD_DIR = Path(chainlit.__file__).parent / "frontend" / "dist"
SHOWN = "([n]) => { const m = document.querySelectorAll('[data-step-type=user_message]'); " \
        "return m.length > 0 && m[m.length - 1].innerText.length >= n; }"


def seconds_to_show(chat: ChatPage, letters: int) -> float:
    """From Enter to the newest user bubble holding the whole word (the page's main thread must be free to
    answer the check, so a blocked page counts in full); then waits for the app's reply, so that the composer
    takes the next message."""
    chat.page.fill("#chat-input", "x" * letters)
    started = time.perf_counter()
    chat.page.press("#chat-input", "Enter", timeout=600_000)
    chat.page.wait_for_function(SHOWN, arg=[letters], timeout=600_000, polling=50)
    shown = time.perf_counter() - started
    chat.wait_until(lambda state: state.ended, timeout=600, what="the app's reply")
    return shown


def measure(url: str, password: str, original: bool) -> dict[int, float]:
    script = entry_script(BUILD_DIR)
    assert script is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        if original:
            def chainlit_own(route: Route) -> None:
                route.fulfill(body=script.read_bytes(), content_type="text/javascript")
            page.route(f"**/assets/{script.name}", chainlit_own)
        chat = ChatPage(page, url)
        chat.login(CHAT_USER, password)  # returns when the welcome shows: the session is up
        figures: dict[int, float] = {}
        for n in LENGTHS:
            figures[n] = seconds_to_show(chat, n)
            variant = "Chainlit's" if original else "the app's"
            print(f"  {variant} script, one word of {n:,} letters: shown after {figures[n]:.2f} s", flush=True)
        browser.close()
    return figures


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-long-words-") as tmp:
        app = start_app(Path(tmp) / "app", CHAT_MODE="attach", CHAT_VLLM_URL=f"http://127.0.0.1:{free_port()}/v1",
                        CHAT_STARTUP_TIMEOUT="3")
        try:
            asyncio.run(app.wait_http(timeout=120))
            own = measure(app.url, app.user_password, original=True)
            patched = measure(app.url, app.user_password, original=False)
        finally:
            app.stop()
    print("letters in one word | Chainlit's script (s) | the app's script (s) | ratio")
    for n in LENGTHS:
        print(f"{n:>19,} | {own[n]:>21.2f} | {patched[n]:>20.2f} | {own[n] / patched[n]:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
