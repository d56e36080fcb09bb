"""The chat: wait for the engine, stream answers, keep history, stop, and turn failures into plain words."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict
from typing import Any

import chainlit as cl
from chainlit.input_widget import Slider, TextInput

from chainlit_app.answer_saving import AnswerSaver
from chainlit_app.answer_stream import AnswerRequest, AnswerStream
from chainlit_app.cleaning import Refused, admit_text, clean_text
from chainlit_app.conversation import (
    Conversation,
    InputTooLong,
    Params,
    bounded_prompt,
    note,
    trimmed_note,
    with_note,
)
from chainlit_app.diagnostics.redact import redact
from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.engine.logfiles import phase_only
from chainlit_app.engine.status import EngineState
from chainlit_app.engine.stream import open_chat_stream
from chainlit_app.failures import explain, failure_kind
from chainlit_app.i18n import localize, t
from chainlit_app.notices import (
    ANSWER,
    DEMO_NOTICE,
    FAILURE,
    INPUT_REFUSED,
    RETRY,
    RETRY_ACTION,
    RETRYING,
    STARTUP,
    WELCOME,
    action_id,
    mark,
    notice,
    remark,
)
from chainlit_app.remedy_notices import welcome_lines
from chainlit_app.runtime import Runtime

log = logging.getLogger(__name__)

CONVERSATION = "conversation"
PARAMS = "params"
AUTHOR = "Assistant"


def default_params(runtime: Runtime) -> Params:
    s = runtime.settings
    return Params(runtime.default_temperature(), s.chat.top_p, s.chat.max_tokens,
                  bounded_prompt(s.chat.system_prompt, s.chat.max_system_prompt_chars),
                  runtime.default_repetition_penalty())


def _params() -> Params:
    value = cl.user_session.get(PARAMS)
    assert isinstance(value, Params)
    return value


def _conversation() -> Conversation:
    value = cl.user_session.get(CONVERSATION)
    if not isinstance(value, Conversation):
        value = Conversation()
        cl.user_session.set(CONVERSATION, value)
    return value


def engine_line(runtime: Runtime, is_admin: bool = False) -> str:
    """One line on where the engine is, for people waiting on it. Admins get the details (errors, the
    latest log line, the address; secrets masked); everyone else the phase alone, without a path or URL."""
    status = runtime.status
    if runtime.is_ready():
        return t("chat.ready", model=runtime.served_model_name)
    if status.state == EngineState.FAILED:
        if not is_admin:
            return t("chat.failed_user")
        return _masked(runtime, t("chat.failed_admin", error=localize(status.error) or t("chat.see_panel_short")))
    if runtime.engine.waiting_for is not None:
        if not is_admin:
            return t("chat.waiting_user")
        if status.error:
            return _masked(runtime, t("chat.waiting_admin_error", url=runtime.engine.waiting_for,
                                      error=localize(status.error)))
        return _masked(runtime, t("chat.waiting_admin", url=runtime.engine.waiting_for))
    started = status.started_at or runtime.started_at
    elapsed = int(time.time() - started)
    shown = status.progress if is_admin or not status.progress else phase_only(status.progress)
    if not shown:
        return t("chat.starting", elapsed=elapsed)
    return t("chat.starting_progress", elapsed=elapsed, progress=_masked(runtime, _progress_text(shown)))


def _progress_text(progress: str) -> str:
    """The app's own progress phrases and the phase names in the reader's language; vLLM's lines as printed."""
    if progress in ("boot", "loading", "serving", "stopping"):
        return t(f"phase.{progress}")
    return str(localize(progress))


def _masked(runtime: Runtime, text: str) -> str:
    return redact(text, runtime.monitor.secrets())


async def say(text: str, testid: str = INPUT_REFUSED) -> None:
    """A short message from the console itself (not the model), with its test id."""
    await notice(text, testid, role="alert" if testid == INPUT_REFUSED else "status")


async def send_settings(params: Params) -> None:
    await cl.ChatSettings(
        [
            Slider(id="temperature", label=t("settings.temperature"), initial=params.temperature, min=0, max=2,
                   step=0.05),
            Slider(id="top_p", label=t("settings.top_p"), initial=params.top_p, min=0.05, max=1, step=0.05),
            Slider(id="max_tokens", label=t("settings.max_tokens"), initial=params.max_tokens, min=16, max=4096,
                   step=16),
            Slider(id="repetition_penalty", label=t("settings.repetition_penalty"),
                   initial=params.repetition_penalty, min=1, max=2, step=0.05),
            TextInput(id="system_prompt", label=t("settings.system_prompt"), initial=params.system_prompt,
                      multiline=True),
        ]
    ).send()


