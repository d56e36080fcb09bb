"""A client of a running Chainlit 2.12 app that speaks the browser's protocol, for benchmarks and load tests.

Why not Playwright: 32 browsers do not fit on a 2-core machine, and a browser's own rendering would be
measured too. This client does what the browser's JavaScript does, no more:

1. `POST /login` (form fields `username`, `password`): the server sets the `access_token` cookie.
2. `POST /set-session-cookie` with a fresh session id (the browser's sticky-session cookie).
3. socket.io at path `/ws/socket.io` with the cookies and the `auth` payload that
   `chainlit/socket.py:connect` reads: `clientType`, `sessionId`, `threadId`, `userEnv`, `chatProfile`.
4. `connection_successful` (runs `on_chat_start`) and `fetch_favorites`, as the frontend emits them.
5. A question is a `client_message` event `{"message": <user step>, "fileReferences": []}`.
   The answer arrives as `task_start`, `stream_start` (the first token, inside a step dict),
   `stream_token` events, `new_message`/`update_message` (the final text) and `task_end`.

Usage::

    async with ChainlitSession("http://127.0.0.1:8000", "admin", "secret") as session:
        result = await session.ask("What is the capital of France?", timeout=120)
        print(result.text, result.first_token_s, result.stream_events, result.total_s)

Many sessions of one user can share one login: `cookies = await login(url, user, password)`, then
`ChainlitSession(url, user, cookies=cookies)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import httpx
import socketio

from bench.stats import StreamTimes

SOCKET_PATH = "/ws/socket.io"


class LoginError(RuntimeError):
    """The app refused the login (wrong password, or no password auth configured)."""


@dataclass(frozen=True)
class Event:
    """One socket.io event as received, with the client's clock (time.perf_counter)."""

    at: float
    name: str
    data: Any


@dataclass
class AskResult(StreamTimes):
    """What one question produced, as the browser would have seen it; times are perf_counter values."""

    question: str
    sent_at: float
    text: str = ""  # the streamed text of the answer (what the user watches grow)
    final_text: str | None = None  # the answer's content once the app sent it whole (may add notes)
    message_id: str | None = None
    task_started_at: float | None = None  # task_start: Chainlit began handling the message
    first_token_at: float | None = None  # stream_start: the first token is never coalesced by the app
    last_token_at: float | None = None
    done_at: float | None = None  # task_end: the app finished handling the message
    stream_events: int = 0  # stream_start + stream_token events (the app may coalesce tokens into one)
    first_chunk_chars: int = 0
    notices: list[str] = field(default_factory=list)  # other messages shown meanwhile (waiting, errors)
    completed: bool = False
    error: str | None = None


async def login(url: str, user: str, password: str, *, timeout: float = 30.0) -> dict[str, str]:
    """Log in over HTTP as the login form does; returns the cookies (`access_token`, ...) to reuse."""
    async with httpx.AsyncClient(base_url=url, timeout=timeout) as http:
        response = await http.post("/login", data={"username": user, "password": password})
        if response.status_code != 200:
            raise LoginError(f"login as {user!r} failed: HTTP {response.status_code} {response.text[:200]}")
        return {cookie.name: cookie.value or "" for cookie in http.cookies.jar}


