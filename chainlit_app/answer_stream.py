"""One answer streamed from the server to a sink, without Chainlit: fallbacks, coalescing, pace learning.

The chat (`chat.py`) hands in how to open a stream and where text goes (a Chainlit message's
`stream_token`); what happens in between lives here so that tests can drive it with a recorded stream:

* fallbacks: a 400 about the context length retries once with the oldest turns left out and max_tokens
  lowered, to half the context or less when vLLM's count of the prompt says the estimate was further off
  (`sent` and `refused_as_too_long` tell the chat what to say); a 400 about `stream_interval` (not vLLM,
  or an old one) retries once with single tokens;
* coalescing: tokens are gathered into fewer sink calls under load (`pacing.flush_interval`), the
  first token is never held back;
* pace learning: a finished answer's token rate is recorded at the load it streamed under, and that
  load is counted while the answer streams (`StreamPace.streaming`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterable, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import openai

from chainlit_app.conversation import Fitted, InputTooLong, Params, retry_scale
from chainlit_app.engine.stream import Chunk, piece
from chainlit_app.pacing import StreamPace, flush_interval

log = logging.getLogger(__name__)

OpenStream = Callable[[dict[str, Any]], Awaitable[AsyncIterable[Chunk]]]
Sink = Callable[[str], Awaitable[object]]
_ATTEMPTS = 3  # the request itself, then each fallback once


@dataclass(frozen=True)
class AnswerRequest:
    """What to ask for: the served model, the sampling settings, and the conversation fitted to the
    context; `shorten` fits it again to half the budget when the server says it is still too long."""

    model: str
    params: Params
    fitted: Fitted
    shorten: Callable[[float], Fitted]  # the conversation fitted to this share of the context


def _body(request: AnswerRequest, fitted: Fitted, interval: int) -> dict[str, Any]:
    return {
        "model": request.model,
        "messages": fitted.messages,
        "temperature": request.params.temperature,
        "top_p": request.params.top_p,
        "max_tokens": fitted.max_tokens,
        # vLLM's own sampling parameter (not OpenAI's); sent only when on, so other servers never see it
        **({"repetition_penalty": request.params.repetition_penalty} if request.params.repetition_penalty != 1.0
           else {}),
        "stream_options": {"include_usage": True},
        **({"stream_interval": interval} if interval > 1 else {}),
    }


async def _close(stream: object) -> None:
    """Closing the HTTP stream is what makes vLLM abort the request."""
    close = getattr(stream, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()


class AnswerStream:
    """Streams one answer into a sink and keeps what the chat needs afterwards: the text received
    (also when the answer broke off), why it ended, the token count, and the time to the first token."""

    def __init__(self, request: AnswerRequest, open_stream: OpenStream, pace: StreamPace, *,
                 batching: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        self.request = request
        self.finish_reason: str | None = None
        self.completion_tokens: int | None = None
        self.first_token_seconds: float | None = None
        self._open_stream = open_stream
        self._pace = pace
        self._batching = batching
        self._clock = clock
        self._pieces: list[str] = []
        self.sent = request.fitted  # the conversation as last sent (shorter after a context-length refusal)
        self.refused_as_too_long = False

    @property
    def text(self) -> str:
        """Every token received so far, whether or not the sink has been given it yet."""
        return "".join(self._pieces)

    async def run(self, sink: Sink, on_first_token: Callable[[], None] = lambda: None,
                  on_sent: Callable[[], Awaitable[object]] | None = None) -> None:
        """Stream the answer; `on_sent` is awaited once the server has the request (before the first token
        is read), `on_first_token` runs once, right after the first text reached the sink. On an error or
        cancellation the stream is closed (so vLLM stops generating) and the error goes on; `text` then
        holds what came before it."""
        with self._pace.streaming():
            stream: AsyncIterable[Chunk] | None = None
            try:
                started = self._clock()
                interval = 1
                if self._batching:
                    interval = self._pace.stream_interval(self._pace.expected_load(self._pace.active))
                stream, interval = await self._open(interval)
                if on_sent is not None:
                    await on_sent()
                await self._relay(stream, interval, started, sink, on_first_token)
            except BaseException:
                await _close(stream)
                raise

    async def _open(self, interval: int) -> tuple[AsyncIterable[Chunk], int]:
        """Open the stream, falling back once for each 400 there is a fallback for."""
        fitted = self.request.fitted
        shortened = False
        for _attempt in range(_ATTEMPTS):
            try:
                return await self._open_stream(_body(self.request, fitted, interval)), interval
            except openai.BadRequestError as exc:
                if not shortened and "context length" in str(exc):
                    try:
                        fitted = self.request.shorten(retry_scale(str(exc), fitted))
                    except InputTooLong:
                        raise exc from None  # the newest message alone is too long: the server's refusal stands
                    self.sent, self.refused_as_too_long, shortened = fitted, True, True
                    log.info("the server refused the conversation as too long: retrying without %d turn(s), "
                             "max_tokens %d", fitted.dropped_turns, fitted.max_tokens)
                    continue
                if interval > 1 and "stream_interval" in str(exc):
                    log.warning("the server refused stream_interval (not vLLM, or an old one): tokens come one by one")
                    self._pace.max_interval = interval = 1
                    continue
                raise
        raise AssertionError("unreachable: each fallback is taken once, the third attempt returns or raises")

    async def _relay(self, stream: AsyncIterable[Chunk], interval: int, started: float, sink: Sink,
                     on_first_token: Callable[[], None]) -> None:
        buffer: list[str] = []
        sent_any = False
        last_flush = 0.0
        first_token_at: float | None = None
        last_token_at: float | None = None
        load_seen = 0  # the sum of streams at each chunk: the answer's rate is learnt at its mean load
        chunks = 0
        async for chunk in stream:
            got = piece(chunk)
            if got.completion_tokens is not None:
                self.completion_tokens = got.completion_tokens
            if got.finish_reason:
                self.finish_reason = got.finish_reason
            token = got.content
            if not token:
                continue
            buffer.append(token)
            self._pieces.append(token)
            now = last_token_at = self._pace.last_token_at = self._clock()
            load_seen += self._pace.active
            chunks += 1
            # A batched chunk is already about one UI update's worth: forward it unless chunks come twice as fast.
            wait = flush_interval(self._pace.active) / (2 if interval > 1 else 1)
            if not sent_any or now - last_flush >= wait:
                await sink("".join(buffer))
                buffer.clear()
                sent_any = True
                last_flush = now
            if first_token_at is None:
                first_token_at = now
                self.first_token_seconds = now - started
                on_first_token()
        if buffer:
            await sink("".join(buffer))
        if first_token_at is not None and last_token_at is not None:
            self._pace.record(round(load_seen / chunks), self.completion_tokens, last_token_at - first_token_at)
