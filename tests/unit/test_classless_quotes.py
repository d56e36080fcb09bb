"""A failure stays a failure when its exception is quoted without its class (issue 11: never `healthy` while
something failed). Posters and wrappers often give the message alone (`print(exc)`, a thread's title, round 37's
`Quantization method specified in the model config … does not match …`, called healthy at first sight). Every
failing dev log whose root cause is an exception line `Type: message` is re-read as its message alone; none may
come back healthy except the ones listed here, each with its reason. The list is the limit of reading messages
by their words: it may shrink, and any other log turning healthy fails the test.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from chainlit_app.diagnostics import HEALTHY, classify_file, classify_lines
from chainlit_app.diagnostics.lineformat import parse_line

DEV = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"
_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit): (?P<message>\S.+)$")

_A_KEY = "a KeyError's message is only the missing key: without its class it is a value, not an error"
_NO_WORDING = ("a library's or vendor's sentence no table holds (its wording is its own, raised nowhere a test "
               "here can raise it for real)")
QUOTED_ALONE_READS_HEALTHY = {
    "decode_error/round5_exui22_deepseek_eos_piece_mojibake_keyerror_waitress.log": _A_KEY,
    "engine_error/dynamo4580_kvbm_scheduler_keyerror.log": _A_KEY,
    "engine_error/gh1200_keyerror_parent_seq_id_concurrent.log": _A_KEY,
    "engine_error/gh25991_v1_embedding_keyerror_none.log": _A_KEY,
    "engine_error/ttvllm145_aborted_request_keyerror_model_runner.log": _A_KEY,
    "startup_failure/gh6947_keyerror_lm_head_tail_interleaved.log": _A_KEY,
    "startup_failure/vllmascend3177_keyerror_deq_scale_w8a8.log": _A_KEY,
    "version_mismatch/round6_edgeai2157_compose_json_log_keyerror_qwen3_vl.log": _A_KEY,
    # jinja2's words, but the posted line ends in a JSON escape (`…got 'name'\n`): read only as the whole line
    "chat_template/workervllm129_template_syntax_error.log": _NO_WORDING,
    "engine_error/round22b_sglang33892_eagle3_dp_attention_idle_batch_max_numel0.log": _NO_WORDING,  # torch
    "engine_error/round23a_sglang1556_vocab_mask_indexerror.log": _NO_WORDING,  # torch
    "engine_error/round30b_vllm31379_glm47_empty_param_tool_typeerror.log": _NO_WORDING,  # the regex module
    "engine_error/round30b_vllm32213_glm47_tool_parser_zero_arg_typeerror.log": _NO_WORDING,  # the regex module
    "engine_error/round9_ascend5509_dsv31_worker_aclnninplacecopy_inner_error.log": _NO_WORDING,  # Ascend's CANN
    "startup_failure/round28e_vllm21713_ernie45_300b_base_pt_shared_experts_not_initialized.log": _NO_WORDING,
    "startup_failure/round6_vllmascend2260_glm4v_9b_npu_ropeoperation_inner_error.log": _NO_WORDING,  # CANN
}


@cache
def _quoted_alone() -> dict[str, str]:
    """Failing dev logs whose root is an exception line: their message without the class."""
    found: dict[str, str] = {}
    for path in sorted(DEV.glob("*/*.log")):
        if path.parent.name == HEALTHY:
            continue
        report = classify_file(path)
        if report.kind == HEALTHY or report.root is None:
            continue
        line = _EXCEPTION_LINE.match(parse_line(report.root.text.strip()).message.strip())
        if line is not None:
            found[f"{path.parent.name}/{path.name}"] = line.group("message")
    return found


def test_a_failure_quoted_without_its_class_is_not_called_healthy() -> None:
    quoted = _quoted_alone()
    assert len(quoted) >= 150, len(quoted)  # the dev corpus holds that many: the test reads what it claims
    healthy = {name for name, message in quoted.items() if classify_lines([message]).kind == HEALTHY}
    assert healthy <= set(QUOTED_ALONE_READS_HEALTHY), sorted(healthy - set(QUOTED_ALONE_READS_HEALTHY))
    print(f"\n{len(quoted)} root exception lines quoted without their class: {len(healthy)} read healthy")


def test_the_list_holds_only_logs_that_still_need_it() -> None:
    quoted = _quoted_alone()
    stale = [name for name in QUOTED_ALONE_READS_HEALTHY
             if name not in quoted or classify_lines([quoted[name]]).kind != HEALTHY]
    assert not stale, stale
