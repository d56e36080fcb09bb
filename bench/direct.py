"""The baseline: the `openai` client streaming straight from vLLM, with exactly the request the app sends.

The app builds its request from `Conversation.fit` (system prompt + question, max_tokens fitted to the
context); this module builds it with the same code, so both paths ask vLLM the same thing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import openai

from bench.stats import StreamTimes
from chainlit_app.conversation import Conversation, Params


@dataclass(frozen=True)
class ChatParams:
    """The sampling settings both paths use (the app gets them through CHAT_* variables)."""

    temperature: float
    top_p: float
    max_tokens: int
    system_prompt: str
    max_model_len: int

    def request(self, question: str) -> dict[str, Any]:
        """messages + max_tokens as chat.stream_answer computes them for a fresh conversation."""
        conversation = Conversation()
        conversation.add("user", question)
        fitted = conversation.fit(Params(self.temperature, self.top_p, self.max_tokens, self.system_prompt),
                                  self.max_model_len)
        return {"messages": fitted.messages, "max_tokens": fitted.max_tokens, "temperature": self.temperature,
                "top_p": self.top_p}


@dataclass
class DirectResult(StreamTimes):
    """One streamed answer straight from vLLM; times are perf_counter values, like AskResult's."""

    sent_at: float
    text: str = ""
    first_token_at: float | None = None
    last_token_at: float | None = None
    done_at: float | None = None
    chunks: int = 0
    first_chunk_chars: int = 0
    completion_tokens: int | None = None
    finish_reason: str | None = None

    @property
    def tokens_per_s(self) -> float | None:
        """Generation rate after the first token, from vLLM's own token count."""
        stream = self.stream_s
        if stream is None or stream <= 0 or not self.completion_tokens:
            return None
        return (self.completion_tokens - 1) / stream


def make_client(base_url: str, api_key: str, timeout: float = 300.0) -> openai.AsyncOpenAI:
    """A client configured like the app's (no retries, same timeouts)."""
    return openai.AsyncOpenAI(base_url=base_url.rstrip("/") + "/v1", api_key=api_key,
                              timeout=openai.Timeout(timeout, connect=5.0), max_retries=0)


async def stream_direct(client: openai.AsyncOpenAI, model: str, question: str, params: ChatParams,
                        stream_interval: int = 1) -> DirectResult:
    """One streamed chat completion, timed like the app times it (first content token, last one).
    `stream_interval` > 1 asks vLLM for tokens in groups, as the app does under load."""
    request = params.request(question)
    result = DirectResult(sent_at=time.perf_counter())
    parts: list[str] = []
    extra_body = {"stream_interval": stream_interval} if stream_interval > 1 else None
    stream: Any = await client.chat.completions.create(
        model=model, stream=True, stream_options={"include_usage": True}, extra_body=extra_body, **request
    )
    async for chunk in stream:
        if chunk.usage is not None:
            result.completion_tokens = chunk.usage.completion_tokens
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        if choice.finish_reason:
            result.finish_reason = choice.finish_reason
        token = choice.delta.content if choice.delta else None
        if not token:
            continue
        now = time.perf_counter()
        if result.first_token_at is None:
            result.first_token_at = now
            result.first_chunk_chars = len(token)
        result.last_token_at = now
        result.chunks += 1
        parts.append(token)
    result.done_at = time.perf_counter()
    result.text = "".join(parts)
    return result
