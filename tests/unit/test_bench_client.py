"""The benchmark's own logic that needs no server: rebuilding an answer from Chainlit's socket events,
the request the direct baseline sends, and the synthetic busy log used for the tailing cost."""

from __future__ import annotations

from bench.apps import same_command
from bench.chainlit_client import ChainlitSession, Event
from bench.direct import ChatParams
from bench.sections.tailing import log_line
from bench.stats import quantile, summarise
from chainlit_app.diagnostics import classify_lines


def _step(message_id: str, output: str, author: str = "Assistant") -> dict[str, object]:
    return {"id": message_id, "name": author, "type": "assistant_message", "output": output, "streaming": True}


def test_answer_is_rebuilt_from_stream_events_as_the_frontend_does() -> None:
    events = [
        Event(10.00, "task_start", {}),
        Event(10.10, "new_message", _step("wait", "⏳ The model server is starting", "Console")),
        Event(10.50, "delete_message", _step("wait", "", "Console")),
        Event(11.00, "stream_start", _step("a1", "The")),
        Event(11.05, "stream_token", {"id": "a1", "token": " capital", "isSequence": False, "isInput": False}),
        Event(11.06, "stream_token", {"id": "other", "token": "noise", "isSequence": False, "isInput": False}),
        Event(11.20, "stream_token", {"id": "a1", "token": " is Paris.", "isSequence": False, "isInput": False}),
        Event(11.30, "new_message", _step("a1", "The capital is Paris.\n\n_(Cut at the max-tokens limit.)_")),
        Event(11.31, "task_end", {}),
    ]
    result = ChainlitSession._collect("q", 10.0, events)
    assert result.text == "The capital is Paris."
    assert result.final_text is not None and result.final_text.startswith("The capital is Paris.")
    assert result.message_id == "a1"
    assert result.stream_events == 3
    assert result.first_token_s is not None and abs(result.first_token_s - 1.0) < 1e-9
    assert result.total_s is not None and abs(result.total_s - 1.31) < 1e-9
    assert result.notices == []  # the waiting message was removed, as the browser removes it
    assert result.chars_per_s is not None and abs(result.chars_per_s - len(" capital is Paris.") / 0.2) < 1e-6


def test_an_error_without_stream_is_reported_as_notice() -> None:
    events = [
        Event(1.0, "task_start", {}),
        Event(1.2, "new_message", _step("e1", "⚠ The model server cannot be reached.", "Console")),
        Event(1.3, "task_end", {}),
    ]
    result = ChainlitSession._collect("q", 1.0, events)
    assert result.text == "" and result.first_token_s is None
    assert result.final_text == "⚠ The model server cannot be reached."


def test_direct_request_matches_what_the_app_sends_for_a_fresh_chat() -> None:
    request = ChatParams(0.0, 0.95, 64, "You are a helpful assistant.", 2048).request("Hello?")
    assert request["messages"] == [{"role": "system", "content": "You are a helpful assistant."},
                                   {"role": "user", "content": "Hello?"}]
    assert request["max_tokens"] == 64 and request["temperature"] == 0.0 and request["top_p"] == 0.95


def test_synthetic_busy_log_is_healthy_for_the_real_classifier() -> None:
    """The tailing benchmark measures the normal path: its lines must raise no finding."""
    report = classify_lines([log_line(i) for i in range(3000)])
    assert report.kind == "healthy", report.findings[:3]


def test_command_lines_compare_without_the_port() -> None:
    a = ["py", "-m", "x", "--port", "1234", "--dtype", "float32"]
    assert same_command(a, ["py", "-m", "x", "--port", "999", "--dtype", "float32"])
    assert not same_command(a, ["py", "-m", "x", "--port", "999", "--dtype", "bfloat16"])


def test_quantiles_and_summary() -> None:
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([5], 0.95) == 5
    s = summarise([3.0, 1.0, 2.0])
    assert s is not None and s.median == 2.0 and s.low == 1.0 and s.high == 3.0 and s.n == 3
