"""Issue 13's remedies for a taken port, a generation config that stops at once and a looping answer, through
the running app's API as the panel applies them, on one app with one real vLLM (a copy of the demo model):

1. free_port: CHAT_PORT names a port another program listens on; vLLM cannot bind, the app's log tail names
   port_in_use, "Apply fix" moves vLLM to a free port (verified by a one-token completion);
2. default_generation_config: the folder's generation_config.json makes every token a stop token (broken before
   the app starts, so it is the next fault the chat meets once vLLM runs); the chat's answer comes back empty,
   the chat names empty_output, "Apply fix" serves with a corrected copy of the file, the chat answers;
3. repetition_penalty: with no penalty (CHAT_REPETITION_PENALTY=1.0) the demo model loops on the issue's question;
   the chat names degenerate_output with the repeated phrase, "Apply fix" sets the penalty the chat's requests
   carry (no restart), the same question loops far less; undo takes it back (no restart).
Then undo brings back the empty answers, and undo of free_port the port refusal. Tests run in order; starts:
one failed, two good restarts, one good undo restart, one failed undo restart."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from bench.apps import AppServer
from bench.chainlit_client import AskResult, ChainlitSession
from chainlit_app.diagnostics.answer_loops import distinct_word_ratio
from tests.model_copies import edit_json, model_copy
from tests.remedy_app import (
    APPLY,
    UNDO,
    USER,
    USER_PASSWORD,
    admin_http,
    fixed_by,
    listed,
    newest_command,
    open_finding,
    press,
    running_app,
    wait_for,
)

pytestmark = pytest.mark.integration
CAPITAL = "What is the capital of France?"
LOOPING = "Explain in two sentences what vLLM is."  # the question: the demo model loops on it


@dataclass
class Rig:
    app: AppServer
    http: httpx.AsyncClient
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
    # A broken config, as after a bad conversion: every token id ends the answer. vLLM reads it at start.
    edit_json(folder / "generation_config.json", eos_token_id=list(range(49152)))
    port = blocker.getsockname()[1]
    async with running_app(root / "data", CHAT_MODEL=str(folder), CHAT_SERVED_MODEL_NAME="demo",
                           CHAT_PORT=str(port), CHAT_REPETITION_PENALTY="1.0") as app, admin_http(app) as http:
        yield Rig(app, http, port)


async def ask(app: AppServer, question: str) -> AskResult:
    """A new conversation in the chat, as a user opens one."""
    async with ChainlitSession(app.url, USER, USER_PASSWORD) as chat:
        return await chat.ask(question, timeout=300)


def report(result: dict[str, Any], seconds: float, what: str) -> None:
    print(f"\nremedy {result['remedy']} {result['action']}: {what}; {'verified' if result['fixed'] else 'NOT verified'}"
          f"; POST to answer {seconds:.1f} s (the app's count {result['seconds']} s); answer {result['answer']!r}; "
          f"evidence {result['evidence']}")


async def test_free_port_moves_vllm_off_a_port_another_program_holds(rig: Rig) -> None:
    body = await wait_for(rig.app, "port_in_use named with its remedy", lambda b: b["engine"]["state"] == "failed"
                          and open_finding(b, "port_in_use", "free_port") is not None)
    finding = open_finding(body, "port_in_use", "free_port")
    assert finding is not None and finding["source"] == "log"
    [remedy] = finding["remedies"]
    new_port = remedy["overrides"]["port"]
    assert remedy["previous"] == {"port": rig.taken_port} and new_port != rig.taken_port

    result, seconds = await press(rig.http, APPLY, {"finding": finding["id"], "remedy": "free_port"})
    report(result, seconds, f"--port {rig.taken_port} -> {new_port}")
    assert result["fixed"], result
    body = await rig.app.diagnostics()
    assert body["engine"]["state"] == "ready" and f"--port {new_port}" in await newest_command(rig.app, body)
    fixed_by(body, finding["id"], "free_port")


async def test_generation_config_that_stops_at_once_is_served_corrected(rig: Rig) -> None:
    empty = await ask(rig.app, CAPITAL)  # vLLM runs now: the chat meets the next fault
    assert empty.completed and "Paris" not in empty.text and not empty.text.strip(), empty
    body = await wait_for(rig.app, "empty_output named with its remedy",
                          lambda b: open_finding(b, "empty_output", "default_generation_config") is not None,
                          timeout=30)
    finding = open_finding(body, "empty_output", "default_generation_config")
    assert finding is not None and finding["source"] == "chat"
    [remedy] = finding["remedies"]
    assert "49151 token id(s) besides the tokenizer's EOS 2" in remedy["reason"], remedy

    result, seconds = await press(rig.http, APPLY, {"finding": finding["id"], "remedy": "default_generation_config"})
    report(result, seconds, f"--generation-config {remedy['overrides']['generation_config']}")
    assert result["fixed"] and "paris" in result["answer"].lower(), result  # an answer fault: judged on the answer
    body = await rig.app.diagnostics()
    assert "--generation-config" in await newest_command(rig.app, body)
    fixed_by(body, finding["id"], "default_generation_config")
    answer = await ask(rig.app, CAPITAL)
    assert answer.completed and "Paris" in answer.text, (answer.text, answer.notices, answer.error)


async def test_a_looping_answer_gets_a_repetition_penalty_without_a_restart(rig: Rig) -> None:
    looping = await ask(rig.app, LOOPING)
    body = await wait_for(rig.app, "degenerate_output named with its remedy",
                          lambda b: open_finding(b, "degenerate_output", "repetition_penalty") is not None,
                          timeout=30)
    finding = open_finding(body, "degenerate_output", "repetition_penalty")
    assert finding is not None and finding["source"] == "chat"
    said = finding["evidence"][-1]["text"]
    assert " times" in said and "'" in said, said  # the repeated phrase, quoted
    pid = body["engine"]["pid"]

    result, seconds = await press(rig.http, APPLY, {"finding": finding["id"], "remedy": "repetition_penalty"})
    report(result, seconds, "repetition_penalty 1.0 -> 1.1")
    assert result["fixed"] and result["overrides"]["repetition_penalty"] == 1.1, result
    body = await rig.app.diagnostics()
    assert body["engine"]["pid"] == pid, "a request setting needs no restart"
    assert ("repetition_penalty", 1.1, 1.0, "repetition_penalty") in listed(body)
    fixed_by(body, finding["id"], "repetition_penalty")

    better = await ask(rig.app, LOOPING)
    before, after = distinct_word_ratio(looping.text), distinct_word_ratio(better.text)
    print(f"\n{LOOPING!r} at temperature 0 in the chat: distinct-word ratio {before:.2f} ({len(looping.text)} chars) "
          f"without the penalty, {after:.2f} ({len(better.text)} chars) with 1.1; evidence: {said}")
    assert better.completed and after > before
    body = await rig.app.diagnostics()
    assert not [f for f in body["findings"] if f["kind"] == "degenerate_output" and not f["resolved"]], \
        "the answer with the penalty still loops"

    undone, seconds = await press(rig.http, UNDO, {"remedy": "repetition_penalty"})
    report(undone, seconds, "repetition_penalty back to 1.0")
    assert undone["fixed"] and (await rig.app.diagnostics())["engine"]["pid"] == pid


async def test_undo_brings_back_the_configured_launch(rig: Rig) -> None:
    undone, seconds = await press(rig.http, UNDO, {"remedy": "default_generation_config"})
    report(undone, seconds, "back to the model's generation_config.json")
    assert undone["fixed"]  # the one-token verification does not ask for text: the server answers
    assert "--generation-config" not in await newest_command(rig.app, await rig.app.diagnostics())
    empty = await ask(rig.app, CAPITAL)
    assert empty.completed and not empty.text.strip(), "the fault is back"

    undone, seconds = await press(rig.http, UNDO, {"remedy": "free_port"})
    report(undone, seconds, f"back to --port {rig.taken_port}")
    assert not undone["fixed"] and any("port_in_use" in line for line in undone["evidence"]), undone
    body = await wait_for(rig.app, "the port refusal offered its fix again",
                          lambda b: open_finding(b, "port_in_use", "free_port") is not None, timeout=60)
    assert body["engine"]["state"] == "failed" and body["overrides"]["overrides"] == []
