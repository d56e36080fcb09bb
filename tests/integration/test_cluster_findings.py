"""Issue 16 through `python -m chainlit_app.cluster`: two app processes in attach mode behind haproxy on the
session's real vLLM, sharing one throwaway PostgreSQL. A user pinned to process 1 (the balancer's cookie)
asks a question longer than the model's context through the app's socket.io chat; vLLM refuses it, and the
chat finds context_length. The admin's browser is on process 2, which never saw that request (no log is
tailed here: CHAT_LOG_FILE is unset): its /api/diagnostics shows the finding, from the chat, seen by
process 1.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.apps import ADMIN_USER, CHAT_USER
from bench.chainlit_client import ChainlitSession, login
from bench.cluster_apps import ClusterApp, start_cluster
from chainlit_app.cluster import STICKY_COOKIE
from chainlit_app.engine.supervisor import Supervisor
from tests.conftest import DEMO_SERVED, need_haproxy
from tests.postgres import throwaway_postgres

pytestmark = pytest.mark.integration
# 91 characters the demo model's tokenizer makes about 190 tokens of while the app estimates 36 (see
# test_chat_context_trim): twenty of them fit the app's estimate of a 2,048-token context, not vLLM's count.
QUESTION = ("これは長い質問です" * 10 + "？") * 20


@pytest.fixture
def postgres_url() -> Iterator[str]:
    need_haproxy()
    with throwaway_postgres() as url:
        yield url


async def _findings_on(cluster: ClusterApp, cookies: dict[str, str], kind: str,
                       timeout: float = 60.0) -> tuple[dict[str, Any], dict[str, Any]]:
    """Poll the panel's API as the admin's browser does, until an open finding of `kind` is there."""
    deadline = time.monotonic() + timeout
    payload: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=cluster.url, cookies=cookies, timeout=10.0) as http:
        while time.monotonic() < deadline:
            response = await http.get("/api/diagnostics")
            assert response.status_code == 200, response.text[:300]
            payload = response.json()
            found = [f for f in payload["findings"] if f["kind"] == kind and not f["resolved"]]
            if found:
                return found[0], payload
            await asyncio.sleep(0.5)
    raise AssertionError(f"no open {kind} finding on that process within {timeout:.0f} s: "
                         f"{[(f['kind'], f['source']) for f in payload.get('findings', [])]}")


async def test_a_context_length_refusal_on_process_one_is_in_process_twos_panel(
        demo_server: Supervisor, postgres_url: str, tmp_path: Path) -> None:
    cluster = start_cluster(tmp_path / "cluster", 2, {
        "CHAT_MODE": "attach", "CHAT_VLLM_URL": demo_server.base_url + "/v1", "CHAT_API_KEY": demo_server.api_key,
        "CHAT_SERVED_MODEL_NAME": DEMO_SERVED, "DATABASE_URL": postgres_url})
    first, second = cluster.backend_ports
    try:
        await cluster.wait_engine(("attached",), timeout=600)
        user = {**await login(cluster.url, CHAT_USER, cluster.user_password), STICKY_COOKIE: "app1"}
        admin = {**await login(cluster.url, ADMIN_USER, cluster.password), STICKY_COOKIE: "app2"}
        async with httpx.AsyncClient(base_url=cluster.url, cookies=admin, timeout=10.0) as http:
            before = (await http.get("/api/diagnostics")).json()
        assert before["shared_findings"]["process"] == f"127.0.0.1:{second}", before.get("shared_findings")
        assert not [f for f in before["findings"] if f["kind"] == "context_length"]

        async with ChainlitSession(cluster.url, cookies=user) as session:
            answer = await session.ask(QUESTION, timeout=120)
        asked_at = time.monotonic()
        print(f"\nthe user's answer: {answer.final_text or answer.text!r} notices={answer.notices}")
        assert answer.completed, answer.error

        finding, payload = await _findings_on(cluster, admin, "context_length")
        print(f"on process 2 after {time.monotonic() - asked_at:.2f} s: {finding['title']!r} "
              f"seen_by={finding['seen_by']} evidence={finding['evidence'][0]['text'][:160]!r}")
    finally:
        cluster.stop()
    assert payload["shared_findings"]["process"] == f"127.0.0.1:{second}"
    assert finding["source"] == "chat"
    assert [seen["process"] for seen in finding["seen_by"]] == [f"127.0.0.1:{first}"], "seen by process 1 alone"
    assert finding["evidence"][0]["process"] == f"127.0.0.1:{first}"
    assert "context length" in finding["evidence"][0]["text"]
    assert demo_server.api_key not in str(payload), "the engine's key is never in the panel"
