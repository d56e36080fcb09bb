"""The remedies judged from answers (issue 13): a looping answer gets a repetition penalty the chat sends, an
answer cut at its first token by the model's generation config gets vLLM's defaults, and a conversation vLLM
refuses as too long is sent again without its oldest turns, the reader told. Real-vLLM runs of each are in
tests/integration/test_remedy_answers.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the HTTP client package openai 3 is built on
import openai
import pytest

from chainlit_app.answer_stream import AnswerRequest, AnswerStream
from chainlit_app.conversation import (
    Conversation,
    Fitted,
    InputTooLong,
    Params,
    note,
    retry_scale,
    trimmed_note,
    with_note,
    without_notes,
)
from chainlit_app.diagnostics import FindingsStore
from chainlit_app.diagnostics.answer_loops import repeated_phrase
from chainlit_app.diagnostics.chat_observations import from_answer
from chainlit_app.engine.command import LaunchSpec, build_argv
from chainlit_app.engine.stream import open_chat_stream
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.models import ResolvedModel
from chainlit_app.pacing import StreamPace
from chainlit_app.remedies import OverridesStore, RemedyContext, remedies_for
from chainlit_app.remedies.verify import KNOWN_QUESTION, verify_completion
from chainlit_app.settings import Settings
from tests.local_http import JsonHandler, serving

LOOP = ("vLLM is a library for serving language models. "
        + "It is a fast and easy library for serving language models on many machines. " * 30)
# vLLM 0.32's refusal of a prompt longer than the context (recorded on this machine, max_model_len 512)
TOO_LONG_512 = ("This model's maximum context length is 512 tokens. However, your prompt contains at least 513 "
                "input tokens, which exceeds this limit even without any output tokens. Please reduce the length "
                "of the input prompt. (parameter=input_tokens, value=513)")


def spec(**fields: object) -> LaunchSpec:
    base: dict[str, object] = {"model": "m", "served_model_name": "m", "host": "127.0.0.1", "port": 0,
                               "api_key": "", "max_model_len": 4096}
    base.update(fields)
    return LaunchSpec(**base)  # type: ignore[arg-type]


# -- degenerate output: the phrase as evidence, a penalty as the remedy ------------------------------------------
def test_a_looping_answer_is_named_with_its_repeated_phrase() -> None:
    assert repeated_phrase(LOOP) == ("It is a fast and easy library for serving language models on many machines.", 30)
    assert repeated_phrase("哈哈" * 40) == ("哈哈", 40)
    assert repeated_phrase("A plain answer that says one thing once and stops there.") is None
    (found,) = from_answer(LOOP, "length", 512)
    assert (found.kind, found.source) == ("degenerate_output", "chat")
    assert "'It is a fast and easy library for serving language models on many machines.' 30 times" in found.text
    assert "distinct-word ratio 0.14" in found.text  # per hundred words: 14 distinct words in each


def test_the_penalty_remedy_steps_up_to_a_bound() -> None:
    (found,) = from_answer(LOOP, "length", 512)
    (proposal,) = remedies_for(found, RemedyContext(spec()))
    assert proposal.remedy.id == "repetition_penalty" and proposal.remedy.safe
    assert (proposal.overrides, proposal.previous) == ({"repetition_penalty": 1.1}, {"repetition_penalty": 1.0})
    (again,) = remedies_for(found, RemedyContext(spec(), repetition_penalty=1.1))
    assert again.overrides == {"repetition_penalty": 1.2}
    assert not remedies_for(found, RemedyContext(spec(), repetition_penalty=1.3))


def test_the_penalty_is_a_request_setting_not_a_launch_one(tmp_path: Path) -> None:
    (found,) = from_answer(LOOP, "length", 512)
    (proposal,) = remedies_for(found, RemedyContext(spec()))
    store = OverridesStore.in_data_dir(tmp_path)
    store.add(proposal)
    assert store.request_overrides() == {"repetition_penalty": 1.1} and store.launch_overrides() == {}
    assert store.values() == {"repetition_penalty": 1.1}
    engine = SpawnedEngine(Settings(data_dir=tmp_path, model="demo", preflight=False), FindingsStore())
    assert engine.repetition_penalty() == 1.1
    engine.launch_spec(ResolvedModel("local", str(tmp_path), "m"))  # the launch ignores it (no unknown field)


@pytest.mark.parametrize(("source", "configured", "expected"), [
    ("demo", None, 1.1), ("local", None, 1.0), ("local", 1.25, 1.25), ("demo", 1.0, 1.0)])
def test_the_chat_sends_the_demo_models_penalty_unless_configured(
        tmp_path: Path, source: str, configured: float | None, expected: float) -> None:
    engine = SpawnedEngine(Settings(data_dir=tmp_path, model="demo", repetition_penalty=configured),
                           FindingsStore())
    engine.resolved = ResolvedModel(source, str(tmp_path), "m")
    assert engine.repetition_penalty() == expected
    engine.resolved = None  # while the model resolves, CHAT_MODEL=demo already means the demo model
    assert engine.repetition_penalty() == (configured if configured is not None else 1.1)


def test_the_slider_value_is_clamped_and_sent_only_when_on() -> None:
    defaults = Params(repetition_penalty=1.1)
    assert Params.from_widgets({"repetition_penalty": 9}, defaults).repetition_penalty == 2.0
    assert Params.from_widgets({"repetition_penalty": 0.5}, defaults).repetition_penalty == 1.0
    assert Params.from_widgets({"repetition_penalty": "x"}, defaults).repetition_penalty == 1.1
    assert Params.from_widgets({}, defaults).repetition_penalty == 1.1


# -- empty output at the first token: vLLM's generation defaults --------------------------------------------------
def model_folder(tmp_path: Path, eos_ids: object) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}))
    added = [{"id": 0, "content": "<|endoftext|>"}, {"id": 1, "content": "<|im_start|>"},
             {"id": 2, "content": "<|im_end|>"}]
    (folder / "tokenizer.json").write_text(json.dumps({"added_tokens": added, "model": {"vocab": {}}}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|im_end|>"}))
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": eos_ids}))
    return folder


def test_an_answer_ended_at_its_first_token_by_the_generation_config_gets_a_corrected_copy(tmp_path: Path) -> None:
    (found,) = from_answer("", "stop", 1)
    assert found.kind == "empty_output" and "completion_tokens=1" in found.text
    folder = model_folder(tmp_path, list(range(200)))
    data = tmp_path / "data"
    (proposal,) = remedies_for(found, RemedyContext(spec(), folder, data_dir=data))
    target = data / "generation-config" / "model"
    assert proposal.remedy.id == "default_generation_config"
    assert proposal.overrides == {"generation_config": str(target)} and proposal.previous == {"generation_config": ""}
    assert "199 token id(s) besides the tokenizer's EOS 2: 0, 1, 3, 4, 5 and 194 more" in proposal.reason
    assert not target.exists(), "computing a remedy writes nothing"
    store = OverridesStore.in_data_dir(data)
    store.add(proposal)
    written = json.loads((target / "generation_config.json").read_text())
    assert written == {"eos_token_id": 2} and (target / "generation_config.json").stat().st_mode & 0o077 == 0
    argv = build_argv("python", spec(generation_config=str(target)))
    assert argv[argv.index("--generation-config") + 1] == str(target)
    assert "--generation-config" not in build_argv("python", spec())


def test_no_generation_config_remedy_without_its_evidence(tmp_path: Path) -> None:
    (first_token,) = from_answer("", "stop", 1)
    (long_empty,) = from_answer("", "stop", 40)  # ran on and wrote nothing visible: not the stop ids
    folder = model_folder(tmp_path, [2, 7])
    data = tmp_path / "data"
    assert remedies_for(first_token, RemedyContext(spec(), folder, data_dir=data))
    assert not remedies_for(long_empty, RemedyContext(spec(), folder, data_dir=data))
    assert not remedies_for(first_token, RemedyContext(spec(generation_config="/x"), folder, data_dir=data))
    assert not remedies_for(first_token, RemedyContext(spec(), data_dir=data))  # no folder to read
    (tmp_path / "own").mkdir()
    only_eos = model_folder(tmp_path / "own", 2)
    assert not remedies_for(first_token, RemedyContext(spec(), only_eos, data_dir=data))


# -- context length: retry shorter, lower max_tokens, tell the reader ---------------------------------------------
def test_the_retry_share_follows_vllms_count() -> None:
    sent = Fitted([{"role": "user", "content": "x" * 300}], 64, 0)  # estimated 106 tokens
    assert retry_scale(TOO_LONG_512, sent) == pytest.approx(0.8 * 106 / 513)
    assert retry_scale("maximum context length is 512 tokens. However, your prompt contains 2000 characters",
                       sent) == 0.5
    assert retry_scale("This model's maximum context length is 2048 tokens. However, your request has 2301 input "
                       "tokens.", Fitted([{"role": "user", "content": "x" * 9000}], 64, 0)) == 0.5


def test_the_trimmed_note_is_a_note() -> None:
    trimmed = trimmed_note(4, 512, True, 120)
    assert trimmed == ("_(To fit the model's context (512 tokens), the oldest 4 message(s) were left out after the "
                    "server refused the longer request, and this answer was limited to 120 tokens.)_")
    assert without_notes(with_note("Paris.", trimmed)) == "Paris."
    assert without_notes(with_note(with_note("Paris. Paris.", note("looping")), trimmed)) == "Paris. Paris."
    assert "1 message(s) were left out.)_" in trimmed_note(1, 512, False, 64)


def _refusing_server(seen: list[dict[str, Any]]) -> openai.AsyncOpenAI:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(400, json={"error": {"message": TOO_LONG_512, "type": "BadRequestError", "code": 400}})

    return openai.AsyncOpenAI(base_url="http://vllm.test/v1", api_key="k", max_retries=0,
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)))


async def test_a_refused_conversation_is_sent_again_without_its_oldest_turns_and_with_fewer_tokens() -> None:
    turns = Conversation()
    for i in range(8):
        turns.add("user" if i % 2 == 0 else "assistant", f"turn {i} " + "x" * 60)
    turns.add("user", "And the capital of France?")
    params = Params(max_tokens=300, system_prompt="Be brief.", repetition_penalty=1.1)
    first = turns.fit(params, 512)
    assert first.dropped_turns == 0
    seen: list[dict[str, Any]] = []
    request = AnswerRequest("m", params, first, lambda scale: turns.fit(params, 512, budget_scale=scale))
    async with _refusing_server(seen) as client:
        answer = AnswerStream(request, lambda body: open_chat_stream(client, body), StreamPace())
        with pytest.raises(openai.BadRequestError):
            await answer.run(lambda text: _nothing())
    assert len(seen) == 2 and all(body["repetition_penalty"] == 1.1 for body in seen)
    assert answer.refused_as_too_long and answer.sent.dropped_turns > 0
    assert len(seen[1]["messages"]) < len(seen[0]["messages"]) and seen[1]["max_tokens"] < seen[0]["max_tokens"]
    assert seen[1]["messages"][0]["role"] == "system" and seen[1]["messages"][-1]["content"] == \
        "And the capital of France?"


async def test_a_refused_question_too_long_alone_keeps_the_servers_refusal() -> None:
    params = Params(max_tokens=64, system_prompt="")

    def too_long(scale: float) -> Fitted:
        raise InputTooLong("the newest message alone")

    request = AnswerRequest("m", params, Fitted([{"role": "user", "content": "q"}], 64, 0), too_long)
    seen: list[dict[str, Any]] = []
    async with _refusing_server(seen) as client:
        answer = AnswerStream(request, lambda body: open_chat_stream(client, body), StreamPace())
        with pytest.raises(openai.BadRequestError, match="maximum context length"):
            await answer.run(lambda text: _nothing())
    assert len(seen) == 1 and "repetition_penalty" not in seen[0] and not answer.refused_as_too_long


async def _nothing() -> None:
    return None


# -- verification: an answer fault is fixed only by a right answer ---------------------------------------------
@pytest.mark.parametrize(("content", "fixed", "said"), [
    ("Paris.", True, "Paris."),
    ("", False, "is still empty_output"),
    ("decl colleges Looking supernov\ufffdstrength", False, "is still decode_error"),
    ("temporary cement sounded Sag", False, "is wrong"),
])
async def test_an_answer_fault_is_verified_by_a_right_answer(content: str, fixed: bool, said: str) -> None:
    bodies: list[dict[str, Any]] = []

    class Handler(JsonHandler):
        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_json(200, {"choices": [{"message": {"content": content}, "finish_reason": "stop"}]})

    with serving(Handler) as url:
        ok, text = await verify_completion(url, "k", "m", judge=True, extra={"repetition_penalty": 1.1})
        plain_ok, _ = await verify_completion(url, "k", "m")
    assert ok is fixed and said in text
    assert plain_ok, "a launch remedy needs only an answer"
    assert bodies[0]["messages"][0]["content"] == KNOWN_QUESTION and bodies[0]["repetition_penalty"] == 1.1
    assert bodies[1]["max_tokens"] == 1
