"""Issue 13's shipped_chat_template remedy against a real vLLM: a copy of the demo model folder without its chat
template (no chat_template.jinja, none in tokenizer_config.json) serves, but vLLM refuses every chat with its
own 400; the chat names chat_template from that refusal; the remedy passes the app's ChatML template (the
tokenizer has its tokens); after the restart the verification completion and the chat's question succeed.
Undo restores the refusal. One start and two restarts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import openai
import pytest
import pytest_asyncio

from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.monitor import Monitor
from chainlit_app.remedies import finding_from_entry
from chainlit_app.remedies.templates import CHATML
from tests.chat_path import ask, chat_params, watched_engine
from tests.conftest import settings_for_tests
from tests.findings_wait import finding_of
from tests.model_copies import edit_json, model_copy

pytestmark = pytest.mark.integration
CAPITAL = "What is the capital of France?"


@pytest_asyncio.fixture(scope="module")
async def rig(demo_model: Path, tmp_path_factory: pytest.TempPathFactory
              ) -> AsyncIterator[tuple[SpawnedEngine, Monitor]]:
    root = tmp_path_factory.mktemp("remedy-template")
    folder = model_copy(demo_model, root / "smollm2-no-template")
    (folder / "chat_template.jinja").unlink()
    edit_json(folder / "tokenizer_config.json", chat_template=None)
    settings = settings_for_tests(model=str(folder), served_model_name="demo", data_dir=root / "data",
                                  log_dir=root / "logs", max_model_len=1024, preflight=False, max_restarts=0)
    async with watched_engine(settings) as (engine, monitor):
        await engine.start()
        assert engine.is_ready(), engine.status
        yield engine, monitor


async def test_a_model_without_a_chat_template_answers_with_the_shipped_one(
        rig: tuple[SpawnedEngine, Monitor]) -> None:
    engine, monitor = rig
    refused = await ask(engine, monitor, CAPITAL, chat_params(engine, 24))
    assert isinstance(refused.error, openai.BadRequestError), refused  # vLLM's own refusal
    entry = await finding_of(monitor, "chat_template")
    assert entry["source"] == "chat", entry
    finding = finding_from_entry(entry)
    proposals = engine.proposals(finding)
    assert [p.remedy.id for p in proposals] == ["shipped_chat_template"]
    assert proposals[0].overrides == {"chat_template": str(CHATML.path)}

    result = await engine.apply_remedy(proposals[0])
    print(f"\nremedy shipped_chat_template apply: {proposals[0].reason}; "
          f"{'verified' if result.fixed else 'NOT verified'} after {result.seconds:.1f} s; answer {result.answer!r}; "
          f"the refusal was: {finding.text[:200]}")
    assert result.fixed, result.evidence
    assert engine.supervisor is not None and str(CHATML.path) in engine.supervisor.argv
    fixed = next(e for e in monitor.store.snapshot() if e["id"] == entry["id"])
    assert fixed["resolved"] and fixed["resolved_reason"].startswith("fixed by shipped_chat_template")
    answer = await ask(engine, monitor, CAPITAL, chat_params(engine, 24))
    assert answer.error is None and "Paris" in answer.text, answer

    undone = await engine.undo_remedy("shipped_chat_template")
    print(f"\nremedy shipped_chat_template undo: {'verified' if undone.fixed else 'not verified'} after "
          f"{undone.seconds:.1f} s; evidence {undone.evidence}")
    assert not undone.fixed and "400" in " ".join(undone.evidence), "the refusal is back"
    assert engine.is_ready() and engine.overrides.values() == {}
    again = await ask(engine, monitor, CAPITAL, chat_params(engine, 24))
    assert isinstance(again.error, openai.BadRequestError)
