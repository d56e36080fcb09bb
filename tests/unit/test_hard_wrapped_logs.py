"""A log broken at a fixed width (`fold`, a mail client, a fixed-width page) is read as the log it was
(`hard_wrap.py`). Every failing dev log is re-read broken at 120 and at 80 columns: none may come back healthy
except the few listed (one long line broken once gives no width to join at); no healthy log (dev and holdout) may
raise a finding; and the tables, repeated answers and same-template lines of logs as posted are not joined.

Before `hard_wrap.py`: 36 and 56 failing dev logs called healthy, 6 and 15 healthy logs alarmed (docs/DIAGNOSIS.md).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from chainlit_app.diagnostics import HEALTHY, classify_file, classify_lines
from chainlit_app.diagnostics.hard_wrap import cut_width, unwrapped
from tests.unit.test_corpus import KNOWN_FALSE_ALARMS  # read healthy as written first

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
DEV = LOGS / "dev"

_ONE_PIECE = "its one long line broke once: a single line at the width is no sign of a width to join at"
# Failing dev logs a width turns healthy; any other failing dev log turning healthy fails the test.
ONE_LONG_LINE = {
    120: {
        "degenerate_output/round22b_spotlight32_qwen27b_ollama_runs_past_endoftext_length.log",
        "slow_or_stalled/round8_gh18303_qwen3_235b_hangs_generating_p2p_access_cache.log",
        "startup_failure/xinference3135_qwen25vl_architectures_failed_to_be_inspected.log",
        "version_mismatch/round28d_baichuan2_204_vllm_tokenizer_no_sp_model.log",
        # three pieces at the width, but the answer's repr goes on with `response_metadata={...}`, read as a key
        "empty_output/round18b_lcmcp111_react_agent_chatollama_aimessage_content_empty_done_load.log",
        # one line, an answer of one digit said 127 times: broken, no piece holds the answer between its quotes
        "degenerate_output/round64g_vllmascend4477_qwen3_next_generated_text_all_ones.log",
    },
    80: {
        "degenerate_output/round22b_spotlight32_qwen27b_ollama_runs_past_endoftext_length.log",
        "empty_output/round20b_roocode1089_no_assistant_messages_deepseek_ollama.log",
        "empty_output/round22a_mdvaultmcp919_summarize_empty_finish_length_reasoning_budget.log",
        "slow_or_stalled/round8_gh20891_v0180_qwen3vl_32b_bnb_silent_after_starting_to_load.log",
        "startup_failure/round12a_gh12847_v084_docker_unspecified_platform.log",
        "startup_failure/round32b_workervllm70_gguf_repo_config_entry_not_found.log",
        "out_of_memory/round36b_tpurecipes151_gptoss_tpu_resource_exhausted.log",
        # one line, an answer of one digit said 127 times: broken, no piece holds the answer between its quotes
        "degenerate_output/round64g_vllmascend4477_qwen3_next_generated_text_all_ones.log",
    },
}


# Healthy logs a width turns into a failure, each for a reason written down (docs/DIAGNOSIS.md, rounds 53 and 55);
# any other healthy log doing so fails the test.
_SAME_WARNING = ("four tensor-parallel workers print one WARNING each, alike up to the width, so the lines at the "
                 "width look like whole lines of one template and are not joined to their rests; the rest's words "
                 "('not supported') are then read as a failure sentence")
_COLOURED = ("a coloured WARNING (ANSI codes before its process tag) broken at the width is not joined to its rest, "
             "whose words ('Config file not found') are then read as a failure sentence")
_BRACKET_START = ("torch's warning broken right before its '[0/0] Not enough SMs …': a piece that opens with a bracket "
                  "starts as a line does, so it is not joined, and its words ('not enough') read as a failure sentence")
_ONE_CUT = ("the only line at the width is a Python warning's header, cut before the colon that says its message goes "
            "on: one line at a width is no fold, so nothing is joined, and the message's next line ('No module named "
            "…') reads as an exception raised")
_CLASS_CUT = ("a traceback vLLM logged at WARNING, its exception line broken inside the class's name ('…"
              "[import_utils.py:408] Import' | 'Error: libnvrtc.so.13: …'): the rest starts a line of its own, read as "
              "an exception raised bare, no longer at WARNING")
HEALTHY_BROKEN = {
    120: {"holdout/round53d_sotarome_vllm0110_moonlight16b_a6000_offline_moe_config_warning.log": _COLOURED},
    80: {"holdout/round53e_multiagentsdebate_qwen25_14b_tp4_v092_pcie_warnings_startup.log": _SAME_WARNING,
         "holdout/round53d_fourquestions_vllm085_wsl_opt125m_offline_pin_memory_warning.log": _BRACKET_START,
         "dev/round55c_gh9421_serve_commit_hash_runtime_warning.log": _ONE_CUT,
         "dev/round65b_quyetttcoder_vllmserve_t4_v024_fa2_error_line_deepgemm_warning_ready.log": _CLASS_CUT},
}


def broken_at(lines: list[str], width: int) -> list[str]:
    """What `fold -w WIDTH` makes of the lines."""
    return [line[i:i + width] for line in lines for i in range(0, max(len(line), 1), width)]


@cache
def _failing() -> list[Path]:
    return [p for p in sorted(DEV.glob("*/*.log")) if p.parent.name != HEALTHY and classify_file(p).kind != HEALTHY]


@pytest.mark.parametrize("width", sorted(ONE_LONG_LINE))
def test_no_failure_is_called_healthy_when_broken_at_a_width(width: int) -> None:
    called_healthy = set()
    for path in _failing():
        lines = path.read_text(errors="replace").splitlines()
        if classify_lines(broken_at(lines, width)).kind == HEALTHY:
            called_healthy.add(f"{path.parent.name}/{path.name}")
    print(f"width {width}: {len(called_healthy)} of {len(_failing())} failing dev logs called healthy")
    assert called_healthy <= ONE_LONG_LINE[width], sorted(called_healthy - ONE_LONG_LINE[width])


@pytest.mark.parametrize("width", sorted(ONE_LONG_LINE))
def test_a_healthy_log_stays_healthy_when_broken_at_a_width(width: int) -> None:
    alarms = {f"{p.parent.parent.name}/{p.name}" for p in sorted(LOGS.glob(f"*/{HEALTHY}/*.log"))
              if p.name not in KNOWN_FALSE_ALARMS
              and classify_lines(broken_at(p.read_text(errors="replace").splitlines(), width)).kind != HEALTHY}
    assert alarms <= set(HEALTHY_BROKEN[width]), sorted(alarms - set(HEALTHY_BROKEN[width]))


def _joined(lines: list[str]) -> list[str]:
    return [text for _, text, _ in unwrapped((n, line, False) for n, line in enumerate(lines, 1))]


def test_a_cut_error_line_is_joined_and_read_for_what_it_says() -> None:
    line = ("ERROR 12-01 10:00:00 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
            "2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.02 GiB is free.")
    broken = broken_at(["INFO 12-01 09:59:00 [api_server.py:1] vLLM API server version 0.11.0 " + "x" * 60,
                        line, "INFO 12-01 10:00:01 [launcher.py:1] Shutting down"], 60)
    assert cut_width(broken) == 60
    assert _joined(broken)[1] == line
    assert classify_lines(broken).kind == "out_of_memory"


def test_a_broken_file_is_read_as_its_lines_were(tmp_path: Path) -> None:
    """`classify` on a file: its lines come with their ends (`\\n`, `\\r\\n`), which are no part of the width."""
    body = '{"object":"error","message":"This model\'s maximum context length is 4096 tokens. However, you ' \
           'requested 5000 tokens (4000 in the messages, 1000 in the completion).","type":"BadRequestError",' \
           '"param":null,"code":400}'
    for end in ("\n", "\r\n"):
        path = tmp_path / "broken.log"
        path.write_bytes(end.join(["$ curl -s localhost:8000/v1/chat/completions -d @big.json",
                                   *broken_at([body], 64), ""]).encode())
        report = classify_file(path)
        assert report.kind == "context_length", (end, report.to_json())
        assert report.root is not None and report.root.line == 2


def test_a_joined_line_keeps_the_number_of_its_first_piece() -> None:
    body = '{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}],' \
           '"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}'
    report = classify_lines(["$ curl http://localhost:8000/v1/chat/completions -d @q.json", *broken_at([body], 70)])
    assert report.kind == "empty_output"
    assert report.root is not None and report.root.line == 2


def test_tables_repeated_lines_and_one_template_are_not_joined() -> None:
    table = ["| model                              | tokens/s |",
             "| Qwen/Qwen2.5-0.5B-Instruct         |    812.4 |",
             "| baidu/ERNIE-4.5-0.3B-PT            |    901.7 |",
             "text after the table"]
    answer = "I am an AI language model designed to assist with various tasks, such as answering questions."
    loop = [answer, "I'm sorry, but I am not sure what you are asking.", answer, answer]
    stats = [f"INFO 12-01 10:00:{s:02} [loggers.py:1] Engine 000: Avg prompt throughput: 0.0 tokens/s, Running: 1"
             for s in (0, 10, 20)] + ["and a line that is not one"]
    for lines in (table, loop, stats):
        assert _joined(lines) == lines


def test_a_log_no_width_broke_is_not_touched() -> None:
    lines = ["Traceback (most recent call last):",
             '  File "/usr/lib/python3.12/site-packages/vllm/entrypoints/openai/api_server.py", line 1, in <module>',
             "ValueError: the longest line of a log is not a cut just because it is the longest"]
    assert cut_width(lines) is None
    assert _joined(lines) == lines
