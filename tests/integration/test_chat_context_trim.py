"""Issue 13, context_length in a chat, through the running app (`chainlit run app.py` spawning its own vLLM
with CHAT_MAX_MODEL_LEN=512) and its socket.io chat as the browser speaks it: Japanese text costs the demo
model's tokenizer about six times the tokens the app estimates, so the third long question makes a
conversation vLLM refuses as longer than the context. The chat then leaves out the oldest turns (keeping the
system prompt and the question), lowers max_tokens, asks once more, answers, and tells the reader what was
left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.apps import start_app
from bench.chainlit_client import ChainlitSession
from chainlit_app.conversation import without_notes
from tests.conftest import need_engine

pytestmark = pytest.mark.integration
TRIMMED = "_(To fit the model's context"  # the English note (conversation.trimmed_note)
PASSWORD = "trim-test-password"
# 91 characters the demo model's tokenizer makes about 190 tokens of; the app estimates 36.
QUESTION = "これは長い質問です" * 10 + "？"


async def test_a_conversation_vllm_refuses_as_too_long_is_answered_without_its_oldest_turns(
        demo_model: Path, tmp_path: Path) -> None:
    need_engine()
    app = start_app(tmp_path / "data", admin_password=PASSWORD, chat_user="alice", user_password=PASSWORD,
                    CHAT_MAX_MODEL_LEN="512")
    try:
        await app.wait_engine(("ready",), timeout=600)
        async with ChainlitSession(app.url, "alice", PASSWORD) as session:
            assert await session.update_settings({"max_tokens": 48})
            answers = [await session.ask(f"{i}. {QUESTION}", timeout=300) for i in range(1, 4)]
        log = app.log_text()
    finally:
        app.stop()
    for answer in answers:
        print(f"\nanswer: {answer.final_text!r}")
    assert all(a.completed and a.error is None for a in answers), answers
    first, second, third = (a.final_text or "" for a in answers)
    assert TRIMMED not in first and TRIMMED not in second, "nothing left out while it fits"
    assert "the server refused the longer request" in third and TRIMMED in third, third
    assert "(512 tokens), the oldest" in third
    assert without_notes(third).strip(), "an answer, not only the note"
    assert "refused the conversation as too long: retrying without" in log
