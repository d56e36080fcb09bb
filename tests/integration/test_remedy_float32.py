"""Issue 13's float32_on_cpu remedy through the running app's API, as far as this machine lets the fault be made.

This CPU computes half precision well enough: the demo model served in bfloat16 (or float16) answers correctly
here (FACTS.md, and a probe on an earlier branch), so half precision cannot be made to garble a good model's
answers. What can be made for real is a garbled answer from a model served in bfloat16: a tiny random ERNIE-4.5,
whose answers hold U+FFFD and control characters in any precision. The chat names decode_error, "Apply fix"
proposes float32 (half precision on a CPU), the restart in float32 succeeds, and the verification asks a question
with one right answer: garbled or wrong, so the remedy is reported as not fixed and the finding stays open with
the new evidence (the issue's "a remedy that does not help"). Undo returns to bfloat16. One start and two
restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.chainlit_client import ChainlitSession
from tests.remedy_app import (
    APPLY,
    UNDO,
    USER,
    USER_PASSWORD,
    admin_http,
    listed,
    newest_command,
    open_finding,
    press,
    running_app,
    wait_for,
)

pytestmark = pytest.mark.integration
REMEDY = "float32_on_cpu"


async def test_float32_is_offered_for_a_garbled_bf16_answer_and_left_open_when_it_does_not_help(
        tiny_ernie: Path, tmp_path: Path) -> None:
    async with running_app(tmp_path / "data", CHAT_MODEL=str(tiny_ernie), CHAT_SERVED_MODEL_NAME="demo",
                           CHAT_DTYPE="bfloat16", CHAT_SYSTEM_PROMPT="") as app, admin_http(app) as http:
        await app.wait_engine(("ready",), timeout=900)
        assert "--dtype bfloat16" in await newest_command(app, await app.diagnostics())
        async with ChainlitSession(app.url, USER, USER_PASSWORD) as chat:
            garbled = await chat.ask("What is the capital of France?", timeout=300)
        body = await wait_for(app, "decode_error named with its remedy",
                              lambda b: open_finding(b, "decode_error", REMEDY) is not None, timeout=30)
        finding = open_finding(body, "decode_error", REMEDY)
        assert finding is not None and finding["source"] == "chat", finding
        [remedy] = finding["remedies"]
        assert remedy["overrides"] == {"dtype": "float32"} and remedy["previous"] == {"dtype": "bfloat16"}

        result, seconds = await press(http, APPLY, {"finding": finding["id"], "remedy": REMEDY})
        print(f"\nremedy {REMEDY} apply: {'verified' if result['fixed'] else 'NOT verified'}; POST to answer "
              f"{seconds:.1f} s (the app's count {result['seconds']} s); evidence {result['evidence']}; the chat's "
              f"finding: {finding['evidence'][-1]['text']}; the garbled answer began {garbled.text[:60]!r}")
        body = await app.diagnostics()
        assert body["engine"]["state"] == "ready", "the new launch itself started"
        assert "--dtype float32" in await newest_command(app, body)
        assert not result["fixed"] and result["evidence"][0].startswith("verification answer"), result
        still = next(f for f in body["findings"] if f["id"] == finding["id"])
        assert not still["resolved"], "a remedy that did not help leaves the finding open"
        assert still["remedy_outcome"]["state"] == "failed" and still["remedy_outcome"]["evidence"], still
        assert listed(body) == [("dtype", "float32", "bfloat16", REMEDY)], "the change stays listed, to undo"

        undone, seconds = await press(http, UNDO, {"remedy": REMEDY})
        print(f"remedy {REMEDY} undo: POST to a running bfloat16 launch {seconds:.1f} s (the app's count "
              f"{undone['seconds']} s)")
        body = await app.diagnostics()
        assert undone["fixed"] and body["overrides"]["overrides"] == []
        assert "--dtype bfloat16" in await newest_command(app, body)
