"""One answer's stream without Chainlit: fallbacks, coalescing, pace learning and the count of streams.

The tokens are the real ones recorded from vLLM 0.32 (SmolLM2-135M, 64 tokens, include_usage). Requests
that go through the openai client are answered by httpx's in-memory transport (the client's own error
mapping and SSE decoding run); the others read the recorded chunks from a small source that can stop
half-way, by failing or by hanging until it is cancelled."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the HTTP client package openai 3 is built on
import openai
import pytest

from chainlit_app.answer_stream import AnswerRequest, AnswerStream
from chainlit_app.conversation import Conversation, Fitted, Params
from chainlit_app.engine.stream import Chunk, open_chat_stream
from chainlit_app.pacing import FLUSH_SECONDS, StreamPace

RECORDED = (Path(__file__).parents[1] / "data" / "streams" / "smollm2_64_tokens.sse").read_bytes()
CHUNKS: list[Chunk] = [
    json.loads(event[len(b"data: "):]) for event in RECORDED.split(b"\n\n")
    if event.startswith(b"data: {")
]
TEXT = "".join((c["choices"][0]["delta"].get("content") or "") for c in CHUNKS if c.get("choices"))
TOKENS = sum(1 for c in CHUNKS if c.get("choices") and c["choices"][0]["delta"].get("content"))
# what vLLM 0.32 answers when a request is too long for the model (recorded on this machine)
CONTEXT_400 = {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
               "message": "This model's maximum context length is 2048 tokens. However, your request has "
                          "2301 input tokens. Please reduce the length of the input messages."}
INTERVAL_400 = {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
                "message": "[{'type': 'extra_forbidden', 'loc': ('body', 'stream_interval'), "
                           "'msg': 'Extra inputs are not permitted'}]"}


class Clock:
    """Time that moves `step` seconds each time it is read: one read per token received."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class RecordedSource:
    """The recorded chunks, the first `stop_after` of them only; then the stream fails with `error`,
    or (no error) waits until the reader gives up. `close()` is what aborts the request in vLLM."""

    def __init__(self, stop_after: int | None = None, error: Exception | None = None) -> None:
        self.stop_after, self.error = stop_after, error
        self.bodies: list[dict[str, Any]] = []
        self.closed = False

    async def open(self, body: dict[str, Any]) -> RecordedSource:
        self.bodies.append(body)
        return self

    async def close(self) -> None:
        self.closed = True

    async def __aiter__(self) -> AsyncIterator[Chunk]:
        for chunk in CHUNKS[: self.stop_after]:
            yield chunk
        if self.stop_after is not None:
            if self.error is not None:
                raise self.error
            await asyncio.Event().wait()


def _server(answers: list[dict[str, Any] | None], seen: list[dict[str, Any]]) -> openai.AsyncOpenAI:
    """An openai client whose server answers each request with the next of `answers`: a 400 error body,
    or (None) the recorded stream."""

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        error = answers.pop(0)
        if error is not None:
            return httpx.Response(400, json=error)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=RECORDED)

    return openai.AsyncOpenAI(base_url="http://vllm.test/v1", api_key="k", max_retries=0,
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)))


def _request(shorten: Callable[[float], Fitted] | None = None) -> AnswerRequest:
    conversation = Conversation(turns=[{"role": "user", "content": "Tell me a story."}])
    params = Params(temperature=0.0, max_tokens=64)
    fitted = conversation.fit(params, 2048)
    return AnswerRequest("smollm2-135m-instruct", params, fitted,
                         shorten or (lambda scale: conversation.fit(params, 2048, budget_scale=scale)))


class Sink:
    """Where the text goes (a Chainlit message's stream_token in the app); notes the load at each call."""

    def __init__(self, pace: StreamPace) -> None:
        self.pace = pace
        self.calls: list[str] = []
        self.active_seen: set[int] = set()

    async def __call__(self, text: str) -> None:
        self.calls.append(text)
        self.active_seen.add(self.pace.active)


async def test_the_recorded_answer_arrives_whole_with_its_end_reason_and_token_count() -> None:
    pace, source, firsts = StreamPace(), RecordedSource(), list[int]()
    sink = Sink(pace)
    answer = AnswerStream(_request(), source.open, pace, clock=Clock(0.001))
    await answer.run(sink, on_first_token=lambda: firsts.append(len(sink.calls)))
    assert "".join(sink.calls) == answer.text == TEXT and TEXT.startswith("Lighthouse keeper")
    assert (answer.finish_reason, answer.completion_tokens) == ("length", 64)
    assert firsts == [1], "called once, right after the first text reached the sink"
    assert answer.first_token_seconds == pytest.approx(0.001)
    assert sink.active_seen == {1} and pace.active == 0, "counted while streaming, not after"
    assert not source.closed, "a finished stream needs no abort"


async def test_on_sent_runs_once_the_server_has_the_request_and_before_the_first_token() -> None:
    """The chat sends the answer's hooks and lets the history write here, after the one thing a burst of
    questions waits for (the request), before the page's first token."""
    pace, seen = StreamPace(), list[dict[str, Any]]()
    sink, events = Sink(pace), list[str]()

    async def sent() -> None:
        events.append(f"sent after {len(seen)} request(s), {len(sink.calls)} sink call(s)")

    answer = AnswerStream(_request(), lambda body: open_chat_stream(_server([None], seen), body), pace)
    await answer.run(sink, on_sent=sent)
    assert events == ["sent after 1 request(s), 0 sink call(s)"]
    assert "".join(sink.calls) == TEXT


