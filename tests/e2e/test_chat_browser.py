"""A user in a real browser: log in, ask, watch the answer stream in, stop a long answer (and vLLM with it)."""

from __future__ import annotations

import itertools
import time

import pytest
from playwright.sync_api import Page, expect

from chainlit_app.testing.hooks import WELCOME
from tests.e2e.conftest import (
    ADMIN_PASSWORD,
    AppServer,
    ask_long_and_wait_for_text,
    login,
    run_in_thread,
    save_screenshot,
)
from tests.vllm_metrics import RequestCounts, read_request_counts

pytestmark = pytest.mark.e2e

# Every text length each assistant message shows, keyed by its step element (`#step-<id>`), recorded on
# every DOM change: the answer is then measured itself, not whatever message happens to be last.
RECORD_GROWTH = """
() => {
  window.__growth = {};
  const seen = () => {
    for (const content of document.querySelectorAll('.ai-message .message-content')) {
      const step = content.closest('[id^="step-"]');
      if (!step) continue;
      const lengths = (window.__growth[step.id] ||= []);
      const n = content.innerText.length;
      if (lengths[lengths.length - 1] !== n) lengths.push(n);
    }
  };
  new MutationObserver(seen).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""
MIN_GROWTHS = 5
QUESTION = "What is the capital of France? Then list the capitals of Germany and Italy."
MAX_TOKENS = 512  # the app's default CHAT_MAX_TOKENS: an answer left running would end at this length


def _growths(lengths: list[int]) -> int:
    """How many times a text grew after it first showed something."""
    shown = [n for n in lengths if n > 0]
    return sum(1 for a, b in itertools.pairwise(shown) if b > a)


def test_question_gets_a_streamed_correct_answer(app_server: AppServer, page: Page) -> None:
    chat = login(page, app_server.url, "admin", ADMIN_PASSWORD)
    expect(page.locator(WELCOME)).to_have_attribute("data-state", "ready")
    page.evaluate(RECORD_GROWTH)
    # The demo model answers "What is the capital of France?" in 8 tokens; this asks for twice as many
    # (about 16: "...is Paris, and the capital of Germany is Berlin."), room to watch the answer grow.
    reply = chat.ask_and_wait(QUESTION, timeout=60)  # until the stop button is gone: the answer has ended
    assert len(reply.answers) == 1 and not reply.failures, reply
    answer_id = reply.answers[0].step_id
    answer = chat.answer_text(answer_id)
    lengths: list[int] = page.evaluate("(id) => window.__growth[id]", answer_id)
    final = answer.inner_text()
    assert "Paris" in final and "Berlin" in final and "Welcome" not in final, final
    assert lengths[-1] == len(final), (lengths[-5:], len(final))
    assert _growths(lengths) >= MIN_GROWTHS, \
        f"the answer grew {_growths(lengths)} times on the page (at least {MIN_GROWTHS}): lengths {lengths}"
    print(f"\nthe answer ({len(final)} characters) grew {_growths(lengths)} times: {lengths}")
    save_screenshot(page, "chat.png")


def test_stop_ends_a_long_answer_and_aborts_it_in_vllm(app_server: AppServer, page: Page) -> None:
    """Stop must end the request in vLLM, not only on the page: /metrics shows it left the running set
    without finishing on its own, after far fewer tokens than the answer would have had."""
    port = run_in_thread(app_server.diagnostics())["engine"]["port"]
    vllm = f"http://127.0.0.1:{port}"
    chat = login(page, app_server.url, "admin", ADMIN_PASSWORD)
    expect(page.locator(WELCOME)).to_have_attribute("data-state", "ready")
    before = read_request_counts(vllm)
    assert before.running == 0, f"another request is running in vLLM: {before}"
    ask_long_and_wait_for_text(page)
    streaming = read_request_counts(vllm)
    assert streaming.running == 1, f"the answer's request should be running in vLLM: {streaming}"
    chat.stop()
    stopped = chat.wait_answer(15)
    marked = chat.answer_text(stopped.answers[-1].step_id)
    stopped_text = marked.inner_text()
    assert stopped.answers[-1].stopped and "Stopped by the user" in stopped_text, stopped_text
    after = _when_nothing_runs(vllm)
    time.sleep(3)
    assert marked.inner_text() == stopped_text, "the answer kept growing after Stop"
    settled = read_request_counts(vllm)
    partial = stopped_text.replace("(Stopped by the user.)", "").strip()
    assert len(partial) > 40, "the partial answer must be kept"
    assert after.running == 0 and settled.running == 0, f"vLLM still runs the request: {settled}"
    assert settled.first_tokens - before.first_tokens == 1, (before, settled)
    assert settled.finished_normally == before.finished_normally, \
        f"the request finished on its own instead of being aborted: {before.finished} -> {settled.finished}"
    assert settled.aborted_since(before) == 1, f"aborted requests: {settled.aborted_since(before)} (expected 1)"
    generated = settled.generated_tokens - before.generated_tokens
    assert generated < MAX_TOKENS / 2, f"{generated:.0f} tokens were generated (a stopped answer: under 256)"
    print(f"\nstopped after {len(partial)} characters; vLLM generated {generated:.0f} tokens, running "
          f"{streaming.running:.0f} -> {settled.running:.0f}, aborted {settled.aborted_since(before):.0f}, "
          f"finished by reason {settled.finished}")
    # The chat still works after a stop.
    assert "Paris" in chat.ask_and_wait("What is the capital of France?", timeout=60).text


def _when_nothing_runs(vllm: str, timeout: float = 30.0) -> RequestCounts:
    """Poll /metrics until no request runs (or give up after `timeout` and return the last reading)."""
    deadline = time.monotonic() + timeout
    counts = read_request_counts(vllm)
    while counts.running > 0 and time.monotonic() < deadline:
        time.sleep(0.3)
        counts = read_request_counts(vllm)
    return counts


def test_vllm_was_launched_before_the_web_server_started(app_server: AppServer) -> None:
    """With a warm preflight cache (every start after an install's first), `chainlit run app.py` launches
    vLLM as its interpreter starts (the .pth hook of chainlit_app/prelaunch.py), before Chainlit imports
    itself, and start-up adopts that launch instead of launching again."""
    lines = app_server.log_text().splitlines()
    launched = [i for i, line in enumerate(lines) if "vLLM launched (pid" in line]
    serving = [i for i, line in enumerate(lines) if "Your app is available at" in line]
    assert launched and serving, "\n".join(lines[:40])
    assert launched[0] < serving[0], "vLLM should be launched before the web server starts"
    assert any("vLLM launched at interpreter start, before Chainlit was imported" in line for line in lines), \
        "\n".join(lines[:40])
