"""Chatting with a real vLLM the way the app does: streaming, history fitting, settings, stop/abort."""

from __future__ import annotations

import asyncio
import time

import openai
import pytest

from chainlit_app.conversation import Conversation, Params
from chainlit_app.engine.http import EngineClient
from chainlit_app.engine.supervisor import Supervisor
from tests.conftest import DEMO_SERVED

pytestmark = pytest.mark.integration


def _client(server: Supervisor) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url + "/v1", api_key=server.api_key, max_retries=0)


async def test_streams_a_correct_answer(demo_server: Supervisor) -> None:
    conversation = Conversation()
    conversation.add("user", "What is the capital of France?")
    fitted = conversation.fit(Params(temperature=0.0, max_tokens=64), 2048)
    async with _client(demo_server) as client:
        stream = await client.chat.completions.create(
            model=DEMO_SERVED, messages=fitted.messages, max_tokens=fitted.max_tokens,  # type: ignore[arg-type]
            temperature=0.0, stream=True,
        )
        assert isinstance(stream, openai.AsyncStream)
        pieces = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
    answer = "".join(pieces)
    assert "Paris" in answer
    assert len(pieces) >= 3, "the answer must arrive token by token, not in one piece"


async def test_long_history_is_trimmed_to_fit_the_context(demo_server: Supervisor) -> None:
    """A conversation far longer than max_model_len still gets an answer: the oldest turns are left out."""
    conversation = Conversation()
    for i in range(40):
        conversation.add("user", f"Tell me fact number {i} about rivers. " + "Water flows downhill. " * 20)
        conversation.add("assistant", "Rivers carry water to the sea. " * 20)
    conversation.add("user", "What is the capital of France?")
    fitted = conversation.fit(Params(temperature=0.0, max_tokens=64), 2048)
    assert fitted.dropped_turns > 0
    assert fitted.messages[-1]["content"] == "What is the capital of France?"
    async with _client(demo_server) as client:
        reply = await client.chat.completions.create(
            model=DEMO_SERVED, messages=fitted.messages, max_tokens=fitted.max_tokens,  # type: ignore[arg-type]
            temperature=0.0,
        )
    assert reply.choices[0].message.content


async def test_settings_reach_the_server(demo_server: Supervisor) -> None:
    """max_tokens caps the answer; temperature 0 answers the same twice."""
    async with _client(demo_server) as client:
        short = await client.chat.completions.create(
            model=DEMO_SERVED, messages=[{"role": "user", "content": "Write a long poem about the sea."}],
            max_tokens=5, temperature=0.0,
        )
        assert short.usage is not None and short.usage.completion_tokens <= 5
        assert short.choices[0].finish_reason == "length"
        answers = set()
        for _ in range(2):
            reply = await client.chat.completions.create(
                model=DEMO_SERVED, messages=[{"role": "user", "content": "Name a fruit."}],
                max_tokens=16, temperature=0.0,
            )
            answers.add(reply.choices[0].message.content)
        assert len(answers) == 1


async def test_stop_aborts_the_request_in_vllm(demo_server: Supervisor) -> None:
    """Closing the stream (what Stop does) aborts the request: /metrics shows it stopped generating."""
    probe = EngineClient(demo_server.base_url, None)
    before = await probe.metrics()
    assert before is not None
    async with _client(demo_server) as client:
        stream = await client.chat.completions.create(
            model=DEMO_SERVED, messages=[{"role": "user", "content": "Tell me a very long story about a dragon."}],
            max_tokens=1500, temperature=1.0, stream=True,
            extra_body={"ignore_eos": True},
        )
        seen = 0
        async for _chunk in stream:
            seen += 1
            if seen >= 20:
                break
        await stream.close()
    deadline = time.monotonic() + 10
    after = await probe.metrics()
    while after is not None and after.running > 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.3)
        after = await probe.metrics()
    await asyncio.sleep(2)
    final = await probe.metrics()
    await probe.aclose()
    assert after is not None and after.running == 0, "the request kept running after the stream was closed"
    assert final is not None
    generated = final.generation_tokens_total - before.generation_tokens_total
    assert generated < 600, f"{generated} tokens were generated: the request was not aborted"


async def test_vllm_groups_tokens_on_request_without_holding_back_the_first(demo_server: Supervisor) -> None:
    """What the app's stream batching relies on (Runtime.pace): vLLM's per-request `stream_interval` sends the
    same text in fewer chunks, and the first token alone and at once."""
    conversation = Conversation()
    conversation.add("user", "Write three sentences about the sea.")
    fitted = conversation.fit(Params(temperature=0.0, max_tokens=40), 2048)

    async def chunks(interval: int) -> list[str]:
        async with _client(demo_server) as client:
            stream = await client.chat.completions.create(  # type: ignore[call-overload]
                model=DEMO_SERVED, messages=fitted.messages, max_tokens=fitted.max_tokens,
                temperature=0.0, stream=True, stream_options={"include_usage": True},
                extra_body={"stream_interval": interval},
            )
            return [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]

    single, grouped = await chunks(1), await chunks(4)
    assert "".join(grouped) == "".join(single), "grouping must not change the answer"
    assert len(grouped) < len(single) / 2, (len(grouped), len(single))
    assert grouped[0] == single[0], "the first token comes alone, not held for a group"


async def test_metrics_read_from_our_series_only_match_the_whole_page(demo_server: Supervisor) -> None:
    """parse_metrics skips the histogram buckets it does not need; the figures must not change."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    from chainlit_app.engine.http import _GAUGES, parse_metrics

    async with httpx.AsyncClient() as http:
        text = (await http.get(demo_server.base_url + "/metrics")).text
    whole: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in _GAUGES:
                whole[sample.name] = whole.get(sample.name, 0.0) + sample.value
    snap = parse_metrics(text)
    assert snap.raw == whole
    assert snap.generation_tokens_total, "the tests before this one generated tokens"
