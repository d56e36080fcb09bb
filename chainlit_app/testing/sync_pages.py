"""Page objects for Playwright's sync API: the chat and the admin's diagnostics panel.

They find everything by the app's stable hooks (README, "Scripted UI tests") and Chainlit's element ids,
never by display text, so a script keeps working in any language and across the app's restyling.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from playwright.sync_api import Locator, Page

from chainlit_app.testing import hooks
from chainlit_app.testing.hooks import Finding, LogLine, Notice, ProbeState, ReplyState

POLL_S = 0.1


class ChatPage:
    """One user's chat: log in, wait for the socket, ask, follow the answer, stop, retry, resume."""

    def __init__(self, page: Page, url: str) -> None:
        self.page = page
        self.url = url.rstrip("/")

    def open(self, timeout: float = 60.0) -> None:
        self.page.goto(self.url + "/login", timeout=timeout * 1000)
        self.page.wait_for_selector(hooks.LOGIN_USER, timeout=timeout * 1000)

    def submit_login(self, user: str, password: str) -> None:
        self.page.fill(hooks.LOGIN_USER, user)
        self.page.fill(hooks.LOGIN_PASSWORD, password)
        self.page.click(hooks.LOGIN_SUBMIT)

    def wait_connected(self, timeout: float = 60.0) -> None:
        """The welcome notice is sent over the socket once the chat session has started: a message typed
        before that would be lost."""
        self.page.wait_for_selector(hooks.WELCOME, timeout=timeout * 1000)

    def login(self, user: str, password: str, timeout: float = 60.0) -> None:
        self.open(timeout)
        self.submit_login(user, password)
        self.wait_connected(timeout)

    def ask(self, question: str) -> None:
        self.page.fill(hooks.CHAT_INPUT, question)
        self.page.click(hooks.CHAT_SUBMIT)

    def type_and_press_enter(self, text: str) -> None:
        """Put `text` in the composer (as a paste would) and press Enter, the way most people send."""
        self.page.fill(hooks.CHAT_INPUT, text)
        self.page.press(hooks.CHAT_INPUT, "Enter")

    def composer_text(self) -> str:
        return self.page.input_value(hooks.CHAT_INPUT)

    @property
    def too_large_alert(self) -> Locator:
        """The alert the browser shows instead of sending a message over the socket's frame limit
        (data-size, data-limit in bytes); the message stays in the composer."""
        return self.page.locator(hooks.INPUT_TOO_LARGE)

    def reply(self) -> ReplyState:
        """What followed the latest question, as the page shows it now."""
        return ReplyState.from_page(self.page.evaluate(hooks.REPLY_STATE_JS))

    def wait_first_token(self, timeout: float = 300.0) -> ReplyState:
        """Until the answer shows text, or the app says why it will not."""
        return self._wait(lambda r: bool(r.text) or r.ended, timeout, "the answer's first token")

    def wait_answer(self, timeout: float = 300.0) -> ReplyState:
        """Until the answer is complete (the stop button is gone), or the app says why there is none."""
        return self._wait(lambda r: r.ended, timeout, "the answer to end")

    def ask_and_wait(self, question: str, timeout: float = 300.0) -> ReplyState:
        self.ask(question)
        self.wait_first_token(timeout)
        return self.wait_answer(timeout)

    def stop(self) -> None:
        self.page.click(hooks.STOP_BUTTON)

    def retry(self) -> None:
        """Press the latest Retry button (under a failure notice or an interrupted answer)."""
        self.page.locator(hooks.RETRY).last.click()

    def notices(self, testid: str | None = None) -> list[Notice]:
        """The app's notices after the latest question (all of one test id when given)."""
        return [n for n in self.reply().notices if testid is None or n.testid == testid]

    def answer_text(self, step_id: str) -> Locator:
        """One answer's text on the page, by its step id (`ReplyState.answers[i].step_id`): measured itself,
        not whichever message happens to be last."""
        return self.page.locator(f"#{step_id} {hooks.ANSWER} {hooks.MESSAGE_TEXT}")

    def thread_id(self) -> str | None:
        path = self.page.url.split("?")[0]
        return path.rsplit("/thread/", 1)[1] if "/thread/" in path else None

    def resume_thread(self, thread_id: str, timeout: float = 60.0) -> None:
        """Open a stored thread and wait until its messages are shown and the composer is ready."""
        self.page.goto(f"{self.url}/thread/{thread_id}", timeout=timeout * 1000)
        self.page.wait_for_selector("[data-step-type]", timeout=timeout * 1000)
        self.page.wait_for_selector(hooks.CHAT_INPUT, timeout=timeout * 1000)

    def transcript(self) -> list[tuple[str, str]]:
        """Every message on the page as (user|assistant, text), hooks or not: a resumed thread's stored
        messages carry no hooks (they are drawn for the live page only)."""
        return [(item["role"], item["text"]) for item in self.page.evaluate(hooks.TRANSCRIPT_JS)]

    def wait_until(self, done: Callable[[ReplyState], bool], timeout: float = 300.0,
                   what: str = "the page") -> ReplyState:
        """Until `done` holds for what followed the latest question (e.g. a retried answer)."""
        return self._wait(done, timeout, what)

    def _wait(self, done: Callable[[ReplyState], bool], timeout: float, what: str) -> ReplyState:
        deadline = time.monotonic() + timeout
        while True:
            state = self.reply()
            if done(state):
                return state
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout:.0f} s for {what}; the page shows: {state}")
            self.page.wait_for_timeout(POLL_S * 1000)


