"""The general mechanisms the fourth generalising pass added, each on the real lines it was written from
(tests/data/logs/dev, sources in dev/SOURCES.md) and on a near healthy neighbour that must stay quiet."""

from __future__ import annotations

from chainlit_app.diagnostics.answer_loops import is_looping
from chainlit_app.diagnostics.lineformat import unwrap_docker_json
from chainlit_app.diagnostics.whole_log import classify_lines

_COMPOSE_JSON = (
    'model-download  | {"event": "raise KeyError(key)", "timestamp": "2026-04-29T04:20:41.228671Z", '
    '"service_name": "model_download"}'
)


def test_a_structlog_record_after_a_compose_column_is_its_message() -> None:
    assert unwrap_docker_json(_COMPOSE_JSON) == "raise KeyError(key)"
    # a JSON body without a level or a time (an API response) stays as it was
    body = '{"id": "cmpl-1", "object": "text_completion", "message": "hello"}'
    assert unwrap_docker_json(body) == body


def test_a_keyerror_in_transformers_auto_mappings_is_a_too_old_transformers() -> None:
    frames = [
        'File \\"/opt/.venv/lib/python3.12/site-packages/transformers/models/auto/configuration_auto.py\\", '
        'line 914, in __getitem__',
        "raise KeyError(key)",
        "KeyError: 'qwen3_vl'",
    ]
    lines = ["Traceback (most recent call last):"] + [
        f'model-download  | {{"event": "{f}", "timestamp": "2026-04-29T04:20:41Z"}}' for f in frames]
    report = classify_lines(lines)
    assert report.kind == "version_mismatch", report.root
    assert report.root is not None and report.root.rule == "transformers_auto_mapping_key"


def test_one_token_id_over_and_over_is_degenerate_not_empty() -> None:
    line = ("[CompletionOutput(index=0, text='', token_ids=[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "
            "cumulative_logprob=None, logprobs=None, finish_reason=length, stop_reason=None)]")
    assert classify_lines([line]).kind == "degenerate_output"
    mixed = line.replace("[0, 0, 0, 0, 0, 0, 0, 0,", "[0, 5, 0, 0, 0, 0, 0, 0,")
    assert classify_lines([mixed]).kind == "empty_output"  # an empty text from varied tokens stays empty


def test_a_long_text_of_three_distinct_tokens_loops() -> None:
    answer = '"ــ |ــ |ــ | | |ــ | | |ــ |ــ | | | | | | | | | |ــ | | |ــ | | | | | | | | | | | | | | | | |"'
    assert is_looping(answer)
    assert not is_looping("| a | b |")  # a short table row is no loop
    assert not is_looping("\n".join(["0 0 0 0 0 0"] * 5))  # a zero matrix someone asked for is no loop


def test_an_engine_holding_work_that_the_next_stats_line_does_not_count_is_stalled() -> None:
    unfinished = ("(EngineCore_0 pid=2461251) DEBUG 04-14 08:14:10 [core.py:416] EngineCore loop active - local "
                  "unfinished: True, finished: False.")
    stats = ("INFO 04-14 08:14:17 [loggers.py:87] Engine 000: Avg prompt throughput: {p} tokens/s, Avg generation "
             "throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache "
             "hit rate: 0.0%")
    start = ["INFO:     Application startup complete."]
    assert classify_lines([*start, unfinished, stats.format(p="0.0")]).kind == "slow_or_stalled"
    # the request's prompt was processed in the interval: it was counted, nothing is stuck
    assert classify_lines([*start, unfinished, stats.format(p="12.3")]).kind == "healthy"
    # another engine's idle report says nothing of engine 0's request
    other = stats.format(p="0.0").replace("Engine 000", "Engine 001")
    assert classify_lines([*start, unfinished, other, stats.format(p="12.3")]).kind == "healthy"


def test_an_engine_core_the_client_saw_die_had_started() -> None:
    # core_client's monitor starts only after every engine core reported ready: a death it sees is a crash
    line = ("2025-11-02 13:17:04,315 - vllm.v1.engine.core_client - ERROR - Engine core proc EngineCore_DP0 died "
            "unexpectedly, shutting down client.")
    assert classify_lines([line]).kind == "engine_error"


def test_a_traceback_through_the_v0_engine_loop_is_serving() -> None:
    prefix = "ERROR 04-10 11:26:01 engine.py:140] "
    lines = [prefix + x for x in (
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.10/site-packages/vllm/engine/multiprocessing/engine.py", line 138, in start',
        "    self.run_engine_loop()",
        '  File "/usr/lib/python3.10/site-packages/vllm/engine/multiprocessing/engine.py", line 201, in '
        "run_engine_loop",
        "RuntimeError: The Inner error is reported as above.",
    )]
    assert classify_lines(lines).kind == "engine_error"
