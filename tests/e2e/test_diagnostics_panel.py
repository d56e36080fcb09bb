"""The admin's diagnostics panel in a real browser, against real faults of the app's own vLLM."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from playwright.sync_api import Locator, Page, expect

from chainlit_app.testing import DiagnosticsPanel
from chainlit_app.testing.hooks import DIAGNOSTICS_COMMAND, LOG_LINE, OPEN_DIAGNOSTICS, PANEL, WELCOME
from tests.e2e.conftest import ADMIN_PASSWORD, USER_PASSWORD, AppServer, login, run_app, save_screenshot
from tests.timing import assert_within

pytestmark = pytest.mark.e2e

XSS_MODEL = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'


@contextmanager
def _session(server: AppServer, user: str, password: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        response = client.post("/login", data={"username": user, "password": password})
        assert response.status_code == 200, response.text
        yield client


def _engine(server: AppServer) -> dict[str, Any]:
    with _session(server, "admin", ADMIN_PASSWORD) as client:
        return dict(client.get("/api/diagnostics").json()["engine"])


def _engine_key(pid: int) -> str:
    """The per-launch key, read from the engine's environment as its owner can (never shown by the app)."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return next(item.split(b"=", 1)[1].decode() for item in environ if item.startswith(b"VLLM_API_KEY="))


def open_panel(page: Page) -> DiagnosticsPanel:
    panel = DiagnosticsPanel(page)
    panel.open()
    return panel


def _card_showing(panel: DiagnosticsPanel, kind: str, needle: str, timeout: float) -> Locator:
    """The card of `kind` whose evidence holds what the test itself sent (the access log's 404 line is a
    second card of the same kind): picked by data-kind and the evidence's data, not by the app's words."""
    deadline = time.monotonic() + timeout
    while True:
        for index, found in enumerate(panel.findings(kind)):
            if any(needle in line for line in found.evidence):
                return panel.finding_cards(kind).nth(index)
        assert time.monotonic() < deadline, f"no {kind} card shows {needle!r}: {panel.findings(kind)}"
        panel.page.wait_for_timeout(100)


def test_api_needs_login_and_admin_role(app_server: AppServer) -> None:
    assert httpx.get(app_server.url + "/api/diagnostics").status_code == 401
    with _session(app_server, "alice", USER_PASSWORD) as client:
        assert client.get("/api/diagnostics").status_code == 403
    with _session(app_server, "admin", ADMIN_PASSWORD) as client:
        body = client.get("/api/diagnostics").json()
    assert set(body) >= {"engine", "findings", "log_tail", "metrics"}
    assert body["engine"]["state"] == "ready"
    assert body["log_tail"], "the log tail is empty"
    key = _engine_key(int(body["engine"]["pid"]))
    auth_secret = (app_server.data_dir / "auth_secret").read_text().strip()
    assert key not in str(body), "the API key leaked into the API"
    log_text = app_server.log_text()
    assert key not in log_text and auth_secret not in log_text, "a secret leaked into the app's log"
    assert ADMIN_PASSWORD not in log_text


def test_non_admin_has_no_panel(app_server: AppServer, page: Page) -> None:
    chat = login(page, app_server.url, "alice", USER_PASSWORD)
    expect(page.locator(WELCOME)).to_have_attribute("data-state", "ready")
    expect(page.locator(OPEN_DIAGNOSTICS)).to_have_count(0)
    chat.ask(DIAGNOSTICS_COMMAND)
    page.wait_for_selector("[data-testid=chat-admin-only]", timeout=15_000)
    expect(page.locator(PANEL)).to_have_count(0)


def test_panel_shows_engine_log_and_a_real_fault_as_text(app_server: AppServer, page: Page) -> None:
    """A request for a model that does not exist makes vLLM log an ERROR holding the model name; the
    panel shows it as a named finding with its fix within 2 s, and the HTML in it stays text."""
    login(page, app_server.url, "admin", ADMIN_PASSWORD)
    panel = open_panel(page)
    panel.wait_engine_state("ready", timeout=10)
    page.wait_for_function(f"() => document.querySelectorAll('{LOG_LINE}').length > 5", timeout=10_000)

    engine = _engine(app_server)
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{engine['port']}/v1", api_key=_engine_key(int(engine["pid"])))
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model=XSS_MODEL, messages=[{"role": "user", "content": "hi"}])
    made = time.monotonic()
    finding = _card_showing(panel, "model_not_found", XSS_MODEL, timeout=10)
    assert_within(time.monotonic() - made, 2.0 + 1.0, "the finding appearing (2 s + 1 s of panel polling)")
    text = finding.inner_text()
    assert "does not exist" in text
    assert "--served-model-name" in text or "CHAT_SERVED_MODEL_NAME" in text, "the fix is missing"
    assert "<img" in text, "the HTML in the log line must be shown as text"
    # on what basis and where it was seen, in words, on the card the admin reads
    basis = finding.locator("[data-testid=diag-basis]").inner_text()
    assert "named by a rule" in basis and "engine log" in basis, basis
    assert finding.get_attribute("data-basis") == "rule"
    assert finding.get_attribute("data-source") == "log"
    assert page.evaluate("window.__xss") is None, "log text was rendered as HTML"
    assert page.locator(f"{PANEL} img").count() == 0
    save_screenshot(page, "diagnostics.png")


def test_attached_app_with_a_wrong_key_shows_auth_in_the_panel(app_server: AppServer, page: Page,
                                                              tmp_path: Path) -> None:
    """A second app attached to the first app's vLLM with the wrong key: the panel names it, with the fix."""
    engine = _engine(app_server)
    with run_app(tmp_path, ("starting",), CHAT_MODE="attach", CHAT_VLLM_URL=f"http://127.0.0.1:{engine['port']}/v1",
                 CHAT_API_KEY="wrong-key") as attached:
        login(page, attached.url, "admin", ADMIN_PASSWORD)
        expect(page.locator(WELCOME)).to_contain_text("Waiting for the vLLM server")
        panel = open_panel(page)
        panel.wait_finding("auth", timeout=15)
        assert "CHAT_API_KEY" in panel.finding_cards("auth").first.inner_text()
        assert panel.engine_fact("pid").count() == 0, \
            "attach mode hides process control"


def test_killed_engine_shows_as_connection_then_resolved(app_server: AppServer, page: Page) -> None:
    """kill -9 the vLLM server: the panel names it within 2 s, and marks it resolved after the restart."""
    login(page, app_server.url, "admin", ADMIN_PASSWORD)
    panel = open_panel(page)
    panel.wait_engine_state("ready", timeout=10)
    pid = int(_engine(app_server)["pid"])
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    crash = panel.finding_cards("connection")
    crash.first.wait_for(timeout=10_000)
    assert_within(time.monotonic() - killed, 3.0, "the panel naming the crash (2 s + 1 s of panel polling)")
    assert "SIGKILL" in crash.first.inner_text()
    panel.wait_engine_state("ready", timeout=300)
    page.wait_for_selector("[data-testid=diag-finding][data-kind=connection][data-resolved=yes]", state="attached",
                           timeout=10_000)
    assert _engine(app_server)["restarts"] == 1
