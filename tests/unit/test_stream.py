"""Reading a streamed chat completion as dicts gives what the openai client's typed chunks give.

The body is a real one, recorded from vLLM 0.32 (SmolLM2-135M, 64 tokens, include_usage); it is served
to the openai client through httpx's in-memory transport, so the client's own SSE decoding runs."""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx  # the HTTP client package openai 3 is built on
import openai
import pytest

from chainlit_app.engine.stream import open_chat_stream, piece

RECORDED = (Path(__file__).parents[1] / "data" / "streams" / "smollm2_64_tokens.sse").read_bytes()
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream_options": {"include_usage": True}}


def _client(body: bytes, seen: list[httpx.Request] | None = None) -> openai.AsyncOpenAI:
    def answer(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return openai.AsyncOpenAI(base_url="http://vllm.test/v1", api_key="k", max_retries=0,
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)))


async def test_text_end_reason_and_token_count_match_the_typed_chunks() -> None:
    seen: list[httpx.Request] = []
    async with _client(RECORDED, seen) as client:
        typed = await client.chat.completions.create(stream=True, **BODY)  # type: ignore[call-overload]
        typed_text, typed_reason, typed_tokens = "", None, None
        async for chunk in typed:
            if chunk.usage:
                typed_tokens = chunk.usage.completion_tokens
            if chunk.choices:
                typed_text += chunk.choices[0].delta.content or ""
                typed_reason = chunk.choices[0].finish_reason or typed_reason
        pieces = [piece(chunk) async for chunk in await open_chat_stream(client, BODY)]
    assert "".join(p.content or "" for p in pieces) == typed_text and typed_text.startswith("Lighthouse keeper")
    assert [p.finish_reason for p in pieces if p.finish_reason] == [typed_reason] == ["length"]
    assert [p.completion_tokens for p in pieces if p.completion_tokens] == [typed_tokens] == [64]
    assert b'"stream":true' in seen[-1].content.replace(b" ", b""), "the request asks for a stream"
    assert seen[-1].headers["authorization"] == "Bearer k"


async def test_an_error_event_in_the_stream_raises_the_clients_api_error() -> None:
    broken = RECORDED.split(b"\n\n")[2] + b'\n\ndata: {"error": {"message": "EngineCore died", "code": 500}}\n\n'
    async with _client(broken) as client:
        stream = await open_chat_stream(client, BODY)
        with pytest.raises(openai.APIError, match="EngineCore died"):
            async for _ in stream:
                pass
