"""Access hardening through the running app: `chainlit run app.py` in attach mode (no vLLM needed: the
engine is irrelevant to logins), driven over HTTP and Socket.IO as a browser or an attacker would.

Client addresses are set with X-Forwarded-For, which uvicorn honours from 127.0.0.1 only (a reverse
proxy on the same host), exactly as it would for a proxied deployment.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import socketio

from bench.apps import AppServer, start_app
from bench.chainlit_client import SOCKET_PATH
from chainlit_app.engine.supervisor import free_port

ATTACKER = {"X-Forwarded-For": "203.0.113.9"}
ADMIN_DESK = {"X-Forwarded-For": "198.51.100.7"}
THREADS = {"pagination": {"first": 5}, "filter": {}}


@asynccontextmanager
async def running_app(data_dir: Path, admin_password: str, users: str, **env: str) -> AsyncIterator[AppServer]:
    """The app as a user starts it, attached to a dead port; the data folder (auth secret, history)
    is kept between starts of the same test, as across a real restart."""
    server = start_app(data_dir, admin_password=admin_password, CHAT_USERS=users, CHAT_MODE="attach",
                       CHAT_VLLM_URL=f"http://127.0.0.1:{free_port()}/v1", CHAT_PRELAUNCH="0", **env)
    try:
        await server.wait_http(180)
        yield server
    finally:
        server.stop()


async def login(url: str, name: str, password: str, headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        return await http.post("/login", data={"username": name, "password": password}, headers=headers or {})


async def status(url: str, method: str, path: str, cookies: dict[str, str], **request: Any) -> httpx.Response:
    """One request with a session's cookies (a client per session, as each browser has its own jar)."""
    async with httpx.AsyncClient(base_url=url, cookies=cookies, timeout=30) as http:
        return await http.request(method, path, **request)


def cookies_of(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 200, response.text
    return {"access_token": response.cookies["access_token"]}


async def socket_accepts(url: str, cookies: dict[str, str], origin: str | None = None) -> bool:
    """Open Chainlit's socket as the browser does; False when the server refuses the connection."""
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}
    if origin:
        headers["Origin"] = origin
    client = socketio.AsyncClient(reconnection=False)
    try:
        await client.connect(url, headers=headers, socketio_path=SOCKET_PATH, transports=["websocket"],
                             auth={"clientType": "webapp", "sessionId": str(uuid.uuid4()), "threadId": "",
                                   "userEnv": json.dumps({}), "chatProfile": ""}, wait_timeout=30)
    except socketio.exceptions.ConnectionError:
        return False
    await client.disconnect()
    return True


async def test_failed_logins_slow_the_attacker_not_the_admin(tmp_path: Path) -> None:
    """Item 1: wrong admin passwords from one address (the name is predictable) back that address off,
    while the admin logs in from another; each attempt is logged with its address."""
    async with running_app(tmp_path, "right-admin-pw", "alice:alice-pw:user") as app:
        counted, retry_after = 0, 0
        for _ in range(40):  # failures beyond the 5 free ones double the wait: 1, 2, 4, 8 s
            response = await login(app.url, "admin", f"guess-{counted}", ATTACKER)
            if response.status_code == 401:
                counted += 1
                continue
            assert response.status_code == 429, response.text
            retry_after = int(response.headers["Retry-After"])
            if retry_after >= 8:
                break
            await asyncio.sleep(retry_after)
        print(f"{counted} failures counted from the attacker's address; it now waits {retry_after} s")
        assert retry_after >= 8 and counted >= 9, "five free failures, then a doubling backoff"

        from_attacker = await login(app.url, "admin", "right-admin-pw", ATTACKER)
        assert from_attacker.status_code == 429, "the attacker's address is held back, even with the right password"
        assert "try again in" in from_attacker.json()["detail"]
        from_admin = await login(app.url, "admin", "right-admin-pw", ADMIN_DESK)
        async with httpx.AsyncClient(base_url=app.url, cookies=cookies_of(from_admin)) as http:
            assert (await http.get("/api/diagnostics")).status_code == 200, "the admin is not locked out"
        assert (await login(app.url, "alice", "alice-pw", ATTACKER)).status_code == 200, "other names still work"

        log = app.log_text()
        assert "login failed for 'admin' from 203.0.113.9" in log
        assert "login throttled for 'admin' from 203.0.113.9" in log
        assert "login ok for 'admin' (admin) from 198.51.100.7" in log
        assert "right-admin-pw" not in log and "guess-0" not in log


