"""32 users at once on two app instances that share one PostgreSQL history (DATABASE_URL) and one vLLM.

Each user has an account of their own (CHAT_USERS), asks on one instance and then, through the other
instance, sees exactly their own thread, is refused another user's, and resumes their own conversation.
Driven over Chainlit's socket.io and HTTP protocol as 32 browsers would (bench.chainlit_client).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import socketio

from bench.chainlit_client import AskResult, ChainlitSession, login
from chainlit_app.chat import AUTHOR
from tests.e2e.conftest import AppServer, run_app, run_in_thread
from tests.e2e.test_diagnostics_panel import _engine, _engine_key
from tests.postgres import throwaway_postgres
from tests.timing import assert_within

pytestmark = pytest.mark.e2e

USERS = 32
HEALTHZ_LIMIT_S = 2.0
WRITE_WAIT_S = 60.0  # Chainlit writes steps in background tasks: give the last writes time to land


@dataclass
class Account:
    name: str
    password: str
    thread_id: str = ""
    first: AskResult | None = None


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with throwaway_postgres() as url:
        yield url


def test_32_users_on_two_instances_see_only_their_own_history(app_server: AppServer, postgres_url: str,
                                                             tmp_path: Path) -> None:
    accounts = [Account(f"user-{i:02d}", secrets.token_urlsafe(12)) for i in range(USERS)]
    engine = _engine(app_server)  # both instances attach to the session's vLLM
    env = {
        "CHAT_MODE": "attach",
        "CHAT_VLLM_URL": f"http://127.0.0.1:{engine['port']}/v1",
        "CHAT_API_KEY": _engine_key(int(engine["pid"])),
        "CHAT_TEMPERATURE": "0",
        "CHAT_MAX_TOKENS": "48",
        "CHAT_USERS": ",".join(f"{a.name}:{a.password}:user" for a in accounts),
        "DATABASE_URL": postgres_url,
    }
    with run_app(tmp_path / "a", ("attached",), **env) as first, \
            run_app(tmp_path / "b", ("attached",), **env) as second:
        run_in_thread(_scenario(first, second, accounts))
    for path in (tmp_path / "a", tmp_path / "b"):
        assert not (path / "chat.db").exists(), "with DATABASE_URL the history must not go to SQLite"


async def _scenario(first: AppServer, second: AppServer, accounts: list[Account]) -> None:
    home = {a.name: (first if i % 2 == 0 else second) for i, a in enumerate(accounts)}
    away = {a.name: (second if home[a.name] is first else first) for a in accounts}
    await _everyone_asks_at_once(accounts, home, first)
    await _each_sees_only_their_own_thread(accounts, away)
    await _each_resumes_on_the_other_instance(accounts, away, home)


async def _everyone_asks_at_once(accounts: list[Account], home: dict[str, AppServer], probe_app: AppServer) -> None:
    """32 logins (one per user), 32 sessions asking at once, each answer streamed to its own session only."""
    cookies = await asyncio.gather(*(login(home[a.name].url, a.name, a.password) for a in accounts))
    sessions = [ChainlitSession(home[a.name].url, a.name, cookies=c) for a, c in zip(accounts, cookies, strict=True)]
    await asyncio.gather(*(s.connect() for s in sessions))
    stop = asyncio.Event()
    probe = asyncio.create_task(_worst_healthz(probe_app.url, stop))
    try:
        started = time.perf_counter()
        results = await asyncio.gather(*(
            s.ask(f"I am {a.name}. What is the capital of France? Answer in one sentence.", timeout=600)
            for a, s in zip(accounts, sessions, strict=True)
        ))
        elapsed = time.perf_counter() - started
    finally:
        stop.set()
        worst = await probe
        await asyncio.gather(*(s.close() for s in sessions))
    unfinished = [a.name for a, r in zip(accounts, results, strict=True) if not r.completed or not r.text]
    assert not unfinished, f"users without a complete answer: {unfinished}"
    assert len({r.message_id for r in results}) == USERS, "each session must get its own answer message"
    for account, session, result in zip(accounts, sessions, results, strict=True):
        streamed = {e.data.get("id") for e in session.events
                    if e.name in ("stream_start", "stream_token") and isinstance(e.data, dict)}
        assert streamed == {result.message_id}, f"{account.name} received tokens of another user's answer"
        thread_id = session.thread_started()
        assert thread_id, f"{account.name}: the app named no thread"
        account.thread_id, account.first = thread_id, result
    assert len({a.thread_id for a in accounts}) == USERS, "each user must get a thread of their own"
    print(f"\n{USERS} users answered in {elapsed:.1f} s on two instances; worst /healthz {worst * 1000:.0f} ms")
    assert_within(worst, HEALTHZ_LIMIT_S, "the slowest /healthz answer under load")


async def _each_sees_only_their_own_thread(accounts: list[Account], away: dict[str, AppServer]) -> None:
    """Through the other instance: the thread list holds the user's own thread alone, with their question
    and the answer; another user's thread is refused over HTTP and over the socket."""
    async def check(index: int, account: Account) -> None:
        app = away[account.name]
        other = accounts[(index + 1) % USERS]
        cookies = await login(app.url, account.name, account.password)
        async with httpx.AsyncClient(base_url=app.url, cookies=cookies, timeout=30) as http:
            listed = await _own_threads_once_written(http, account)
            assert [t["id"] for t in listed] == [account.thread_id], (account.name, listed)
            assert listed[0]["userIdentifier"] == account.name
            names = {a.name for a in accounts} - {account.name}
            leaked = [n for n in names if n in str(listed)]
            assert not leaked, f"{account.name}'s thread list shows other users: {leaked}"
            refused = await http.get(f"/project/thread/{other.thread_id}")
            assert refused.status_code in (401, 403), \
                f"{account.name} read {other.name}'s thread: HTTP {refused.status_code} {refused.text[:200]}"
        intruder = ChainlitSession(app.url, account.name, cookies=cookies, thread_id=other.thread_id)
        with pytest.raises(socketio.exceptions.ConnectionError):
            await intruder.connect(wait_welcome=False)
        await intruder.close()

    await asyncio.gather(*(check(i, a) for i, a in enumerate(accounts)))


