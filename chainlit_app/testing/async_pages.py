"""Page objects for Playwright's async API: the same steps as `sync_pages`, awaited.

The selectors and in-page scripts are shared (`hooks`); only the awaiting differs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from playwright.async_api import Locator, Page

from chainlit_app.testing import hooks
from chainlit_app.testing.hooks import Finding, LogLine, Notice, ProbeState, ReplyState

POLL_S = 0.1


class AsyncChatPage:
    """One user's chat: log in, wait for the socket, ask, follow the answer, stop, retry, resume."""

    def __init__(self, page: Page, url: str) -> None:
        self.page = page
        self.url = url.rstrip("/")

    async def open(self, timeout: float = 60.0) -> None:
        await self.page.goto(self.url + "/login", timeout=timeout * 1000)
        await self.page.wait_for_selector(hooks.LOGIN_USER, timeout=timeout * 1000)

    async def submit_login(self, user: str, password: str) -> None:
        await self.page.fill(hooks.LOGIN_USER, user)
        await self.page.fill(hooks.LOGIN_PASSWORD, password)
        await self.page.click(hooks.LOGIN_SUBMIT)

    async def wait_connected(self, timeout: float = 60.0) -> None:
        await self.page.wait_for_selector(hooks.WELCOME, timeout=timeout * 1000)

    async def login(self, user: str, password: str, timeout: float = 60.0) -> None:
        await self.open(timeout)
        await self.submit_login(user, password)
        await self.wait_connected(timeout)

    async def ask(self, question: str) -> None:
        await self.page.fill(hooks.CHAT_INPUT, question)
        await self.page.click(hooks.CHAT_SUBMIT)

    async def type_and_press_enter(self, text: str) -> None:
        """Put `text` in the composer (as a paste would) and press Enter, the way most people send."""
        await self.page.fill(hooks.CHAT_INPUT, text)
        await self.page.press(hooks.CHAT_INPUT, "Enter")

    async def composer_text(self) -> str:
        return await self.page.input_value(hooks.CHAT_INPUT)

    @property
    def too_large_alert(self) -> Locator:
        """The alert the browser shows instead of sending a message over the socket's frame limit
        (data-size, data-limit in bytes); the message stays in the composer."""
        return self.page.locator(hooks.INPUT_TOO_LARGE)

    async def reply(self) -> ReplyState:
        return ReplyState.from_page(await self.page.evaluate(hooks.REPLY_STATE_JS))

    async def wait_first_token(self, timeout: float = 300.0) -> ReplyState:
        return await self._wait(lambda r: bool(r.text) or r.ended, timeout, "the answer's first token")

    async def wait_answer(self, timeout: float = 300.0) -> ReplyState:
        return await self._wait(lambda r: r.ended, timeout, "the answer to end")

    async def ask_and_wait(self, question: str, timeout: float = 300.0) -> ReplyState:
        await self.ask(question)
        await self.wait_first_token(timeout)
        return await self.wait_answer(timeout)

    async def stop(self) -> None:
        await self.page.click(hooks.STOP_BUTTON)

    async def retry(self) -> None:
        await self.page.locator(hooks.RETRY).last.click()

    async def notices(self, testid: str | None = None) -> list[Notice]:
        return [n for n in (await self.reply()).notices if testid is None or n.testid == testid]

    def answer_text(self, step_id: str) -> Locator:
        """One answer's text on the page, by its step id (`ReplyState.answers[i].step_id`): measured itself,
        not whichever message happens to be last."""
        return self.page.locator(f"#{step_id} {hooks.ANSWER} {hooks.MESSAGE_TEXT}")

    def thread_id(self) -> str | None:
        path = self.page.url.split("?")[0]
        return path.rsplit("/thread/", 1)[1] if "/thread/" in path else None

    async def resume_thread(self, thread_id: str, timeout: float = 60.0) -> None:
        await self.page.goto(f"{self.url}/thread/{thread_id}", timeout=timeout * 1000)
        await self.page.wait_for_selector("[data-step-type]", timeout=timeout * 1000)
        await self.page.wait_for_selector(hooks.CHAT_INPUT, timeout=timeout * 1000)

    async def transcript(self) -> list[tuple[str, str]]:
        """Every message on the page as (user|assistant, text), hooks or not: a resumed thread's stored
        messages carry no hooks (they are drawn for the live page only)."""
        return [(item["role"], item["text"]) for item in await self.page.evaluate(hooks.TRANSCRIPT_JS)]

    async def wait_until(self, done: Callable[[ReplyState], bool], timeout: float = 300.0,
                   what: str = "the page") -> ReplyState:
        """Until `done` holds for what followed the latest question (e.g. a retried answer)."""
        return await self._wait(done, timeout, what)

    async def _wait(self, done: Callable[[ReplyState], bool], timeout: float, what: str) -> ReplyState:
        deadline = time.monotonic() + timeout
        while True:
            state = await self.reply()
            if done(state):
                return state
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout:.0f} s for {what}; the page shows: {state}")
            await self.page.wait_for_timeout(POLL_S * 1000)


