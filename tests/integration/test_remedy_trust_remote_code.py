"""Issue 13's one unsafe remedy, trust_remote_code, through the running app's API: a copy of the demo model whose
config.json names its own configuration class through `auto_map` (a .py file in the folder, see
tests/model_copies.remote_code_copy). vLLM refuses to load it without --trust-remote-code (transformers will not
run the folder's code unasked), the app's log tail names the failure, and:
- the automatic mode (on here) never applies it;
- the API refuses it without "confirm" (400, with the risk to show);
- with "confirm" the app restarts vLLM with --trust-remote-code, verifies with a completion, and the chat answers;
- undo brings the refusal back.
One app: a failed start, a good restart, a failed restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bench.chainlit_client import ChainlitSession
from tests.model_copies import remote_code_copy
from tests.remedy_app import (
    APPLY,
    UNDO,
    USER,
    USER_PASSWORD,
    admin_http,
    fixed_by,
    listed,
    newest_command,
    offered,
    open_finding,
    press,
    running_app,
    wait_for,
)

pytestmark = pytest.mark.integration
REMEDY = "trust_remote_code"


async def test_trust_remote_code_needs_a_confirmation_and_then_serves_the_model(demo_model: Path,
                                                                                 tmp_path: Path) -> None:
    folder = remote_code_copy(demo_model, tmp_path / "custom-llama")
    async with running_app(tmp_path / "data", CHAT_MODEL=str(folder), CHAT_SERVED_MODEL_NAME="demo",
                           CHAT_AUTO_REMEDY="safe") as app:
        body = await wait_for(app, "the refusal named with its remedy", lambda b: b["engine"]["state"] == "failed"
                              and open_finding(b, "startup_failure", REMEDY) is not None, timeout=600)
        finding = open_finding(body, "startup_failure", REMEDY)
        assert finding is not None and finding["rule"] == "trust_remote_code_needed" and finding["source"] == "log"
        said = finding["evidence"][-1]["text"]
        assert "custom code" in said or "trust_remote_code" in said, said  # transformers' or vLLM's words
        remedy = offered(body, finding, REMEDY)
        assert not remedy["safe"] and remedy["risk"] and remedy["overrides"] == {"trust_remote_code": True}
        print(f"\nvLLM refused the auto_map model: {said[:200]}\nthe risk the panel shows: {remedy['risk']}")

        # The automatic mode polls every second; give it several rounds on this open finding.
        await asyncio.sleep(8)
        body = await app.diagnostics()
        assert body["remedies"]["auto"] == "safe" and body["remedies"]["running"] is None
        assert body["overrides"]["overrides"] == [] and body["remedies"]["notices"] == [], body["remedies"]
        assert body["engine"]["state"] == "failed" and f"remedy {REMEDY}: applying" not in app.log_text()

        async with admin_http(app) as http:
            payload = {"finding": finding["id"], "remedy": REMEDY}
            unconfirmed = await http.post(APPLY, json=payload)
            assert unconfirmed.status_code == 400, unconfirmed.text
            refusal = unconfirmed.json()
            assert refusal["needs_confirmation"] and refusal["risk"] == remedy["risk"], refusal
            assert "confirm" in refusal["detail"] and refusal["risk"] in refusal["detail"]
            assert not (tmp_path / "data" / "overrides.json").exists(), "an unconfirmed request changed the launch"

            result, seconds = await press(http, APPLY, {**payload, "confirm": True})
            print(f"remedy {REMEDY} apply (confirmed): POST to verified {seconds:.1f} s (the app's count "
                  f"{result['seconds']} s); verification answer {result['answer']!r}; evidence {result['evidence']}")
            assert result["fixed"] and result["overrides"] == {"trust_remote_code": True}, result
            body = await app.diagnostics()
            assert body["engine"]["state"] == "ready"
            assert listed(body) == [("trust_remote_code", True, False, REMEDY)]
            fixed_by(body, finding["id"], REMEDY)
            assert "--trust-remote-code" in await newest_command(app, body)

            async with ChainlitSession(app.url, USER, USER_PASSWORD) as chat:
                answer = await chat.ask("What is the capital of France?", timeout=180)
            assert answer.completed and "Paris" in answer.text, (answer.text, answer.notices, answer.error)

            undone, seconds = await press(http, UNDO, {"remedy": REMEDY})
            print(f"remedy {REMEDY} undo: POST to answer {seconds:.1f} s (the app's count {undone['seconds']} s); "
                  f"evidence {undone['evidence']}")
            assert not undone["fixed"] and undone["overrides"] == {}, undone
            body = await wait_for(app, "the refusal offered its remedy again",
                                  lambda b: open_finding(b, "startup_failure", REMEDY) is not None, timeout=60)
            assert body["engine"]["state"] == "failed" and body["overrides"]["overrides"] == []
