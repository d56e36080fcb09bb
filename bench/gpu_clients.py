"""The clients of the GPU-rate section, each asking N questions at once of the same replay upstream.

* `direct`: the bare openai client straight to the upstream (the limit);
* a Chainlit app (ours in attach mode, or the seed app) through its socket.io protocol as a browser
  (bench/chainlit_client.py), one session per question.

Every question carries a tag (`[tag] prompt`) by which the upstream's own record of the request (when it
arrived, when its first and last tokens were written) is matched to what the client saw.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import openai

from bench.chainlit_client import ChainlitSession
from bench.direct import make_client, stream_direct
from bench.sections.streaming import PROMPT, chat_params

CONNECT_AT_ONCE = 16  # sessions opening at the same moment (512 at once would measure the connect storm)


@dataclass
class Answer:
    """What one client saw of one answer; times are time.perf_counter() (CLOCK_MONOTONIC, as the upstream's)."""

    tag: str
    sent_at: float
    first_at: float | None
    last_at: float | None
    text: str
    events: int  # socket.io events received for this answer (app), or SSE chunks (direct)
    stream_events: int  # of which carried text
    completed: bool
    error: str | None = None


def question(tag: str) -> str:
    return f"[{tag}] {PROMPT}"


def tag_of(text: str) -> str:
    return text[1:].partition("]")[0] if text.startswith("[") else ""


async def direct_answers(base_url: str, api_key: str, model: str, tags: list[str], max_tokens: int) -> list[Answer]:
    client: openai.AsyncOpenAI = make_client(base_url, api_key)
    params = chat_params(max_tokens, 2048)

    async def one(tag: str) -> Answer:
        try:
            result = await stream_direct(client, model, question(tag), params)
        except openai.OpenAIError as exc:
            return Answer(tag, time.perf_counter(), None, None, "", 0, 0, False, f"{type(exc).__name__}: {exc}")
        return Answer(tag, result.sent_at, result.first_token_at, result.last_token_at, result.text,
                      result.chunks, result.chunks, result.done_at is not None)

    try:
        return list(await asyncio.gather(*(one(tag) for tag in tags)))
    finally:
        await client.close()


async def open_sessions(url: str, user: str | None, cookies: dict[str, str], n: int, *, welcome: bool,
                        settings: dict[str, object] | None) -> list[ChainlitSession]:
    """n browser sessions, connected (and their chat settings applied) before any question is sent."""
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)
    sessions = [ChainlitSession(url, user, cookies=cookies, connect_timeout=300) for _ in range(n)]

    async def connect(session: ChainlitSession) -> None:
        async with gate:
            await session.connect(wait_welcome=welcome)
            if settings:
                await session.update_settings(settings)

    try:
        await asyncio.gather(*(connect(s) for s in sessions))
    except BaseException:
        await close_sessions(sessions)
        raise
    return sessions


async def close_sessions(sessions: list[ChainlitSession]) -> None:
    await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


async def app_answers(sessions: list[ChainlitSession], tags: list[str], timeout: float) -> list[Answer]:
    """Every session asks its question at the same moment."""

    async def one(session: ChainlitSession, tag: str) -> Answer:
        before = len(session.events)
        result = await session.ask(question(tag), timeout=timeout)
        return Answer(tag, result.sent_at, result.first_token_at, result.last_token_at, result.text,
                      len(session.events) - before, result.stream_events, result.completed, result.error)

    return list(await asyncio.gather(*(one(s, t) for s, t in zip(sessions, tags, strict=True))))
