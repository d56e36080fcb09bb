"""The smoke check's steps, as a user would take them, each timed: open the page, log in, wait for the
chat's socket, ask, see the first token, see the whole answer, and (admins) open the panel.

The first step that fails ends the run; what the panel says is then gathered when the user may see it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from chainlit_app.testing import hooks
from chainlit_app.testing.sync_pages import ChatPage, DiagnosticsPanel

BLOCKING_SEVERITIES = frozenset({"error", "critical"})


class StepFailed(Exception):
    """A step a user would notice went wrong; the message says what the page showed."""


@dataclass(frozen=True)
class SmokeOptions:
    url: str
    user: str
    password: str
    question: str
    expect: str
    admin: bool
    timeout: float
    screenshots: Path | None


@dataclass
class Step:
    name: str
    ok: bool
    seconds: float
    detail: str = ""


@dataclass
class SmokeReport:
    url: str
    user: str
    steps: list[Step] = field(default_factory=list)
    answer: str = ""
    open_findings: list[dict[str, str]] = field(default_factory=list)
    failure: str = ""
    screenshot: str = ""
    console: str = ""

    @property
    def ok(self) -> bool:
        return not self.failure

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok, "total_seconds": round(sum(s.seconds for s in self.steps), 3)}


def run_smoke(page: Page, options: SmokeOptions, console: list[str]) -> SmokeReport:
    report = SmokeReport(options.url, options.user)
    chat = ChatPage(page, options.url)
    steps: list[tuple[str, Callable[[], str]]] = [
        ("page", lambda: _open(chat, options)),
        ("login", lambda: _login(chat, options)),
        ("connected", lambda: _connected(chat, options)),
        ("first token", lambda: _first_token(chat, options)),
        ("answer complete", lambda: _answer(chat, options, report)),
    ]
    if options.admin:
        steps.append(("panel", lambda: _panel(page, options, report)))
    for name, action in steps:
        started = time.monotonic()
        try:
            detail = action()
        except (StepFailed, PlaywrightError, TimeoutError) as exc:
            report.steps.append(Step(name, False, round(time.monotonic() - started, 3), _short(str(exc))))
            report.failure = f"{name}: {_short(str(exc))}"
            break
        report.steps.append(Step(name, True, round(time.monotonic() - started, 3), detail))
        _screenshot(page, options.screenshots, f"{len(report.steps):02d}-{name.replace(' ', '-')}.png")
    if not report.ok:
        _on_failure(page, options, report, console)
    return report


def _open(chat: ChatPage, options: SmokeOptions) -> str:
    chat.open(options.timeout)
    return chat.page.url


def _login(chat: ChatPage, options: SmokeOptions) -> str:
    chat.submit_login(options.user, options.password)
    deadline = time.monotonic() + options.timeout
    while time.monotonic() < deadline:
        if chat.page.locator(hooks.CHAT_INPUT).count():
            return ""
        refused = chat.page.locator(hooks.LOGIN_ERROR)
        if "/login" in chat.page.url and refused.count():
            raise StepFailed(f"the login page refused {options.user!r}: {refused.first.inner_text()}")
        chat.page.wait_for_timeout(100)
    raise StepFailed(f"no chat after {options.timeout:.0f} s of logging in")


def _connected(chat: ChatPage, options: SmokeOptions) -> str:
    chat.wait_connected(options.timeout)
    return chat.page.locator(hooks.WELCOME).get_attribute("data-state") or ""


def _first_token(chat: ChatPage, options: SmokeOptions) -> str:
    chat.ask(options.question)
    state = chat.wait_first_token(options.timeout)
    if not state.text:
        raise StepFailed(_failures_text(state.failures) or "no answer")
    return ""


def _answer(chat: ChatPage, options: SmokeOptions, report: SmokeReport) -> str:
    state = chat.wait_answer(options.timeout)
    report.answer = state.text
    if state.failures:
        raise StepFailed(_failures_text(state.failures))
    if options.expect.lower() not in state.text.lower():
        raise StepFailed(f"the answer does not contain {options.expect!r}: {_short(state.text)!r}")
    return _short(state.text)


def _panel(page: Page, options: SmokeOptions, report: SmokeReport) -> str:
    panel = DiagnosticsPanel(page)
    panel.open(options.timeout)
    page.wait_for_selector(hooks.ENGINE_STATE, timeout=options.timeout * 1000)
    state = panel.engine_state()
    _read_findings(panel, report)
    blocking = [f for f in report.open_findings if f["severity"] in BLOCKING_SEVERITIES]
    if blocking:
        raise StepFailed("open findings: " + ", ".join(f"{f['kind']} ({f['severity']})" for f in blocking))
    return f"engine {state}, {len(report.open_findings)} open findings"


def _read_findings(panel: DiagnosticsPanel, report: SmokeReport) -> None:
    report.open_findings = [{"kind": f.kind, "severity": f.severity, "title": f.title,
                             "evidence": f.evidence[0] if f.evidence else ""} for f in panel.findings()]


def _on_failure(page: Page, options: SmokeOptions, report: SmokeReport, console: list[str]) -> None:
    """Name the panel's open findings when this user may open it, then keep a screenshot and the console."""
    panel = DiagnosticsPanel(page)
    try:
        if not page.locator(hooks.PANEL).count():
            page.wait_for_timeout(1000)  # a new thread's page may still be replacing the first one
            panel.open(30)
        if page.locator(hooks.PANEL).count():
            page.wait_for_selector(hooks.ENGINE_STATE, timeout=10_000)
            page.wait_for_timeout(1500)  # one more poll of the panel: the newest findings
            _read_findings(panel, report)
    except PlaywrightError:
        pass  # the page itself may be what is broken: the screenshot shows it
    if report.open_findings and "open findings:" not in report.failure:
        report.failure += " | open findings: " + ", ".join(
            f"{f['kind']} ({f['severity']})" for f in report.open_findings)
    folder = options.screenshots or Path("smoke-results")
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "failure.png"
    try:
        page.screenshot(path=str(shot), full_page=True)
        report.screenshot = str(shot)
    except PlaywrightError:
        pass
    console_file = folder / "console.txt"
    console_file.write_text("\n".join(console), encoding="utf-8")
    report.console = str(console_file)


def _screenshot(page: Page, folder: Path | None, name: str) -> None:
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / name))


def _failures_text(failures: tuple[hooks.Notice, ...]) -> str:
    return "; ".join(f"{n.testid}{f' [{n.kind}]' if n.kind else ''}: {_short(n.text)}" for n in failures)


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
