"""Issue 13's remedies against a real vLLM, one engine handle for the module (wired as chainlit_app/runtime.py
wires it), each fault made for real and named by the app's own path:

1. free_port: the fixed CHAT_PORT is held by another listening socket; vLLM cannot bind, the log tail names
   port_in_use, the remedy moves to a free port;
2. default_generation_config: the model folder's generation_config.json makes every token a stop token, so the
   chat's answers come back empty after one token; the chat names empty_output, the remedy serves with
   a corrected copy of the file (`--generation-config FOLDER`);
3. repetition_penalty: with no penalty the demo model loops on the issue's question; the chat names
   degenerate_output with the repeated phrase, the remedy sets the penalty the chat's requests carry (no restart).

Each apply goes through SpawnedEngine.apply_remedy (write the override, restart when it is a launch setting,
verify with a real completion), then the chat asks again; undo restores the fault. Tests run in order.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from chainlit_app.engine.status import EngineState
from chainlit_app.handles.spawned import SpawnedEngine
from chainlit_app.monitor import Monitor
from chainlit_app.remedies import Proposal, RemedyResult, finding_from_entry
from tests.chat_path import ask, chat_params, watched_engine
from tests.conftest import settings_for_tests
from tests.findings_wait import finding_of
from tests.model_copies import edit_json, model_copy

pytestmark = pytest.mark.integration
CAPITAL = "What is the capital of France?"
LOOPING = "Explain in two sentences what vLLM is."  # the question: the demo model loops on it


@dataclass
class Rig:
    engine: SpawnedEngine
    monitor: Monitor
    folder: Path
    taken_port: int


@pytest.fixture(scope="module")
def blocker() -> Iterator[socket.socket]:
    """Another program listening on the port CHAT_PORT names."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock


@pytest_asyncio.fixture(scope="module")
async def rig(demo_model: Path, blocker: socket.socket, tmp_path_factory: pytest.TempPathFactory
              ) -> AsyncIterator[Rig]:
    root = tmp_path_factory.mktemp("remedy-answers")
    folder = model_copy(demo_model, root / "smollm2-copy")
    port = blocker.getsockname()[1]
    settings = settings_for_tests(model=str(folder), served_model_name="demo", data_dir=root / "data",
                                  log_dir=root / "logs", max_model_len=1024, preflight=False, max_restarts=0,
                                  port=port, repetition_penalty=1.0)
    async with watched_engine(settings) as (engine, monitor):
        yield Rig(engine, monitor, folder, port)


async def only_proposal(rig: Rig, kind: str, remedy: str) -> Proposal:
    entry = await finding_of(rig.monitor, kind, timeout=15.0)
    proposals = rig.engine.proposals(finding_from_entry(entry))
    assert [p.remedy.id for p in proposals] == [remedy], [p.remedy.id for p in proposals]
    return proposals[0]


def report(result: RemedyResult, what: str) -> None:
    print(f"\nremedy {result.remedy} {result.action}: {what}; {'verified' if result.fixed else 'NOT verified'} "
          f"after {result.seconds:.1f} s; answer {result.answer!r}; evidence {result.evidence}")


def resolved_reason(rig: Rig, kind: str) -> str:
    return next(e["resolved_reason"] for e in rig.monitor.store.snapshot() if e["kind"] == kind and e["resolved"])


async def test_free_port_moves_vllm_off_a_port_another_program_holds(rig: Rig) -> None:
    await rig.engine.start()
    assert rig.engine.status.state == EngineState.FAILED, rig.engine.status
    proposal = await only_proposal(rig, "port_in_use", "free_port")  # named from the engine's log
    new_port = proposal.overrides["port"]
    assert proposal.previous == {"port": rig.taken_port} and new_port != rig.taken_port

    result = await rig.engine.apply_remedy(proposal)
    report(result, f"--port {rig.taken_port} -> {new_port}")
    assert result.fixed, result.evidence
    assert rig.engine.is_ready() and rig.engine.base_url.endswith(f":{new_port}")
    assert resolved_reason(rig, "port_in_use").startswith("fixed by free_port")
    answer = await ask(rig.engine, rig.monitor, CAPITAL, chat_params(rig.engine, 24))
    assert "Paris" in answer.text, answer


