"""Input cleaning and history storage over arbitrary text (hypothesis), and the order of the input checks.

The property: for any str, including lone surrogates and every control character, cleaning never raises,
the result is storable (UTF-8 encodable, no NUL) and stable, and what a real SQLite history stores through
the app's data layer and gives back is exactly the cleaned text the chat shows."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest
from chainlit.context import init_http_context
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainlit_app import cleaning
from chainlit_app.chat import retry_question
from chainlit_app.cleaning import MAX_INPUT_CHARS, Refused, admit_text, clean_text, is_clean
from chainlit_app.conversation import Params, bounded_prompt
from chainlit_app.history import ChatHistoryLayer, database_url, prepare_schema

# Any code point, surrogates included, with the troublesome ones drawn often.
NASTY = st.sampled_from(["\x00", "\x1b", "\x7f", "\r", "\n", "\t", "\ud800", "\udfff", "\ud83d", "\ufeff", "\u2028"])
TEXT = st.lists(st.one_of(st.characters(codec=None, exclude_categories=()), NASTY), max_size=80).map("".join)


@given(TEXT)
def test_cleaning_never_raises_and_leaves_storable_stable_text(text: str) -> None:
    cleaned = clean_text(text)
    cleaned.encode("utf-8")  # no lone surrogate left
    assert "\x00" not in cleaned and is_clean(cleaned)
    assert clean_text(cleaned) == cleaned
    assert all(ch in text for ch in cleaned), "cleaning only removes"
    assert admit_text(text) == cleaned


_DB = Path(tempfile.mkdtemp(prefix="chat-prop-"))
_LAYER: list[ChatHistoryLayer] = []


async def _store_and_read(step_id: str, text: str) -> tuple[str, str]:
    init_http_context()
    if not _LAYER:
        await prepare_schema(database_url(_DB))
        _LAYER.append(ChatHistoryLayer(database_url(_DB), on_failure=lambda what, error: pytest.fail(error)))
    layer = _LAYER[0]
    await layer.create_step({"id": step_id, "threadId": "prop", "name": "alice", "type": "user_message",
                             "output": text, "streaming": False, "createdAt": step_id})
    await layer.update_thread("prop", name=text[:50] or "empty")
    with sqlite3.connect(_DB / "chat.db") as conn:
        stored = conn.execute("SELECT output FROM steps WHERE id = ?", (step_id,)).fetchone()[0]
        name = conn.execute("SELECT name FROM threads WHERE id = 'prop'").fetchone()[0]
    return stored, name


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT, st.uuids())
async def test_what_history_stores_is_what_the_chat_shows(text: str, step_id: object) -> None:
    shown = clean_text(text)  # the chat shows (and asks the model) the cleaned text
    stored, name = await _store_and_read(str(step_id), text)  # the raw text reaches the layer
    assert stored == shown
    assert name == clean_text(text[:50] or "empty")


def test_an_over_long_message_is_refused_before_it_is_cleaned(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_cleaning(_text: str) -> str:
        raise AssertionError("an over-long message must be refused before it is cleaned")

    monkeypatch.setattr(cleaning, "clean_text", no_cleaning)
    with pytest.raises(Refused) as refused:
        admit_text("\x00" * (MAX_INPUT_CHARS + 1))
    message = str(refused.value)
    assert f"{MAX_INPUT_CHARS + 1:,} characters" in message and f"{MAX_INPUT_CHARS:,}" in message
    assert "1 MB" in message and "shorten" in message


@pytest.mark.parametrize("payload", [None, "text", 7, {"question": 7}, {"question": ["a"]}, {"question": None},
                                     {"question": "x" * (MAX_INPUT_CHARS + 1)}])
def test_a_forged_retry_payload_is_refused_with_a_reason(payload: object) -> None:
    with pytest.raises(Refused, match="question to retry"):
        retry_question(payload)


def test_a_retry_payload_is_cleaned_like_a_message() -> None:
    assert retry_question({"question": "Capital of France?\x00\ud800\x1b"}) == "Capital of France?"
    assert retry_question({}) == ""


def test_the_system_prompt_is_bounded_and_cleaned() -> None:
    defaults = Params()
    params = Params.from_widgets({"system_prompt": "Be brief.\x00" + "x" * 50_000}, defaults, max_system_prompt=100)
    assert len(params.system_prompt) <= 100 and params.system_prompt.startswith("Be brief.x")
    assert bounded_prompt("a\udc80b", 10) == "ab"
