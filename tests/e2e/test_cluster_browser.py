"""A real browser through `python -m chainlit_app.cluster`: two app processes in attach mode behind haproxy,
sharing one PostgreSQL history, on the session's real vLLM.

Chainlit's socket.io session lives in the process that opened it, and the browser starts it with HTTP
long-polling requests that must all reach that process: without the balancer's stickiness the socket never
connects and the chat cannot answer. A second browser pinned to the other process then finds the thread
stored by the first (shared history, the login accepted by another process). A question longer than the
model's context, asked in the first browser, becomes a context_length finding on its process, and an admin's
browser pinned to the other process sees it in the panel, naming the process that saw it (issue 16: shared
findings). SIGTERM stops everything.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from playwright.sync_api import Browser

from bench.apps import ADMIN_USER, CHAT_USER
from bench.cluster_apps import start_cluster
from chainlit_app.cluster import STICKY_COOKIE
from chainlit_app.testing import ChatPage, DiagnosticsPanel
from tests.conftest import need_haproxy
from tests.e2e.conftest import AppServer, run_in_thread
from tests.e2e.test_diagnostics_panel import _engine, _engine_key
from tests.postgres import throwaway_postgres

pytestmark = pytest.mark.e2e

QUESTION = "What is the capital of France?"
# About 5,700 tokens to the demo model's tokenizer (91 characters make about 190), about 900 by the app's
# estimate: it sends the question and vLLM (2,048-token context) refuses it.
TOO_LONG = ("これは長い質問です" * 10 + "？") * 30


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    need_haproxy()
    with throwaway_postgres() as url:
        yield url


def test_a_browser_chats_through_the_balancer_and_another_process_shows_its_thread(
        app_server: AppServer, postgres_url: str, browser: Browser, tmp_path: Path) -> None:
    engine = _engine(app_server)
    cluster = start_cluster(tmp_path / "cluster", 2, {
        "CHAT_MODE": "attach", "CHAT_VLLM_URL": f"http://127.0.0.1:{engine['port']}/v1",
        "CHAT_API_KEY": _engine_key(int(engine["pid"])), "CHAT_MAX_TOKENS": "48", "DATABASE_URL": postgres_url})
    first = browser.new_context(viewport={"width": 1400, "height": 900})
    second = browser.new_context(viewport={"width": 1400, "height": 900})
    third = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        run_in_thread(cluster.wait_engine(("attached",), timeout=600))
        apps, balancer = cluster.app_pids, cluster.balancer_pid
        assert len(apps) == 2 and balancer is not None, cluster.log_path.read_text()[-2000:]

        chat = ChatPage(first.new_page(), cluster.url)
        chat.login(CHAT_USER, cluster.user_password)
        answer = chat.ask_and_wait(QUESTION, timeout=120)
        assert "Paris" in answer.text, answer
        assert not answer.notices, answer.notices
        served_by = {c["name"]: c["value"] for c in first.cookies()}.get(STICKY_COOKIE)
        assert served_by in ("app1", "app2"), first.cookies()
        thread_id = chat.thread_id()
        assert thread_id, chat.page.url

        other = "app2" if served_by == "app1" else "app1"
        second.add_cookies([{"name": STICKY_COOKIE, "value": other, "url": cluster.url}])
        again = ChatPage(second.new_page(), cluster.url)
        again.login(CHAT_USER, cluster.user_password)
        again.resume_thread(thread_id)
        transcript = again.transcript()
        assert ("user", QUESTION) in transcript, transcript
        assert any(role == "assistant" and "Paris" in text for role, text in transcript), transcript
        assert {c["name"]: c["value"] for c in second.cookies()}.get(STICKY_COOKIE) == other

        refused = chat.ask_and_wait(TOO_LONG, timeout=120)
        print(f"\nthe refused question's notices: {[n.text[:120] for n in refused.notices]}")
        third.add_cookies([{"name": STICKY_COOKIE, "value": other, "url": cluster.url}])
        admin = ChatPage(third.new_page(), cluster.url)
        admin.login(ADMIN_USER, cluster.password)
        panel = DiagnosticsPanel(admin.page)
        panel.open()
        card = panel.finding("context_length", open_only=True)
        card.seen_by.wait_for(timeout=60_000)
        seen_by = card.seen_by.inner_text()
        print(f"the panel on {other}: {card.root.inner_text()[:400]!r}")
        assert card.root.get_attribute("data-source") == "chat"
        served_port = cluster.backend_ports[int(served_by[-1]) - 1]
        assert f"127.0.0.1:{served_port} (1×)" in seen_by, seen_by
        assert str(cluster.backend_ports[int(other[-1]) - 1]) not in seen_by, "only the first process saw it"

        cluster.process.send_signal(signal.SIGTERM)
        assert cluster.process.wait(timeout=60) == 0, cluster.log_path.read_text()[-2000:]
        left = [pid for pid in [*apps, balancer] if psutil.pid_exists(pid)
                and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
        assert not left, f"processes left after SIGTERM: {left}"
    finally:
        first.close()
        second.close()
        third.close()
        cluster.stop()
    assert not (tmp_path / "cluster" / "chat.db").exists(), "with DATABASE_URL the history must not go to SQLite"