async def test_tokens_faster_than_the_screen_are_coalesced_and_the_first_is_never_held() -> None:
    pace, source = StreamPace(), RecordedSource()
    sink = Sink(pace)
    step = FLUSH_SECONDS / 10  # ten tokens within one UI update
    await AnswerStream(_request(), source.open, pace, clock=Clock(step)).run(sink)
    assert sink.calls[0] == "L", "the first token goes out at once"
    assert TOKENS // 12 <= len(sink.calls) <= TOKENS // 8 + 2, "about one sink call per ten tokens"
    assert "".join(sink.calls) == TEXT


async def test_tokens_slower_than_the_screen_go_out_one_by_one() -> None:
    pace, source = StreamPace(), RecordedSource()
    sink = Sink(pace)
    await AnswerStream(_request(), source.open, pace, clock=Clock(FLUSH_SECONDS * 2)).run(sink)
    assert len(sink.calls) == TOKENS


async def test_a_finished_answer_teaches_the_pace_which_then_asks_vllm_for_groups() -> None:
    pace, source = StreamPace(), RecordedSource()
    step = 0.002  # 500 tokens a second: a fast engine
    await AnswerStream(_request(), source.open, pace, clock=Clock(step)).run(Sink(pace))
    assert "stream_interval" not in source.bodies[0], "no rate known yet: single tokens"
    assert pace.rate(1) == pytest.approx((64 - 1) / ((TOKENS - 1) * step))
    await AnswerStream(_request(), source.open, pace, clock=Clock(step)).run(Sink(pace))
    assert source.bodies[1]["stream_interval"] == pace.stream_interval(1) > 1
    unbatched = RecordedSource()
    await AnswerStream(_request(), unbatched.open, pace, batching=False, clock=Clock(step)).run(Sink(pace))
    assert "stream_interval" not in unbatched.bodies[0], "stream batching off: never asked for"


async def test_a_server_that_refuses_stream_interval_gets_single_tokens_from_then_on() -> None:
    pace, seen = StreamPace(), list[dict[str, Any]]()
    pace.record(streams=1, tokens=301, first_to_last_seconds=1.0)  # fast enough to ask for groups
    async with _server([INTERVAL_400, None], seen) as client:
        answer = AnswerStream(_request(), lambda body: open_chat_stream(client, body), pace)
        await answer.run(Sink(pace))
    assert "stream_interval" in seen[0] and "stream_interval" not in seen[1]
    assert answer.text == TEXT
    assert pace.max_interval == 1 and pace.stream_interval(1) == 1, "later answers do not ask again"


async def test_a_context_length_400_retries_once_with_the_conversation_fitted_shorter() -> None:
    pace, seen = StreamPace(), list[dict[str, Any]]()
    shortened = Fitted([{"role": "user", "content": "Tell me a story."}], 32, 0)
    async with _server([CONTEXT_400, None], seen) as client:
        answer = AnswerStream(_request(lambda scale: shortened), lambda body: open_chat_stream(client, body), pace)
        await answer.run(Sink(pace))
    assert [body["max_tokens"] for body in seen] == [64, 32]
    assert answer.text == TEXT


async def test_a_second_context_length_400_is_the_answer_and_the_count_goes_back_to_0() -> None:
    pace, seen = StreamPace(), list[dict[str, Any]]()
    async with _server([CONTEXT_400, CONTEXT_400, None], seen) as client:
        answer = AnswerStream(_request(), lambda body: open_chat_stream(client, body), pace)
        with pytest.raises(openai.BadRequestError, match="maximum context length"):
            await answer.run(Sink(pace))
    assert len(seen) == 2 and pace.active == 0 and answer.text == ""


async def test_a_stream_that_breaks_keeps_the_text_so_far_closes_and_stops_counting() -> None:
    pace = StreamPace()
    source = RecordedSource(stop_after=10, error=openai.APIError("EngineCore died", httpx.Request("POST", "/"),
                                                                 body=None))
    sink = Sink(pace)
    answer = AnswerStream(_request(), source.open, pace, clock=Clock(0.001))
    with pytest.raises(openai.APIError, match="EngineCore died"):
        await answer.run(sink)
    assert answer.text and TEXT.startswith(answer.text) and answer.text.startswith("".join(sink.calls))
    assert source.closed and pace.active == 0
    assert pace.rate(1) is None, "a broken answer teaches no rate"


async def test_a_cancelled_answer_closes_the_stream_and_stops_counting() -> None:
    pace, source = StreamPace(), RecordedSource(stop_after=20)
    sink = Sink(pace)
    answer = AnswerStream(_request(), source.open, pace, clock=Clock(0.001))
    task = asyncio.create_task(answer.run(sink))
    while len(answer.text) < len("Lighthouse keeper"):
        await asyncio.sleep(0)
    assert pace.active == 1
    await asyncio.sleep(0.01)  # let the source reach its end and hang there
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert source.closed and pace.active == 0
    assert TEXT.startswith(answer.text) and len(answer.text) > len("Lighthouse keeper")