async def test_generation_config_that_stops_at_once_is_served_with_vllms_defaults(rig: Rig) -> None:
    # The folder's generation_config.json now lists every token id as an end of the answer (a broken config,
    # as after a bad conversion); vLLM reads it at start.
    edit_json(rig.folder / "generation_config.json", eos_token_id=list(range(49152)))
    await rig.engine.restart()
    assert rig.engine.is_ready()
    empty = await ask(rig.engine, rig.monitor, CAPITAL, chat_params(rig.engine, 24))
    assert (empty.text, empty.completion_tokens) == ("", 1), empty
    proposal = await only_proposal(rig, "empty_output", "default_generation_config")
    assert "49151 token id(s) besides the tokenizer's EOS 2" in proposal.reason

    result = await rig.engine.apply_remedy(proposal)
    report(result, f"--generation-config {proposal.overrides['generation_config']}")
    assert result.fixed and result.answer.strip(), result.evidence
    assert rig.engine.supervisor is not None and "--generation-config" in rig.engine.supervisor.argv
    assert resolved_reason(rig, "empty_output").startswith("fixed by default_generation_config")
    answer = await ask(rig.engine, rig.monitor, CAPITAL, chat_params(rig.engine, 24))
    assert "Paris" in answer.text, answer


async def test_a_looping_answer_gets_a_repetition_penalty_without_a_restart(rig: Rig) -> None:
    assert rig.engine.repetition_penalty() == 1.0  # configured off (CHAT_REPETITION_PENALTY=1.0)
    looping = await ask(rig.engine, rig.monitor, LOOPING, chat_params(rig.engine))
    assert [f.kind for f in looping.findings] == ["degenerate_output"], looping
    proposal = await only_proposal(rig, "degenerate_output", "repetition_penalty")
    assert " times" in proposal.finding.text and "'" in proposal.finding.text  # the repeated phrase, quoted
    process = rig.engine.process

    result = await rig.engine.apply_remedy(proposal)
    report(result, "repetition_penalty 1.0 -> 1.1")
    assert result.fixed and rig.engine.process is process, "a request setting needs no restart"
    assert rig.engine.repetition_penalty() == 1.1 and result.overrides["repetition_penalty"] == 1.1
    fixed = await ask(rig.engine, rig.monitor, LOOPING, chat_params(rig.engine))
    print(f"\n{LOOPING!r} at temperature 0: distinct-word ratio {looping.distinct_words:.2f} "
          f"({looping.completion_tokens} tokens, {looping.finish_reason}) without the penalty, "
          f"{fixed.distinct_words:.2f} ({fixed.completion_tokens} tokens, {fixed.finish_reason}) with 1.1; "
          f"evidence: {proposal.finding.text}")
    assert not fixed.findings, fixed.findings
    assert fixed.distinct_words > looping.distinct_words

    undone = await rig.engine.undo_remedy("repetition_penalty")
    assert undone.fixed and rig.engine.repetition_penalty() == 1.0 and rig.engine.process is process


async def test_undo_brings_back_the_configured_launch(rig: Rig) -> None:
    undone = await rig.engine.undo_remedy("default_generation_config")
    report(undone, "back to the model's generation_config.json")
    assert undone.fixed  # the one-token verification does not ask for text: the server answers
    empty = await ask(rig.engine, rig.monitor, CAPITAL, chat_params(rig.engine, 24))
    assert empty.text == "" and empty.completion_tokens == 1, "the fault is back"

    undone = await rig.engine.undo_remedy("free_port")
    report(undone, f"back to --port {rig.taken_port}")
    assert not undone.fixed and rig.engine.status.state == EngineState.FAILED
    assert any("port_in_use" in line for line in undone.evidence), undone.evidence
    assert rig.engine.overrides.values() == {}