async def start_chat(runtime: Runtime, actions: list[cl.Action] | None = None, is_admin: bool = False) -> None:
    params = default_params(runtime)
    cl.user_session.set(PARAMS, params)
    cl.user_session.set(CONVERSATION, Conversation())
    await send_settings(params)
    lines = [t("chat.welcome", status=engine_line(runtime, is_admin))]
    lines += welcome_lines(runtime, is_admin)  # what CHAT_AUTO_REMEDY=safe changed by itself
    await notice("\n\n".join(lines), WELCOME, actions=actions, attributes={"state": str(runtime.status.state)})
    if runtime.status.notice:  # the demo model is served instead of the one asked for
        await notice(t("chat.notice", notice=localize(runtime.status.notice)), DEMO_NOTICE, role="note")


def update_settings(runtime: Runtime, values: dict[str, Any]) -> Params:
    params = Params.from_widgets(values, default_params(runtime), runtime.settings.chat.max_system_prompt_chars)
    cl.user_session.set(PARAMS, params)
    return params


async def _wait_for_engine(runtime: Runtime, is_admin: bool) -> bool:
    """Show start-up progress in one message until the engine is ready (or has given up)."""
    if runtime.is_ready():
        return True
    waiting = await notice(t("chat.waiting_message", status=engine_line(runtime, is_admin)), STARTUP,
                           attributes={"state": "waiting"})
    deadline = time.monotonic() + runtime.settings.engine.startup_timeout
    while not runtime.has_given_up() and time.monotonic() < deadline:
        if await runtime.wait_ready(timeout=1.0):  # returns the moment the engine is ready
            break
        waiting.content = t("chat.waiting_message", status=engine_line(runtime, is_admin))
        await waiting.update()
    if runtime.is_ready():
        await waiting.remove()
        return True
    await waiting.remove()  # a new message, so that its hooks say "failed"
    await notice(t("chat.gave_up_message", status=engine_line(runtime, is_admin)), STARTUP, role="alert",
                 attributes={"state": "failed"})
    return False


async def handle_message(runtime: Runtime, message: cl.Message, is_admin: bool) -> None:
    cl.user_session.set("interacted", True)
    try:
        text = admit_text(message.content or "")  # the length first: an 8 MB paste costs one len()
    except Refused as exc:
        await say(str(exc))
        return
    if not text.strip():
        await say(t("chat.empty_question"))
        return
    if text != message.content:  # shown, stored and asked: the same cleaned text
        message.content = text
        await message.update()
    await _ask(runtime, text, is_admin)


async def _ask(runtime: Runtime, question: str, is_admin: bool) -> None:
    """Wait for the engine, then answer `question` in this session's conversation."""
    if not await _wait_for_engine(runtime, is_admin):
        return
    conversation = _conversation()
    conversation.add("user", question)
    answer = await stream_answer(runtime, conversation, _params(), is_admin)
    if answer is None:
        conversation.turns.pop()  # keep history consistent: the question can be asked again
    else:
        conversation.add("assistant", answer)