class ChainlitSession:
    """One browser tab's chat session: connect, ask questions, collect the streamed answers.

    Questions in one session share the conversation (the app keeps history per session); open a new
    session for an independent question.
    """

    def __init__(
        self,
        url: str,
        user: str | None = None,
        password: str | None = None,
        *,
        cookies: dict[str, str] | None = None,
        client_type: str = "webapp",
        connect_timeout: float = 60.0,
        transports: tuple[str, ...] = ("websocket",),
        compress: bool = True,
        thread_id: str = "",
    ) -> None:
        self.url = url.rstrip("/")
        self.user = user
        self._password = password
        self._cookies = dict(cookies) if cookies is not None else None  # {}: an app without login
        self.client_type = client_type
        self.connect_timeout = connect_timeout
        self.transports = list(transports)
        # Browsers offer permessage-deflate and Chainlit's uvicorn accepts it (UVICORN_WS_PER_MESSAGE_DEFLATE
        # defaults to true): every token frame is then compressed, a per-token cost a browser client causes.
        self.compress = compress
        self.session_id = str(uuid.uuid4())
        self.thread_id = thread_id  # a stored thread to resume (as the browser at /thread/<id>), or "": a new one
        self.events: list[Event] = []
        self._changed = asyncio.Event()
        self._sio: socketio.AsyncClient | None = None
        self._disconnected = False
        self._busy = asyncio.Lock()

    async def __aenter__(self) -> ChainlitSession:
        await self.connect()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._sio is not None and self._sio.connected and not self._disconnected

    async def connect(self, wait_welcome: bool = True) -> None:
        """Log in (unless cookies were given), open the socket, start the chat like the browser does.

        A session given a `thread_id` resumes that thread: the app answers `resume_thread` (no welcome), so
        connect it with `wait_welcome=False` and wait for that event (`wait_for_event`).

        With `wait_welcome`, return only once the app's `on_chat_start` has finished (Chainlit wraps it in
        `task_start` ... `task_end`; its welcome message has been sent by then): a question sent before
        that races the session's set-up, in a browser too. Use False for an app without on_chat_start.
        """
        if self._cookies is None:
            if self.user is None or self._password is None:
                raise LoginError("give user and password, or cookies from login()")
            self._cookies = await login(self.url, self.user, self._password, timeout=self.connect_timeout)
        cookies = dict(self._cookies)
        async with httpx.AsyncClient(base_url=self.url, cookies=cookies, timeout=self.connect_timeout) as http:
            response = await http.post("/set-session-cookie", json={"session_id": self.session_id})
            if response.status_code == 200:
                cookies.update({cookie.name: cookie.value or "" for cookie in http.cookies.jar})
        sio = socketio.AsyncClient(reconnection=False,
                                   websocket_extra_options={"compress": 15} if self.compress else {})
        sio.on("*", self._on_event)
        sio.on("disconnect", self._on_disconnect)
        self._sio = sio
        await sio.connect(
            self.url,
            headers={"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())},
            auth={
                "clientType": self.client_type,
                "sessionId": self.session_id,
                "threadId": self.thread_id,
                "userEnv": json.dumps({}),
                "chatProfile": "",
            },
            transports=self.transports,
            socketio_path=SOCKET_PATH,
            wait_timeout=self.connect_timeout,
        )
        await sio.emit("connection_successful")
        await sio.emit("fetch_favorites")
        if wait_welcome and not await self._wait_for(lambda: _task_done(self.events), self.connect_timeout):
            raise TimeoutError(f"on_chat_start did not finish within {self.connect_timeout:.0f} s")

    async def wait_for_event(self, name: str, timeout: float = 60.0) -> Event | None:
        """The first event called `name` received so far or within `timeout`; None if none came."""
        def first() -> Event | None:
            return next((e for e in self.events if e.name == name), None)

        await self._wait_for(lambda: first() is not None, timeout)
        return first()

    def thread_started(self) -> str | None:
        """The id of the thread this session writes to, once the app said so (`first_interaction`)."""
        for event in self.events:
            if event.name == "first_interaction" and isinstance(event.data, dict):
                return str(event.data.get("thread_id") or "") or None
        return None

    async def close(self) -> None:
        """Disconnect as a closed tab does (`clear_session` first, so the server drops the session)."""
        sio, self._sio = self._sio, None
        if sio is None:
            return
        with contextlib.suppress(Exception):
            if sio.connected:
                await sio.emit("clear_session")
                await sio.disconnect()
        with contextlib.suppress(Exception):
            await sio.shutdown()

    async def ask(self, text: str, timeout: float = 120.0) -> AskResult:
        """Send `text` as the user and collect the answer until the app ends the task.

        Never raises on a slow or failed answer: `completed` is False and `error` says why (timeout,
        disconnected); what arrived until then is in the result.
        """
        if self._sio is None:
            raise RuntimeError("not connected: use `async with ChainlitSession(...)` or await connect()")
        async with self._busy:
            start = len(self.events)
            payload = {
                "message": {
                    "threadId": "",
                    "id": str(uuid.uuid4()),
                    "name": self.user or "User",
                    "type": "user_message",
                    "output": text,
                    "createdAt": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                    "metadata": {"location": self.url + "/"},
                },
                "fileReferences": [],
            }
            sent_at = time.perf_counter()
            await self._sio.emit("client_message", payload)

            done = await self._wait_for(lambda: _task_done(self.events[start:]), timeout)
            result = self._collect(text, sent_at, self.events[start:])
            result.completed = done and not self._disconnected
            if not done:
                result.error = "disconnected" if self._disconnected else f"timeout after {timeout:.0f} s"
            return result

    async def stop(self) -> None:
        """Press Stop: the app cancels the running answer."""
        if self._sio is not None:
            await self._sio.emit("stop")

    async def update_settings(self, values: dict[str, Any], timeout: float = 30.0) -> bool:
        """Send chat settings (e.g. `{"temperature": 0, "max_tokens": 128}`) as the settings dialog does, and
        wait until the app's `on_settings_update` has run (Chainlit wraps it in a task). False on timeout."""
        if self._sio is None:
            raise RuntimeError("not connected")
        async with self._busy:
            start = len(self.events)
            await self._sio.emit("chat_settings_change", values)
            return await self._wait_for(lambda: _task_done(self.events[start:]), timeout)

    # -- internals ------------------------------------------------------------------------------------
    async def _on_event(self, name: str, data: Any = None) -> None:
        self.events.append(Event(time.perf_counter(), name, data))
        self._changed.set()

    async def _on_disconnect(self, *_reason: Any) -> None:
        self._disconnected = True
        self._changed.set()

    async def _wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self._disconnected:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._changed.clear()
            if predicate():
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._changed.wait()
        return True

    @staticmethod
    def _collect(question: str, sent_at: float, events: list[Event]) -> AskResult:
        """Rebuild the answer from the events, as the frontend's message list does."""
        result = AskResult(question=question, sent_at=sent_at)
        others: dict[str, str] = {}
        chunks: list[str] = []
        started = False
        for event in events:
            data = event.data if isinstance(event.data, dict) else {}
            if event.name == "stream_start" and result.message_id is None:
                result.message_id = str(data.get("id"))
                first = str(data.get("output") or "")
                chunks.append(first)
                result.first_chunk_chars = len(first)
                result.first_token_at = result.last_token_at = event.at
                result.stream_events += 1
            elif event.name == "stream_token" and data.get("id") == result.message_id:
                token = str(data.get("token") or "")
                if data.get("isSequence"):
                    chunks = [token]
                else:
                    chunks.append(token)
                result.last_token_at = event.at
                result.stream_events += 1
            elif event.name in ("new_message", "update_message") and data.get("type") != "run":
                message_id = str(data.get("id"))
                output = str(data.get("output") or "")
                if message_id == result.message_id:
                    result.final_text = output
                else:
                    others[message_id] = output
            elif event.name == "delete_message":
                others.pop(str(data.get("id")), None)
            elif event.name == "task_start":
                started = True
                if result.task_started_at is None:
                    result.task_started_at = event.at
            elif event.name == "task_end" and started and result.done_at is None:
                result.done_at = event.at
        result.text = "".join(chunks)
        result.notices = [text for text in others.values() if text]
        if result.message_id is None and result.notices:
            result.final_text = result.notices[-1]
        return result


def _task_done(events: list[Event]) -> bool:
    """A `task_start` followed by a `task_end`: Chainlit has finished handling what started the task."""
    started = False
    for event in events:
        if event.name == "task_start":
            started = True
        elif event.name == "task_end" and started:
            return True
    return False
