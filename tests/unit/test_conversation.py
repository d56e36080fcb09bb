"""History fitting and settings clamping: what reaches the server."""

from __future__ import annotations

import pytest

from chainlit_app.conversation import Conversation, InputTooLong, Params, clean_input, estimate_tokens


def test_short_conversation_is_sent_whole_with_system_prompt() -> None:
    conv = Conversation()
    conv.add("user", "hi")
    conv.add("assistant", "hello")
    conv.add("user", "how are you?")
    fitted = conv.fit(Params(system_prompt="Be brief.", max_tokens=100), 4096)
    assert [m["role"] for m in fitted.messages] == ["system", "user", "assistant", "user"]
    assert fitted.max_tokens == 100
    assert fitted.dropped_turns == 0


def test_oldest_turns_are_dropped_first_and_history_starts_with_user() -> None:
    conv = Conversation()
    for i in range(50):
        conv.add("user", f"question {i} " + "x" * 300)
        conv.add("assistant", f"answer {i} " + "y" * 300)
    conv.add("user", "last question")
    fitted = conv.fit(Params(max_tokens=256), 2048)
    total = sum(estimate_tokens(m["content"]) for m in fitted.messages) + fitted.max_tokens
    assert total <= 2048
    assert fitted.dropped_turns > 0
    assert fitted.messages[0]["role"] == "user"
    assert fitted.messages[-1]["content"] == "last question"
    assert "question 49" in fitted.messages[-3]["content"]


def test_a_message_longer_than_the_context_is_refused_clearly() -> None:
    conv = Conversation()
    conv.add("user", "z" * 100_000)
    with pytest.raises(InputTooLong, match="CHAT_MAX_MODEL_LEN"):
        conv.fit(Params(), 2048)


def test_max_tokens_shrinks_to_the_room_left() -> None:
    conv = Conversation()
    conv.add("user", "w" * 5000)
    fitted = conv.fit(Params(max_tokens=10**9), 2048)
    assert 1 <= fitted.max_tokens < 2048


def test_widget_values_are_clamped() -> None:
    defaults = Params(0.7, 0.9, 512, "sys")
    params = Params.from_widgets({"temperature": -1, "top_p": 7, "max_tokens": 1e12, "system_prompt": None},
                                 defaults)
    assert params == Params(0.0, 1.0, 1_000_000, "")
    assert Params.from_widgets({"temperature": "hot"}, defaults).temperature == 0.7
    assert Params.from_widgets({"max_tokens": 64.0}, defaults).max_tokens == 64


def test_control_characters_are_dropped_from_input() -> None:
    assert clean_input("a\x00b\x1bc\nd\te\x7f") == "abc\nd\te"
    assert clean_input("bad \udc80 byte") == "bad  byte"
    assert clean_input("bad \udc80 byte").encode("utf-8")
