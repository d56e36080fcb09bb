"""Issue 13's shipped_chat_template remedy through the running app's API: the app serves a copy of the demo model
folder without its chat template (no chat_template.jinja, none in tokenizer_config.json); vLLM starts, but
refuses every chat with its own 400; the chat names chat_template from that refusal; "Apply fix" passes the
app's ChatML template (the tokenizer has its tokens); after the restart the verification completion and the
chat's question succeed. Undo restores the refusal. One start and two restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.apps import AppServer
from bench.chainlit_client import AskResult, ChainlitSession
from chainlit_app.remedies.templates import CHATML
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
REMEDY = "shipped_chat_template"


async def ask(app: AppServer) -> AskResult:
    async with ChainlitSession(app.url, USER, USER_PASSWORD) as chat:
        return await chat.ask(CAPITAL, timeout=300)


async def test_a_model_without_a_chat_template_answers_with_the_shipped_one(demo_model: Path, tmp_path: Path) -> None:
    folder = model_copy(demo_model, tmp_path / "smollm2-no-template")
    (folder / "chat_template.jinja").unlink()
    edit_json(folder / "tokenizer_config.json", chat_template=None)
    async with running_app(tmp_path / "data", CHAT_MODEL=str(folder), CHAT_SERVED_MODEL_NAME="demo") as app, \
            admin_http(app) as http:
        await app.wait_engine(("ready",), timeout=900)
        refused = await ask(app)
        assert "Paris" not in refused.text, refused
        body = await wait_for(app, "chat_template named with its remedy",
                              lambda b: open_finding(b, "chat_template", REMEDY) is not None, timeout=30)
        finding = open_finding(body, "chat_template", REMEDY)
        # Named from vLLM's refusal: its 400 line in the log the app follows, or the chat's own error, whichever
        # the app saw first.
        assert finding is not None and finding["source"] in ("log", "chat"), finding
        [remedy] = finding["remedies"]
        assert remedy["overrides"] == {"chat_template": str(CHATML.path)}, remedy

        result, seconds = await press(http, APPLY, {"finding": finding["id"], "remedy": REMEDY})
        print(f"\nremedy {REMEDY} apply: {remedy['reason']}; {'verified' if result['fixed'] else 'NOT verified'}; "
              f"POST to verified {seconds:.1f} s (the app's count {result['seconds']} s); answer {result['answer']!r}; "
              f"the refusal ({finding['source']}) was: {finding['evidence'][-1]['text'][:200]}")
        assert result["fixed"], result
        body = await app.diagnostics()
        assert body["engine"]["state"] == "ready", _why_not_ready(body)
        assert str(CHATML.path) in await newest_command(app, body)
        [(name, value, previous, by)] = listed(body)
        assert (name, value, previous or "", by) == ("chat_template", str(CHATML.path), "", REMEDY)
        fixed_by(body, finding["id"], REMEDY)
        answer = await ask(app)
        assert answer.completed and answer.error is None and "Paris" in answer.text, answer

        undone, seconds = await press(http, UNDO, {"remedy": REMEDY})
        print(f"remedy {REMEDY} undo: {'verified' if undone['fixed'] else 'not verified'}; POST to answer "
              f"{seconds:.1f} s (the app's count {undone['seconds']} s); evidence {undone['evidence']}")
        assert not undone["fixed"] and "400" in " ".join(undone["evidence"]), "the refusal is back"
        body = await app.diagnostics()
        assert body["engine"]["state"] == "ready", _why_not_ready(body)
        assert body["overrides"]["overrides"] == []
        again = await ask(app)
        assert "Paris" not in again.text, again


def _why_not_ready(body: dict[str, Any]) -> str:
    """What the panel's API says instead: the probe's last result and the open degraded finding."""
    degraded = [f["evidence"][-1]["text"] for f in body["findings"] if f["kind"] == "degraded" and not f["resolved"]]
    return f"state {body['engine']['state']}; probe {body.get('probe')}; degraded {degraded}"
