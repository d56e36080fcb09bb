"""A failure stays a failure in the envelopes logs are pasted in (issue 11: never `healthy` while something
failed). Every failing dev log is re-read indented as a Markdown code block, behind a tab, behind `docker logs -t`'s
time, a compose service's column and a Markdown quote; none may be called healthy, except the few listed here
whose reading needs the line's own start (each with its reason).

Round 30 showed the need: three of its four failures called healthy were lines in a shape no reading knew.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from chainlit_app.diagnostics import HEALTHY, classify_file, classify_lines

DEV = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"

ENVELOPES: dict[str, Callable[[str], str]] = {
    "code_block": lambda line: "    " + line,
    "tab": lambda line: "\t" + line,
    "docker_time": lambda line: "2025-01-02T10:00:00.123456789Z " + line,
    "compose": lambda line: "vllm-1  | " + line,
    "quote": lambda line: "> " + line,
}
_LINE_START = ("read by the line's own start, which the envelope moves: a printed answer's `content: '…'` field, "
               "a rollout worker's `(main_task pid=…)` tag, a JSON fragment `\"content\": \"\"` and llama.cpp's "
               "timings, `Uvicorn running on` beside an lsof table, a compose column already before each record")
# Failing dev logs an envelope turns healthy, by envelope; anything else turning healthy fails the test.
NEEDS_THE_LINE_START = {
    "degenerate_output/round22b_spotlight32_qwen27b_ollama_runs_past_endoftext_length.log": _LINE_START,
    "degenerate_output/round8_verl1013_gemma3_rollout_camin_naman_encode_loop.log": _LINE_START,
    "empty_output/round22a_llamacpppy1020_server_no_chat_format_empty_content.log": _LINE_START,
    "port_in_use/round7_jishuzhan_swift_deploy_vllm_8012_taken_server_moved_to_8014.log": _LINE_START,
    "version_mismatch/round6_edgeai2157_compose_json_log_keyerror_qwen3_vl.log": _LINE_START,
    "slow_or_stalled/round21a_ascend13648_pd_decode_running_zero_throughput.log": "its stall is read from each "
    "line's clock (`21:31:02 Engine 001: …`); behind another time the clock is no longer the line's start",
}
# The envelopes that move a line's start: only these may turn the logs above healthy
_MOVES_THE_START = {"docker_time", "compose", "quote"}


@cache
def _failing() -> list[Path]:
    return [p for p in sorted(DEV.glob("*/*.log")) if p.parent.name != HEALTHY and classify_file(p).kind != HEALTHY]


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
def test_no_failure_is_called_healthy_in_an_envelope(envelope: str) -> None:
    wrap = ENVELOPES[envelope]
    called_healthy = set()
    for path in _failing():
        lines = path.read_text(errors="replace").splitlines()
        if classify_lines([wrap(line) for line in lines]).kind == HEALTHY:
            called_healthy.add(f"{path.parent.name}/{path.name}")
    allowed = set(NEEDS_THE_LINE_START) if envelope in _MOVES_THE_START else set()
    assert called_healthy <= allowed, sorted(called_healthy - allowed)


def test_a_margin_every_line_shares_changes_no_reading() -> None:
    for path in _failing()[::7]:
        lines = path.read_text(errors="replace").splitlines()
        assert classify_lines(["    " + line for line in lines]).kind == classify_file(path).kind, path.name


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
def test_a_healthy_log_stays_healthy_in_an_envelope(envelope: str) -> None:
    wrap = ENVELOPES[envelope]
    healthy = sorted((DEV.parent).glob(f"*/{HEALTHY}/*.log"))
    alarms = [f"{p.parent.parent.name}/{p.name} -> {report.kind}" for p in healthy
              if (report := classify_lines([wrap(line) for line in p.read_text(errors="replace").splitlines()])
                  ).kind != HEALTHY]
    assert not alarms, alarms
