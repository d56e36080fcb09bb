"""A failure stays a failure in the envelopes logs are pasted in (issue 11: never `healthy` while something
failed). Every failing dev log is re-read indented as a Markdown code block, behind a tab, behind `docker logs -t`'s
time, a compose service's column, a Markdown quote, as `grep -n`, `cat -n`, `journalctl` and `kubectl logs --prefix`
print it, and with Windows' line ends (reading llm.log with
grep is what the panel replaces); none may be called healthy, except the few listed here whose reading needs the
line's own start (each with its reason).

Round 30 showed the need: three of its four failures called healthy were lines in a shape no reading knew.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from chainlit_app.diagnostics import HEALTHY, classify_file, classify_lines
from chainlit_app.diagnostics.lineformat import parse_line
from tests.unit.test_corpus import KNOWN_FALSE_ALARMS  # read healthy as written first

DEV = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"

ENVELOPES: dict[str, Callable[[int, str], str]] = {
    "code_block": lambda _n, line: "    " + line,
    "tab": lambda _n, line: "\t" + line,
    "docker_time": lambda _n, line: "2025-01-02T10:00:00.123456789Z " + line,
    "compose": lambda _n, line: "vllm-1  | " + line,
    "quote": lambda _n, line: "> " + line,
    "grep_n": lambda n, line: f"logs/llm.log:{n}:{line}",
    "cat_n": lambda n, line: f"{n:6}\t{line}",
    # `journalctl -u vllm` (a server run as a systemd unit) and `kubectl logs --prefix`
    "journald": lambda n, line: f"Dec 05 02:11:{n % 60:02} gpu-host vllm[1234]: {line}",
    "kubectl_prefix": lambda _n, line: "[pod/vllm-7d9f8b6c5-x2x9z/vllm] " + line,
    "crlf": lambda _n, line: line + "\r",
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
_MOVES_THE_START = {"docker_time", "compose", "quote", "grep_n", "cat_n"}


@cache
def _failing() -> list[Path]:
    return [p for p in sorted(DEV.glob("*/*.log")) if p.parent.name != HEALTHY and classify_file(p).kind != HEALTHY]


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
def test_no_failure_is_called_healthy_in_an_envelope(envelope: str) -> None:
    wrap = ENVELOPES[envelope]
    called_healthy = set()
    for path in _failing():
        lines = path.read_text(errors="replace").splitlines()
        if classify_lines([wrap(n, line) for n, line in enumerate(lines, 1)]).kind == HEALTHY:
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
    healthy = [p for p in sorted((DEV.parent).glob(f"*/{HEALTHY}/*.log")) if p.name not in KNOWN_FALSE_ALARMS]
    alarms = [f"{p.parent.parent.name}/{p.name} -> {report.kind}" for p in healthy
              if (report := classify_lines([wrap(n, line) for n, line in
                                            enumerate(p.read_text(errors="replace").splitlines(), 1)])).kind != HEALTHY]
    assert not alarms, alarms


def test_a_line_number_is_taken_off_and_a_clock_date_or_source_location_is_not() -> None:
    assert parse_line("1234:ERROR 12-01 10:00:00 [core.py:1] boom").message == "boom"
    assert parse_line("logs/llm.log:12:INFO:     Started server process [7]").message == "Started server process [7]"
    assert parse_line("    12\tERROR 12-01 10:00:00 [core.py:1] boom").level == "ERROR"
    assert parse_line("1233-INFO 12-01 10:00:00 [core.py:1] context line").level == "INFO"
    for kept in ("21:31:02 Engine 001: Avg generation throughput: 0.1 tokens/s",
                 "core_worker.cc:514: Failed to register worker to Raylet",
                 "10:00 the meeting"):
        assert parse_line(kept).message == kept, kept
