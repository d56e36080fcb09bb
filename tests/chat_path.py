"""The chat's own request path without Chainlit (chat.stream_answer's steps): fit the conversation, stream the
answer with AnswerStream, and let the runtime's Monitor judge it, so a remedy test meets a fault the way the
chat does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import openai

from chainlit_app.answer_stream import AnswerRequest, AnswerStream
from chainlit_app.conversation import Conversation, Params
from chainlit_app.diagnostics import Finding
from chainlit_app.diagnostics.answer_loops import distinct_word_ratio
from chainlit_app.engine.stream import open_chat_stream
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.monitor import Monitor
from chainlit_app.pacing import StreamPace
from chainlit_app.settings import Settings


@asynccontextmanager
async def watched_engine(settings: Settings) -> AsyncIterator[tuple[SpawnedEngine, Monitor]]:
    """An engine handle wired as chainlit_app/runtime.py wires it: the monitor owns the store the engine
    reports into and follows its log. Not started; stopped on exit."""
    monitor = Monitor(lambda: engine.log_file, lambda: engine.endpoint)
    engine = SpawnedEngine(settings, monitor.store)
    engine.add_listener(monitor.on_engine_status)
    monitor.start()
    try:
        yield engine, monitor
    finally:
        await engine.stop()
        await monitor.stop()


@dataclass
class ChatAnswer:
    text: str
    finish_reason: str | None
    completion_tokens: int | None
    findings: list[Finding] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def distinct_words(self) -> float:
        return distinct_word_ratio(self.text)


def chat_params(engine: SpawnedEngine, max_tokens: int = 512) -> Params:
    """The settings a new chat session starts with (chat.default_params): temperature 0 for repeatable runs."""
    return Params(0.0, engine.settings.chat.top_p, max_tokens, engine.settings.chat.system_prompt,
                  engine.repetition_penalty())


async def ask(engine: SpawnedEngine, monitor: Monitor, question: str, params: Params) -> ChatAnswer:
    """One question in a new conversation; a failed request is observed (and returned) as the chat does."""
    conversation = Conversation()
    conversation.add("user", question)
    context = engine.context_length()
    request = AnswerRequest(engine.supervisor.spec.served_model_name if engine.supervisor else "", params,
                            conversation.fit(params, context),
                            lambda scale: conversation.fit(params, context, budget_scale=scale))
    async with openai.AsyncOpenAI(base_url=engine.base_url + "/v1", api_key=engine.api_key, max_retries=0,
                                  timeout=300) as client:
        answer = AnswerStream(request, lambda body: open_chat_stream(client, body), StreamPace())

        async def sink(_text: str) -> None:
            return None

        try:
            await answer.run(sink)
        except openai.APIError as exc:
            monitor.observe_exception(exc)
            return ChatAnswer(answer.text, None, None, error=exc)
    findings = monitor.observe_answer(answer.text, answer.finish_reason, answer.completion_tokens)
    return ChatAnswer(answer.text, answer.finish_reason, answer.completion_tokens, findings)