async def test_sessions_follow_the_live_user_directory(tmp_path: Path) -> None:
    """Item 2: after a restart with alice removed, bob demoted and another admin password, their old
    tokens stop working (HTTP routes, admin API and socket); a shorter CHAT_SESSION_HOURS ends old tokens."""
    async with running_app(tmp_path, "admin-pw-1", "alice:alice-pw:user,bob:bob-pw:admin") as first:
        response = await login(first.url, "admin", "admin-pw-1")
        assert f"Max-Age={24 * 3600}" in response.headers["set-cookie"], "the default login lasts one day"
        admin = cookies_of(response)
        claims = jwt.decode(admin["access_token"], options={"verify_signature": False})
        assert claims["exp"] - claims["iat"] == 24 * 3600
        alice = cookies_of(await login(first.url, "alice", "alice-pw"))
        bob = cookies_of(await login(first.url, "bob", "bob-pw"))
        assert (await status(first.url, "GET", "/api/diagnostics", bob)).status_code == 200
        assert (await status(first.url, "POST", "/project/threads", alice, json=THREADS)).status_code == 200
        assert await socket_accepts(first.url, alice)

    async with running_app(tmp_path, "admin-pw-2", "bob:bob-pw:user") as second:
        url = second.url
        assert (await status(url, "GET", "/user", admin)).status_code == 401, "admin password changed"
        assert (await status(url, "GET", "/api/diagnostics", admin)).status_code == 401
        assert (await status(url, "GET", "/user", alice)).status_code == 401, "alice was removed"
        assert (await status(url, "POST", "/project/threads", alice, json=THREADS)).status_code == 401
        me = await status(url, "GET", "/user", bob)
        assert me.status_code == 200 and me.json()["metadata"]["role"] == "user", "bob's role is the live one"
        assert (await status(url, "GET", "/api/diagnostics", bob)).status_code == 403, "bob was demoted"
        bearer = {"Authorization": f"Bearer {bob['access_token']}"}
        exchange = await status(url, "POST", "/auth/jwt", {}, headers=bearer)
        assert exchange.status_code == 403, "no token exchange to outlive the session"
        assert not await socket_accepts(url, alice), "a removed user's socket is refused"
        assert not await socket_accepts(url, admin)
        assert await socket_accepts(url, bob)
        new_admin = cookies_of(await login(url, "admin", "admin-pw-2"))
        assert (await status(url, "GET", "/api/diagnostics", new_admin)).status_code == 200
        assert "session refused" in second.log_text()

    lifetime = 20.0  # CHAT_SESSION_HOURS below, in seconds
    issued = jwt.decode(bob["access_token"], options={"verify_signature": False})["iat"]
    await asyncio.sleep(max(0.0, issued + lifetime + 1 - time.time()))
    shorter = {"CHAT_SESSION_HOURS": str(lifetime / 3600)}
    async with running_app(tmp_path, "admin-pw-2", "bob:bob-pw:user", **shorter) as third:
        assert (await status(third.url, "GET", "/user", bob)).status_code == 401, "older than CHAT_SESSION_HOURS"
        response = await login(third.url, "bob", "bob-pw")
        assert f"Max-Age={int(lifetime)}" in response.headers["set-cookie"]
        assert (await status(third.url, "GET", "/user", cookies_of(response))).status_code == 200


async def test_only_the_apps_own_origin_and_the_listed_ones(tmp_path: Path) -> None:
    """Item 3: CORS answers only listed origins; state-changing requests and sockets from a foreign
    origin are refused, with the fix in the message."""
    listed, evil = "https://chat.example.org", "http://evil.example"
    async with running_app(tmp_path, "admin-pw", "alice:alice-pw", CHAT_ALLOWED_ORIGINS=listed) as app:
        admin = cookies_of(await login(app.url, "admin", "admin-pw"))
        async with httpx.AsyncClient(base_url=app.url, cookies=admin) as http:
            foreign = await http.get("/user", headers={"Origin": evil})
            assert "access-control-allow-origin" not in foreign.headers, "the browser keeps the answer from evil"
            allowed = await http.get("/user", headers={"Origin": listed})
            assert allowed.headers["access-control-allow-origin"] == listed
            preflight = await http.options("/project/threads", headers={
                "Origin": evil, "Access-Control-Request-Method": "POST"})
            assert preflight.status_code == 400 and "access-control-allow-origin" not in preflight.headers

            refused = await http.post("/project/threads", json=THREADS, headers={"Origin": evil})
            assert refused.status_code == 403 and "CHAT_ALLOWED_ORIGINS" in refused.json()["detail"]
            assert (await http.post("/project/threads", json=THREADS, headers={"Origin": app.url})).status_code == 200
            assert (await http.post("/project/threads", json=THREADS, headers={"Origin": listed})).status_code == 200
            assert (await http.post("/logout", headers={"Origin": evil})).status_code == 403
        forged_login = await login(app.url, "admin", "admin-pw", {"Origin": evil})
        assert forged_login.status_code == 403, "no login forged from another site"
        assert not await socket_accepts(app.url, admin, origin=evil)
        assert await socket_accepts(app.url, admin, origin=app.url)
        assert "refused POST /project/threads from origin 'http://evil.example'" in app.log_text()


@pytest.mark.parametrize("users", ["bob:bob-S3cr3t:2:admin", "bob:bob-S3cr3t:superuser", "bob"])
def test_malformed_chat_users_stop_the_start(tmp_path: Path, users: str) -> None:
    """Item 14: the app refuses to start, says which entry and why, and prints no password."""
    server = start_app(tmp_path, CHAT_USERS=users, CHAT_MODE="attach", CHAT_VLLM_URL="http://127.0.0.1:9/v1",
                       CHAT_PRELAUNCH="0")
    try:
        assert server.process.wait(timeout=120) != 0
    finally:
        server.stop()
    output = server.log_text()
    print(output[-600:])
    assert "not started, the configuration is refused" in output and "CHAT_USERS entry 1" in output
    assert "S3cr3t" not in output and "Traceback" not in output


async def test_generated_admin_password_stays_out_of_a_piped_log(tmp_path: Path) -> None:
    """Lead's note to item 5: output that is not a terminal (here a log file) names the password's
    file instead of the password, and that password logs in."""
    async with running_app(tmp_path, "", "alice:alice-pw", CHAT_ADMIN_PASSWORD="") as app:
        generated = (tmp_path / "admin_password").read_text().strip()
        log = app.log_text()
        assert f"generated password in {tmp_path / 'admin_password'}" in log and generated not in log
        assert (await login(app.url, "admin", generated)).status_code == 200