async def stream_answer(runtime: Runtime, conversation: Conversation, params: Params,
                        is_admin: bool) -> str | None:
    """Stream one answer into the chat; the text kept for history, or None when nothing came back."""
    msg = cl.Message(content="", author=AUTHOR)
    # shows the tokens, keeps the history up to date while they come, and shows heavy markup as text
    saver = AnswerSaver(msg, markup_limit=runtime.settings.chat.answer_markup_limit)
    try:
        fitted = conversation.fit(params, runtime.context_length())
    except InputTooLong as exc:
        await say(str(exc))
        return None
    hooks: list[cl.CustomElement] = []  # the answer's test hooks (notices.mark), sent once

    async def marked() -> cl.CustomElement:
        if not hooks:
            hooks.append(await mark(msg, ANSWER, role=None))
        return hooks[0]

    async def request_sent() -> None:
        """The server has the question: the page learns before the first token that this is the answer
        (sent after the request, which is what a burst of questions waits for)."""
        await marked()

    started = time.monotonic()
    request = AnswerRequest(
        runtime.served_model_name, params, fitted,
        shorten=lambda scale: conversation.fit(params, runtime.context_length(), budget_scale=scale),
    )
    answer = AnswerStream(request, lambda body: open_chat_stream(runtime.client(), body), runtime.pace,
                          batching=runtime.settings.chat.stream_batching)
    try:
        await answer.run(saver, on_sent=request_sent)
        await saver.settle()
        finish_reason, completion_tokens = answer.finish_reason, answer.completion_tokens
        # the monitor judges the text as the model sent it (control characters are evidence)
        findings = runtime.monitor.observe_answer(answer.text, finish_reason, completion_tokens,
                                                  first_token_seconds=answer.first_token_seconds)
        if not msg.content:
            tokens = completion_tokens if completion_tokens is not None else t("note.tokens_unknown")
            msg.content = note("empty", finish_reason=finish_reason, tokens=tokens)
            if is_admin:
                msg.content = with_note(msg.content, note("see_panel"))
            await msg.send()
            await remark(await marked(), msg, role="alert",
                         attributes={"failure": str(Kind.EMPTY_OUTPUT), "done": "yes"})
            log.warning("empty answer (finish_reason=%s, tokens=%s)", finish_reason, completion_tokens)
            return None
        text = msg.content  # what the model wrote, for the conversation; the notes below are for the reader
        if is_admin and any(f.kind == Kind.DECODE_ERROR for f in findings):
            msg.content = with_note(msg.content, note("decode"))
        if finish_reason == "length":
            msg.content = with_note(msg.content, note("cut"))
        if any(f.kind == Kind.DEGENERATE_OUTPUT for f in findings):
            msg.content = with_note(msg.content, note("looping"))
        if answer.sent.dropped_turns:
            msg.content = with_note(msg.content, trimmed_note(answer.sent.dropped_turns, runtime.context_length(),
                                                              answer.refused_as_too_long, answer.sent.max_tokens))
        await msg.send()
        await remark(await marked(), msg, attributes={"done": "yes"})
        log.info("answer: %d chars in %.2f s", len(text), time.monotonic() - started)
        return text
    except asyncio.CancelledError:
        await saver.settle()
        partial = clean_text(answer.text)  # the stream is closed already: vLLM has stopped generating
        msg.content = with_note(partial, note("stopped"))
        if partial:  # the reader saw it, so the model sees it next time too
            conversation.add("assistant", partial)
        else:
            conversation.turns.pop()
        await msg.send()
        await remark(await marked(), msg, attributes={"stopped": "yes", "done": "yes"})
        raise
    except Exception as exc:  # every failure becomes a short message, never a traceback
        await saver.settle()
        partial = clean_text(answer.text)
        explanation = _masked(runtime, explain(exc, is_admin))  # it may quote the server's error body
        runtime.monitor.observe_exception(exc)
        runtime.after_chat_failure()
        log.warning("chat request failed: %s: %s", type(exc).__name__, exc)
        question = conversation.turns[-1]["content"] if conversation.turns else ""
        retry = [retry_action(question)] if question else []
        kind = failure_kind(exc)
        if partial:
            msg.content = with_note(partial, note("interrupted", reason=explanation))
            msg.actions = retry
            await msg.send()
            await remark(await marked(), msg, role="alert",
                         attributes={"failure": kind, "interrupted": "yes", "done": "yes"})
            return partial
        await notice(t("chat.failure", explanation=explanation), FAILURE, role="alert", attributes={"kind": kind},
                     actions=retry)
        return None


def retry_action(question: str) -> cl.Action:
    return cl.Action(name=RETRY_ACTION, payload={"question": question}, label=t("chat.retry_label"),
                     icon="rotate-ccw", tooltip=t("chat.retry_tooltip"), id=action_id(RETRY))


def retry_question(payload: object) -> str:
    """The question of a Retry action's payload, which comes from the client: checked like a message."""
    question = payload.get("question", "") if isinstance(payload, dict) else None
    return admit_text(question, what=t("chat.what_retry"))


async def retry(runtime: Runtime, payload: object, is_admin: bool) -> None:
    """The Retry button: wait for the engine (it restarts by itself) and ask the same question again."""
    try:
        question = retry_question(payload)
    except Refused as exc:
        await say(str(exc))
        return
    if not question.strip():
        return
    await say(t("chat.retrying", question=question[:200]), RETRYING)
    await _ask(runtime, question, is_admin)


def resume_chat(runtime: Runtime, turns: list[dict[str, str]]) -> None:
    """A resumed thread: the model sees the stored conversation again."""
    cl.user_session.set(PARAMS, default_params(runtime))
    cl.user_session.set(CONVERSATION, Conversation(turns=list(turns)))


def params_json(params: Params) -> dict[str, Any]:
    return asdict(params)