class AsyncFindingCard:
    """One finding card and its remedies, found by kind and remedy id (never by its words)."""

    def __init__(self, root: Locator) -> None:
        self.root = root

    def remedy(self, remedy: str | None = None) -> Locator:
        """The remedy's proposal (data-remedy, data-safe); the first one when no id is given."""
        return self.root.locator(hooks.with_remedy(hooks.REMEDY, remedy))

    def apply_button(self, remedy: str) -> Locator:
        return self.root.locator(hooks.with_remedy(hooks.REMEDY_APPLY, remedy))

    async def apply_fix(self, remedy: str, timeout: float = 30.0) -> None:
        """Press the remedy's Apply button. A risky remedy then asks first: see `confirm_dialog`/`confirm`."""
        await self.apply_button(remedy).click(timeout=timeout * 1000)

    @property
    def confirm_dialog(self) -> Locator:
        return self.root.locator(hooks.REMEDY_CONFIRM)

    @property
    def risk(self) -> Locator:
        return self.confirm_dialog.locator(hooks.REMEDY_RISK)

    async def confirm(self, apply: bool = True) -> None:
        """Answer the risky remedy's question: apply it, or cancel and change nothing."""
        button = hooks.REMEDY_CONFIRM_APPLY if apply else hooks.REMEDY_CONFIRM_CANCEL
        await self.confirm_dialog.locator(button).click()

    @property
    def remedy_state(self) -> Locator:
        """What the applied remedy did or is doing (data-state: running, verified, failed, …)."""
        return self.root.locator(hooks.REMEDY_STATE)

    @property
    def basis(self) -> Locator:
        return self.root.locator(hooks.FINDING_BASIS)

    @property
    def seen_by(self) -> Locator:
        """The app processes that saw the finding, with their counts (a cluster sharing its findings)."""
        return self.root.locator(hooks.FINDING_SEEN_BY)


