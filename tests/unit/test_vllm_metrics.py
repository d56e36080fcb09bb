"""The test suite's reading of vLLM's /metrics: an abort is a request that started and neither runs nor
finished on its own (vLLM 0.32 moves no counter for a client's abort)."""

from __future__ import annotations

from tests.vllm_metrics import parse_request_counts

PAGE = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine="0",model_name="demo"}} {running}
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{{engine="0",model_name="demo"}} {generated}
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{{engine="0",finished_reason="stop",model_name="demo"}} {stop}
vllm:request_success_total{{engine="0",finished_reason="length",model_name="demo"}} {length}
vllm:request_success_total{{engine="0",finished_reason="abort",model_name="demo"}} {abort}
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{{engine="0",le="+Inf",model_name="demo"}} {first}
vllm:time_to_first_token_seconds_count{{engine="0",model_name="demo"}} {first}
vllm:time_to_first_token_seconds_sum{{engine="0",model_name="demo"}} 0.5
"""


def page(running: int = 0, generated: int = 0, stop: int = 0, length: int = 0, abort: int = 0,
         first: int = 0) -> str:
    return PAGE.format(running=running, generated=generated, stop=stop, length=length, abort=abort, first=first)


def test_a_request_that_left_without_finishing_counts_as_aborted() -> None:
    before = parse_request_counts(page(stop=1, first=1, generated=10))
    running = parse_request_counts(page(running=1, stop=1, first=2, generated=20))
    after = parse_request_counts(page(stop=1, first=2, generated=22))
    assert (running.running, after.running, after.generated_tokens) == (1, 0, 22)
    assert running.aborted_since(before) == 0, "a running request is not aborted"
    assert after.aborted_since(before) == 1


def test_a_request_that_finished_on_its_own_is_not_aborted() -> None:
    before = parse_request_counts(page(stop=1, first=1))
    after = parse_request_counts(page(stop=1, length=1, first=2, generated=512))
    assert after.finished_normally - before.finished_normally == 1
    assert after.aborted_since(before) == 0


def test_the_abort_label_is_not_a_normal_finish() -> None:
    """Should a vLLM count a client's abort under finished_reason="abort", it is still an abort."""
    before = parse_request_counts(page(first=1, stop=1))
    after = parse_request_counts(page(first=2, stop=1, abort=1))
    assert after.finished == {"stop": 1, "length": 0, "abort": 1}
    assert after.aborted_since(before) == 1
