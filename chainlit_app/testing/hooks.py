"""The page's stable hooks and the small scripts the page objects run in the page.

Plain strings only (no Playwright), so the sync and async page objects share one definition, and a unit
test can hold the README's list to the JSX and Python that draw the hooks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Chainlit's own login form and composer (its element ids, not text).
LOGIN_USER = "#email"
LOGIN_PASSWORD = "#password"
LOGIN_SUBMIT = "button[type=submit]"
LOGIN_ERROR = 'form [class*="border-red-"]'  # Chainlit's error alert on its login form
CHAT_INPUT = "#chat-input"
CHAT_SUBMIT = "#chat-submit"
STOP_BUTTON = "#stop-button"
DIAGNOSTICS_COMMAND = "/diagnostics"  # what an admin can type to open the panel (app.py)
# With chat history on, a chat's first interaction makes the browser switch to the new thread's URL, which
# drops the side bar; the app shows the panel again a second later (panel.open_panel). A page object that
# opened the panel on a page not yet on a thread waits for that, or a click would land on the dropped panel.
THREAD_URL = "**/thread/**"
HISTORY_ON_JS = """async () => {
  const r = await fetch('/project/settings?language=en-US', {credentials: 'same-origin'});
  return r.ok ? Boolean((await r.json()).dataPersistence) : false;
}"""
PANEL_SETTLE_MS = 1500  # after the thread's URL: past the app's one-second second showing

# The app's own hooks (README, "Scripted UI tests").
WELCOME = "[data-testid=chat-welcome]"
ANSWER = "[data-testid=chat-answer]"
MESSAGE_TEXT = ".message-content"  # Chainlit's text of a message, inside the app's hooked message
RETRY = "[data-testid=chat-retry]"
OPEN_DIAGNOSTICS = "[data-testid=chat-open-diagnostics]"
PANEL = "[data-testid=diag-panel]"
ENGINE_STATE = "[data-testid=diag-engine-state]"
FINDING = "[data-testid=diag-finding]"
LOG_LINE = "[data-testid=diag-log-line]"
FINDING_BASIS = "[data-testid=diag-basis]"
FINDING_SEEN_BY = "[data-testid=diag-seen-by]"  # the processes that saw it (a cluster sharing its findings)
ENGINE_FACT = "[data-testid=diag-engine-fact]"
REMEDY = "[data-testid=diag-remedy]"
REMEDY_APPLY = "[data-testid=diag-remedy-apply]"
REMEDY_UNDO = "[data-testid=diag-remedy-undo]"
REMEDY_STATE = "[data-testid=diag-remedy-state]"
REMEDY_CONFIRM = "[data-testid=diag-remedy-confirm]"
REMEDY_RISK = "[data-testid=diag-remedy-risk]"
REMEDY_CONFIRM_APPLY = "[data-testid=diag-remedy-confirm-apply]"
REMEDY_CONFIRM_CANCEL = "[data-testid=diag-remedy-confirm-cancel]"
OVERRIDE = "[data-testid=diag-override]"
NO_OVERRIDES = "[data-testid=diag-no-overrides]"
LAUNCH = "[data-testid=diag-launch]"
LAUNCH_COMMAND = "[data-testid=diag-launch-command]"
LAUNCH_LINES = "[data-testid=diag-launch-lines]"
LAUNCH_TOGGLE = ":scope > summary"  # the launch is a <details>; its own <summary> opens it
CRASH_LOOP = "[data-testid=diag-crash-loop]"
PROBE = "[data-testid=diag-probe]"
PROBE_LAST = "[data-testid=diag-probe-last]"
INPUT_TOO_LARGE = "[data-testid=chat-input-too-large]"  # public/input_guard.js: the message stays in the composer


def with_remedy(selector: str, remedy: str | None) -> str:
    """A remedy's element (its proposal, button, override) by the remedy's id, not its label."""
    return f'{selector}[data-remedy="{remedy}"]' if remedy else selector


def launch_selector(launch_id: str | None = None) -> str:
    return f'{LAUNCH}[data-launch-id="{launch_id}"]' if launch_id else LAUNCH


def finding_selector(kind: str | None = None, open_only: bool = True) -> str:
    selector = FINDING
    if kind:
        selector += f'[data-kind="{kind}"]'
    if open_only:
        selector += "[data-resolved=no]"
    return selector


# What followed the latest question: the model's answers (chat-answer; data-done once complete, with
# data-failure when it was cut off or empty, data-stopped when the user stopped it), the app's notices,
# the messages without hooks (not drawn yet, or Chainlit's own, e.g. its "Task manually stopped."), and
# whether a task still runs.
REPLY_STATE_JS = """
() => {
  const steps = [...document.querySelectorAll('[data-step-type]')];
  let last = -1;
  steps.forEach((s, i) => { if (s.dataset.stepType === 'user_message') last = i; });
  const answers = [];
  const notices = [];
  let untagged = 0;
  for (const step of steps.slice(last + 1)) {
    const message = step.querySelector('.ai-message');
    if (!message) continue;
    const content = message.querySelector('.message-content');
    const text = content ? content.innerText : '';
    const testid = message.getAttribute('data-testid');
    const id = (step.querySelector('[id^="step-"]') || {}).id || '';
    if (!testid) untagged += 1;
    else if (testid === 'chat-answer') answers.push({id, text, failure: message.dataset.failure || '',
                                                   stopped: message.dataset.stopped === 'yes',
                                                   done: message.dataset.done === 'yes'});
    else notices.push({testid, kind: message.dataset.kind || '', state: message.dataset.state || '', text});
  }
  return {answers, notices, untagged, running: !!document.querySelector('#stop-button')};
}
"""

TRANSCRIPT_JS = """
() => [...document.querySelectorAll('[data-step-type$="_message"]')].map(step => ({
  role: step.dataset.stepType === 'user_message' ? 'user' : 'assistant',
  text: (step.querySelector('.message-content') || {}).innerText || '',
}))
"""

FINDINGS_JS = """
(selector) => [...document.querySelectorAll(selector)].map(card => ({
  kind: card.dataset.kind, severity: card.dataset.severity, resolved: card.dataset.resolved === 'yes',
  source: card.dataset.source, basis: card.dataset.basis,
  title: (card.querySelector('[data-testid=diag-finding-title]') || {}).innerText || '',
  evidence: [...card.querySelectorAll('[data-testid=diag-evidence]')].map(e => e.innerText),
  fix: (card.querySelector('[data-testid=diag-fix]') || {}).innerText || '',
}))
"""

LOG_LINES_JS = """
() => [...document.querySelectorAll('[data-testid=diag-log-line]')]
  .map(line => ({level: line.dataset.level || '', text: line.innerText}))