async def _own_threads_once_written(http: httpx.AsyncClient, account: Account) -> list[dict[str, Any]]:
    """The user's thread list, once their question and the answer are both stored (written in the
    background); the last list seen when that never happens, for the assertion to show."""
    deadline = time.monotonic() + WRITE_WAIT_S
    listed: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        response = await http.post("/project/threads", json={"pagination": {"first": 50}, "filter": {}})
        assert response.status_code == 200, f"{account.name}: HTTP {response.status_code} {response.text[:200]}"
        listed = list(response.json()["data"])
        thread = await http.get(f"/project/thread/{account.thread_id}")
        if listed and thread.status_code == 200 and len(_messages(thread.json())) >= 2:
            return listed
        await asyncio.sleep(0.5)
    return listed


def _messages(thread: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation of a stored thread: the user's questions and the model's answers (not the
    console's welcome and notices)."""
    return [s for s in thread.get("steps") or []
            if s.get("type") == "user_message" or (s.get("type") == "assistant_message" and s.get("name") == AUTHOR)]


async def _each_resumes_on_the_other_instance(accounts: list[Account], away: dict[str, AppServer],
                                              home: dict[str, AppServer]) -> None:
    """Every user opens their thread on the instance that did not write it: the stored conversation comes
    back, a follow-up is answered in the same thread, and the instance that wrote it sees the new turn."""
    async def resume(account: Account) -> None:
        app = away[account.name]
        assert account.first is not None
        session = ChainlitSession(app.url, account.name, account.password, thread_id=account.thread_id)
        try:
            await session.connect(wait_welcome=False)
            resumed = await session.wait_for_event("resume_thread", timeout=60)
            assert resumed is not None, f"{account.name}: no resume_thread; events {[e.name for e in session.events]}"
            outputs = [str(s.get("output")) for s in _messages(resumed.data)]
            assert any(f"I am {account.name}." in o for o in outputs), (account.name, outputs)
            assert any(account.first.text.strip()[:20] in o for o in outputs), (account.name, outputs)
            follow_up = await session.ask("And the capital of Italy? Answer in one sentence.", timeout=600)
            assert follow_up.completed and follow_up.text, (account.name, follow_up.error, follow_up.notices)
            assert session.thread_started() == account.thread_id, "the resumed session writes to another thread"
        finally:
            await session.close()
        cookies = await login(home[account.name].url, account.name, account.password)
        async with httpx.AsyncClient(base_url=home[account.name].url, cookies=cookies, timeout=30) as http:
            deadline = time.monotonic() + WRITE_WAIT_S
            messages: list[dict[str, Any]] = []
            while time.monotonic() < deadline and len(messages) < 4:
                messages = _messages((await http.get(f"/project/thread/{account.thread_id}")).json())
                await asyncio.sleep(0.5)
        texts = [str(m.get("output")) for m in messages]
        assert [m["type"] for m in messages] == ["user_message", "assistant_message"] * 2, \
            f"{account.name}'s thread after the follow-up: {texts}"
        assert f"I am {account.name}." in texts[0] and "Italy" in texts[2], texts
        assert texts[3].strip() and follow_up.text.strip()[:20] in texts[3], (texts, follow_up.text)

    await asyncio.gather(*(resume(a) for a in accounts))


async def _worst_healthz(url: str, stop: asyncio.Event) -> float:
    """The worst /healthz latency seen while the load runs: the app must stay responsive."""
    worst = 0.0
    async with httpx.AsyncClient(timeout=30) as http:
        while not stop.is_set():
            started = time.perf_counter()
            await http.get(url + "/healthz")
            worst = max(worst, time.perf_counter() - started)
            await asyncio.sleep(0.5)
    return worst