class FindingCard:
    """One finding card and its remedies, found by kind and remedy id (never by its words)."""

    def __init__(self, root: Locator) -> None:
        self.root = root

    def remedy(self, remedy: str | None = None) -> Locator:
        """The remedy's proposal (data-remedy, data-safe); the first one when no id is given."""
        return self.root.locator(hooks.with_remedy(hooks.REMEDY, remedy))

    def apply_button(self, remedy: str) -> Locator:
        return self.root.locator(hooks.with_remedy(hooks.REMEDY_APPLY, remedy))

    def apply_fix(self, remedy: str, timeout: float = 30.0) -> None:
        """Press the remedy's Apply button. A risky remedy then asks first: see `confirm_dialog`/`confirm`."""
        self.apply_button(remedy).click(timeout=timeout * 1000)

    @property
    def confirm_dialog(self) -> Locator:
        return self.root.locator(hooks.REMEDY_CONFIRM)

    @property
    def risk(self) -> Locator:
        return self.confirm_dialog.locator(hooks.REMEDY_RISK)

    def confirm(self, apply: bool = True) -> None:
        """Answer the risky remedy's question: apply it, or cancel and change nothing."""
        button = hooks.REMEDY_CONFIRM_APPLY if apply else hooks.REMEDY_CONFIRM_CANCEL
        self.confirm_dialog.locator(button).click()

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


class DiagnosticsPanel:
    """The admin's side panel: engine state, findings by kind, the log."""

    def __init__(self, page: Page) -> None:
        self.page = page

    @property
    def root(self) -> Locator:
        return self.page.locator(hooks.PANEL)

    def open(self, timeout: float = 30.0) -> None:
        """By the welcome notice's button, or by the /diagnostics command once that notice has scrolled
        away or was replaced (a new thread's page)."""
        on_thread = "/thread/" in self.page.url
        button = self.page.locator(hooks.OPEN_DIAGNOSTICS)
        if button.count():
            button.last.click(timeout=timeout * 1000)
        else:
            self.page.fill(hooks.CHAT_INPUT, hooks.DIAGNOSTICS_COMMAND)
            self.page.click(hooks.CHAT_SUBMIT)
        self.page.wait_for_selector(hooks.PANEL, timeout=timeout * 1000)
        if not on_thread and self.page.evaluate(hooks.HISTORY_ON_JS):  # see hooks.THREAD_URL
            self.page.wait_for_url(hooks.THREAD_URL, timeout=timeout * 1000)
            self.page.wait_for_timeout(hooks.PANEL_SETTLE_MS)
            self.page.wait_for_selector(hooks.PANEL, timeout=timeout * 1000)

    def engine_state(self) -> str:
        return self.page.locator(hooks.ENGINE_STATE).get_attribute("data-state") or ""

    def wait_engine_state(self, *states: str, timeout: float = 300.0) -> str:
        selector = ", ".join(f'{hooks.ENGINE_STATE}[data-state="{s}"]' for s in states)
        self.page.wait_for_selector(selector, timeout=timeout * 1000)
        return self.engine_state()

    def finding(self, kind: str, remedy: str | None = None, open_only: bool = False) -> FindingCard:
        """The first card of a kind (the one whose remedy `remedy` is proposed, running or done, when given),
        by data-kind and data-remedy. Resolved cards count by default: a locator is looked up again on
        each use, and the card must stay found while its own remedy resolves it."""
        cards = self.finding_cards(kind, open_only)
        if remedy:
            cards = cards.filter(has=self.page.locator(f'[data-remedy="{remedy}"]'))
        return FindingCard(cards.first)

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

    def open_launch(self, launch_id: str, timeout: float = 30.0) -> Locator:
        """Unfold one launch (it then loads its command and last lines); returns its element."""
        launch = self.launches(launch_id)
        launch.locator(hooks.LAUNCH_TOGGLE).click(timeout=timeout * 1000)
        return launch

    def launch_command(self, launch_id: str) -> Locator:
        return self.launches(launch_id).locator(hooks.LAUNCH_COMMAND)

    def launch_lines(self, launch_id: str) -> Locator:
        return self.launches(launch_id).locator(hooks.LAUNCH_LINES)

    def crash_loop(self) -> Locator:
        return self.page.locator(hooks.CRASH_LOOP)

    def probe_state(self) -> ProbeState | None:
        """The completion probe as the panel shows it (None before the panel has read it)."""
        raw = self.page.evaluate(hooks.PROBE_STATE_JS)
        return ProbeState(bool(raw["degraded"]), raw["last_ok"]) if raw else None

    def finding_cards(self, kind: str | None = None, open_only: bool = True) -> Locator:
        return self.page.locator(hooks.finding_selector(kind, open_only))

    def findings(self, kind: str | None = None, open_only: bool = True) -> list[Finding]:
        raw = self.page.evaluate(hooks.FINDINGS_JS, hooks.finding_selector(kind, open_only))
        return [Finding.from_page(item) for item in raw]

    def wait_finding(self, kind: str, open_only: bool = True, timeout: float = 30.0) -> Finding:
        self.finding_cards(kind, open_only).first.wait_for(state="attached", timeout=timeout * 1000)
        return self.findings(kind, open_only)[0]

    def log_lines(self, level: str | None = None) -> list[LogLine]:
        lines = [LogLine(item["level"], item["text"]) for item in self.page.evaluate(hooks.LOG_LINES_JS)]
        return [line for line in lines if level is None or line.level == level]