"""


@dataclass(frozen=True)
class Notice:
    """One of the app's own chat notices (`testid` is e.g. chat-failure; `kind` a failure kind)."""

    testid: str
    kind: str
    state: str
    text: str


@dataclass(frozen=True)
class Answer:
    """One answer of the model as the page shows it (`failure`: the kind, when it was cut off or empty)."""

    step_id: str
    text: str
    failure: str
    stopped: bool
    done: bool  # the app has sent all of it (a Retry's answer has no stop button to watch)


@dataclass(frozen=True)
class ReplyState:
    """A reading of the page after the latest question."""

    answers: tuple[Answer, ...]  # the model's messages
    notices: tuple[Notice, ...]
    untagged: int  # messages without hooks: not drawn yet (a moment after they appear), or Chainlit's own
    running: bool

    @classmethod
    def from_page(cls, raw: dict[str, Any]) -> ReplyState:
        return cls(tuple(Answer(a["id"], a["text"], a["failure"], bool(a["stopped"]), bool(a["done"]))
                         for a in raw["answers"]),
                   tuple(Notice(n["testid"], n["kind"], n["state"], n["text"]) for n in raw["notices"]),
                   int(raw["untagged"]), bool(raw["running"]))

    @property
    def text(self) -> str:
        return self.answers[-1].text.strip() if self.answers else ""

    @property
    def failures(self) -> tuple[Notice, ...]:
        """What says the question was not answered as asked: failure notices, a failed start-up, refused
        input, and answers cut off or empty (as notices of test id chat-answer, kind = the failure)."""
        notices = tuple(n for n in self.notices if n.testid in ("chat-failure", "chat-input-refused")
                        or (n.testid == "chat-startup" and n.state == "failed"))
        return notices + tuple(Notice("chat-answer", a.failure, "", a.text) for a in self.answers if a.failure)

    @property
    def ended(self) -> bool:
        """The latest answer is complete (data-done), or no answer is under way and the app said why there
        is none. Only messages with hooks count: a notice whose hooks are not drawn yet is not taken for
        an answer."""
        if self.answers:
            return self.answers[-1].done
        return not self.running and bool(self.failures)


@dataclass(frozen=True)
class Finding:
    """A finding card as the panel shows it."""

    kind: str
    severity: str
    resolved: bool
    source: str
    basis: str
    title: str
    evidence: tuple[str, ...]
    fix: str

    @classmethod
    def from_page(cls, raw: dict[str, Any]) -> Finding:
        return cls(raw["kind"], raw["severity"], bool(raw["resolved"]), raw["source"], raw["basis"],
                   raw["title"], tuple(raw["evidence"]), raw["fix"])


@dataclass(frozen=True)
class LogLine:
    level: str
    text: str


PROBE_STATE_JS = """
() => {
  const probe = document.querySelector('[data-testid=diag-probe]');
  if (!probe) return null;
  const last = probe.querySelector('[data-testid=diag-probe-last]');
  return {degraded: probe.dataset.degraded === 'yes', last_ok: last ? last.dataset.ok === 'yes' : null};
}
"""


@dataclass(frozen=True)
class ProbeState:
    """The panel's completion probe: degraded, and whether its latest probe answered (None: none yet)."""

    degraded: bool
    last_ok: bool | None
