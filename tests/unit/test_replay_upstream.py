"""The bench's replay upstream speaks vLLM's stream: its grouped chunks are byte for byte what vLLM 0.32
sent for the same answer at stream_interval 4 (recorded), and served over HTTP it gives the openai
client the recorded text, finish reason and usage, and ends a stream whose client went away."""

from __future__ import annotations

import asyncio
import re

import openai

from bench.replay import Pace, ReplayServer
from bench.replay_streams import STREAMS_DIR, RecordedStream, load_streams

MODEL = "smollm2-135m-instruct"  # the name the recordings were served under


def _normalised(body: bytes) -> list[bytes]:
    """Events with the per-request id, the creation time and the server instance's fingerprint masked."""
    body = re.sub(rb"chatcmpl-[0-9a-f]{16}", b"ID", body)
    body = re.sub(rb'"created":\d+', b'"created":0', body)
    body = re.sub(rb'"system_fingerprint":"[^"]*"', b'"system_fingerprint":"F"', body)
    return body.split(b"\n\n")


def test_grouped_chunks_are_what_vllm_sent_at_the_same_interval() -> None:
    source = RecordedStream.load(STREAMS_DIR / "smollm2_64_tokens.sse", MODEL)
    recorded = (STREAMS_DIR / "smollm2_64_tokens_interval4.sse").read_bytes()
    replayed = source.encoded(64, 4)
    assert _normalised(replayed.body) == _normalised(recorded)
    assert replayed.tokens_at[:3] == (1, 5, 9) and replayed.tokens_at[-1] == 64


def test_an_answer_cut_to_max_tokens_ends_with_length() -> None:
    longest = load_streams(MODEL)[0]
    assert len(longest.tokens) >= 1024
    encoded = longest.encoded(10, 1)
    events = encoded.body.decode().split("\n\n")
    assert '"finish_reason":"length"' in events[-4]  # the 10th token's chunk, then usage, [DONE], ""
    assert '"completion_tokens":10' in events[-3] and events[-2] == "data: [DONE]"
    assert encoded.ends[-1] == len(encoded.body) and len(encoded.ends) == 10


async def _serve(server: ReplayServer) -> tuple[asyncio.Server, asyncio.Task[None], str]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    return listener, asyncio.create_task(server.clock()), f"http://127.0.0.1:{port}/v1"


async def test_the_openai_client_reads_the_recorded_answer_and_a_closed_stream_is_ended() -> None:
    server = ReplayServer(load_streams(MODEL), MODEL, "key", Pace(first_token_delay=0.0, rate=5000.0))
    listener, clock, url = await _serve(server)
    client = openai.AsyncOpenAI(base_url=url, api_key="key", max_retries=0)
    try:
        assert [m.id for m in (await client.models.list()).data] == [MODEL]
        stream = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "[a] story"}], max_tokens=40, stream=True,
            stream_options={"include_usage": True})
        text, finish, usage = "", None, None
        async for chunk in stream:
            usage = chunk.usage or usage
            for choice in chunk.choices:
                text += choice.delta.content or ""
                finish = choice.finish_reason or finish
        assert text == load_streams(MODEL)[0].text(40)
        assert finish == "length" and usage is not None and usage.completion_tokens == 40

        server.pace.rate = 20.0  # slow enough that the client leaves long before the end
        stream = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "[b] story"}], max_tokens=500, stream=True)
        async for _chunk in stream:
            break
        await stream.close()
        for _ in range(200):
            if server.records[-1]["aborted"] is not None:
                break
            await asyncio.sleep(0.01)
        first, second = server.records
        assert first["question"] == "[a] story" and first["aborted"] is False and first["tokens"] == 40
        assert second["aborted"] is True and second["tokens"] < 500 and not server.active
    finally:
        await client.close()
        clock.cancel()
        listener.close()


async def test_a_wrong_key_is_refused() -> None:
    server = ReplayServer(load_streams(MODEL), MODEL, "key", Pace())
    listener, clock, url = await _serve(server)
    client = openai.AsyncOpenAI(base_url=url, api_key="wrong", max_retries=0)
    try:
        try:
            await client.models.list()
            raise AssertionError("a wrong key was accepted")
        except openai.AuthenticationError:
            pass
    finally:
        await client.close()
        clock.cancel()
        listener.close()