class AsyncDiagnosticsPanel:
    """The admin's side panel: engine state, findings by kind, the log."""

    def __init__(self, page: Page) -> None:
        self.page = page

    @property
    def root(self) -> Locator:
        return self.page.locator(hooks.PANEL)

    async def open(self, timeout: float = 30.0) -> None:
        """By the welcome notice's button, or by the /diagnostics command once that notice has scrolled
        away or was replaced (a new thread's page)."""
        on_thread = "/thread/" in self.page.url
        button = self.page.locator(hooks.OPEN_DIAGNOSTICS)
        if await button.count():
            await button.last.click(timeout=timeout * 1000)
        else:
            await self.page.fill(hooks.CHAT_INPUT, hooks.DIAGNOSTICS_COMMAND)
            await self.page.click(hooks.CHAT_SUBMIT)
        await self.page.wait_for_selector(hooks.PANEL, timeout=timeout * 1000)
        if not on_thread and await self.page.evaluate(hooks.HISTORY_ON_JS):  # see hooks.THREAD_URL
            await self.page.wait_for_url(hooks.THREAD_URL, timeout=timeout * 1000)
            await self.page.wait_for_timeout(hooks.PANEL_SETTLE_MS)
            await self.page.wait_for_selector(hooks.PANEL, timeout=timeout * 1000)

    async def engine_state(self) -> str:
        return await self.page.locator(hooks.ENGINE_STATE).get_attribute("data-state") or ""

    async def wait_engine_state(self, *states: str, timeout: float = 300.0) -> str:
        selector = ", ".join(f'{hooks.ENGINE_STATE}[data-state="{s}"]' for s in states)
        await self.page.wait_for_selector(selector, timeout=timeout * 1000)
        return await self.engine_state()

    def finding(self, kind: str, remedy: str | None = None, open_only: bool = False) -> AsyncFindingCard:
        """The first card of a kind (the one whose remedy `remedy` is proposed, running or done, when given),
        by data-kind and data-remedy. Resolved cards count by default: a locator is looked up again on
        each use, and the card must stay found while its own remedy resolves it."""
        cards = self.finding_cards(kind, open_only)
        if remedy:
            cards = cards.filter(has=self.page.locator(f'[data-remedy="{remedy}"]'))
        return AsyncFindingCard(cards.first)

    def engine_fact(self, name: str) -> Locator:
        return self.page.locator(f'{hooks.ENGINE_FACT}[data-name="{name}"]')

    def overrides(self, remedy: str | None = None) -> Locator:
        """The settings remedies changed (data-remedy, data-field, data-auto), each with its Undo button."""
        return self.page.locator(hooks.with_remedy(hooks.OVERRIDE, remedy))

    def no_overrides(self) -> Locator:
        return self.page.locator(hooks.NO_OVERRIDES)

    def undo_button(self, remedy: str) -> Locator:
        return self.overrides(remedy).locator(hooks.REMEDY_UNDO)

    def launches(self, launch_id: str | None = None) -> Locator:
        """The engine's launches, newest first (data-launch-id, data-exit, data-gave-up)."""
        return self.page.locator(hooks.launch_selector(launch_id))

    async def open_launch(self, launch_id: str, timeout: float = 30.0) -> Locator:
        """Unfold one launch (it then loads its command and last lines); returns its element."""
        launch = self.launches(launch_id)
        await launch.locator(hooks.LAUNCH_TOGGLE).click(timeout=timeout * 1000)
        return launch

    def launch_command(self, launch_id: str) -> Locator:
        return self.launches(launch_id).locator(hooks.LAUNCH_COMMAND)

    def launch_lines(self, launch_id: str) -> Locator:
        return self.launches(launch_id).locator(hooks.LAUNCH_LINES)

    def crash_loop(self) -> Locator:
        return self.page.locator(hooks.CRASH_LOOP)

    async def probe_state(self) -> ProbeState | None:
        """The completion probe as the panel shows it (None before the panel has read it)."""
        raw = await self.page.evaluate(hooks.PROBE_STATE_JS)
        return ProbeState(bool(raw["degraded"]), raw["last_ok"]) if raw else None

    def finding_cards(self, kind: str | None = None, open_only: bool = True) -> Locator:
        return self.page.locator(hooks.finding_selector(kind, open_only))

    async def findings(self, kind: str | None = None, open_only: bool = True) -> list[Finding]:
        raw = await self.page.evaluate(hooks.FINDINGS_JS, hooks.finding_selector(kind, open_only))
        return [Finding.from_page(item) for item in raw]

    async def wait_finding(self, kind: str, open_only: bool = True, timeout: float = 30.0) -> Finding:
        await self.finding_cards(kind, open_only).first.wait_for(state="attached", timeout=timeout * 1000)
        return (await self.findings(kind, open_only))[0]

    async def log_lines(self, level: str | None = None) -> list[LogLine]:
        lines = [LogLine(item["level"], item["text"]) for item in await self.page.evaluate(hooks.LOG_LINES_JS)]
        return [line for line in lines if level is None or line.level == level]
