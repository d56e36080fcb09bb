"""The general mechanisms that named round 15's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the shape beside it, so that a mechanism that fires on
everything, or on nothing, fails here."""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.passage_repeats import passage_repeats_under_markup
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID
from chainlit_app.diagnostics.table_layout import is_table_line

# PR #27776: evalscope's benchmark summary, 100 of 100 requests succeeded (its border repeats between rows)
BENCH_TABLE = [
    "Benchmarking summary:",
    "+-----------------------------------+-----------+",
    "| Key                               |     Value |",
    "+===================================+===========+",
    "| Time taken for tests (s)          |   44.856  |",
    "+-----------------------------------+-----------+",
    "| Total requests                    |  100      |",
    "+-----------------------------------+-----------+",
    "| Succeed requests                  |  100      |",
    "+-----------------------------------+-----------+",
    "| Failed requests                   |    0      |",
    "+-----------------------------------+-----------+",
]


def test_a_printed_tables_repeated_border_is_layout_not_a_loop() -> None:
    assert is_table_line("+-----------------------------------+-----------+")
    assert is_table_line("| Succeed requests                  |  100      |")
    assert is_table_line("|:---|---:|")
    report = classify_lines(BENCH_TABLE)
    assert report.kind == HEALTHY and report.findings == []
    # the shape beside it: a plain printed line repeated is still a model's loop
    loop = "The answer is the answer is the answer is"
    assert not is_table_line(loop) and not is_table_line("a | pipe inside a sentence")
    assert classify_lines(["Benchmarking summary:", loop, loop, loop]).kind == "degenerate_output"


def test_a_pending_placement_group_is_a_start_up_that_waits() -> None:
    # vLLM #12670: `ray status` while two H100 nodes cannot hold the engine's placement group
    demand = (" {'node:10.0.0.1': 0.001, 'GPU': 1.0} * 1, {'GPU': 1.0} * 15 (PACK): 1+ pending placement groups")
    report = classify_lines(["Demands:", demand])
    assert report.kind == "slow_or_stalled" and report.root is not None
    assert report.root.rule == "ray_resources_unavailable" and report.root.role == "weak"
    # the shape beside it: the same status with nothing pending
    assert classify_lines(["Demands:", " (no resource demands)", "Pending:", " (no pending nodes)"]).kind == HEALTHY


def test_a_200_with_zero_bytes_is_an_empty_answer() -> None:
    # Cocoon #49: the worker proxy's record of a streamed answer that reached the client empty
    report = classify_lines(["HTTP 200 size=0", "worker request: unprocessed data in answer: bytes=481"])
    assert report.kind == "empty_output" and report.root is not None
    assert report.root.rule == "status_200_zero_bytes"
    assert classify_lines(["HTTP 200 size=1532"]).kind == HEALTHY


# GPTQModel #2699: the answer as posted (the poster's '....' kept), one passage three times with its tags moved
PAUSE_TAGS = (
    "你<strong>知道</strong>[Pause_3]<strong>那个</strong>熊猫吃着吃着[Pause_3]就停了你知道，它就<prolong>这样</prolong>，"
    "眼神<strong>涣散</strong>的看着我们，然后看了一会[Pause_3]就继续吃，我<strong>就</strong>[Pause_3]感觉它想的是，哎呀，"
    "吃吧，还有<strong>2</strong>零多公斤呢。<strong>知道</strong>那个<strong>熊猫</strong>[Pause_3]吃着吃着就[Pause_3]停了"
    "你知道，它就这样，眼神<strong>涣散</strong>的看着我们，然后<strong>看</strong>了一会就继续吃，我就感觉它想的是，哎呀，吃吧，"
    "还有<strong>2</strong>零多公斤呢。<strong>知道</strong>那个<strong>熊猫</strong>[Pause_3]吃着吃着就停了你知道，它就"
    "[Pause_3]这样，眼神<strong>涣散</strong>的看着我们，然后[Pause_3]<strong>看</strong>了一会就继续吃...."
)


def test_a_passage_said_again_with_its_tags_moved_loops() -> None:
    assert passage_repeats_under_markup(PAUSE_TAGS)
    report = classify_lines([PAUSE_TAGS])
    assert report.kind == "degenerate_output"
    # the shapes beside it: the passage once with its tags, and the same clauses repeated with no tags at all
    once = PAUSE_TAGS.split("。")[0] + "。"
    assert not passage_repeats_under_markup(once)
    assert classify_lines([once]).kind == HEALTHY
    assert not passage_repeats_under_markup("<b>Note</b>: the model, the model, the model is ready. " * 1)


def test_a_removed_engine_attribute_called_from_another_project_is_an_api_change() -> None:
    # FastChat #3704: FastChat's vllm_worker reading V0's `.engine` from V1's AsyncLLM
    lines = [
        "2025-03-24 22:04:27 | ERROR | stderr | Traceback (most recent call last):",
        '2025-03-24 22:04:27 | ERROR | stderr |   File "/p/FastChat/fastchat/serve/vllm_worker.py", line 57, in '
        "__init__",
        "2025-03-24 22:04:27 | ERROR | stderr |     self.tokenizer = llm_engine.engine.tokenizer",
        "2025-03-24 22:04:27 | ERROR | stderr | AttributeError: 'AsyncLLM' object has no attribute 'engine'",
    ]
    report = classify_lines(lines)
    assert report.kind == "version_mismatch" and report.root is not None
    assert report.root.rule == "engine_attribute_removed"
    # the shape beside it: an AttributeError on an object of the caller's own is not vLLM's API
    own = [*lines[:-1], lines[-1].replace("'AsyncLLM'", "'VLLMWorker'")]
    assert RULES_BY_ID["engine_attribute_removed"].pattern.search(own[-1]) is None
    assert classify_lines(own).kind != "version_mismatch"


def test_metals_insufficient_memory_is_out_of_memory() -> None:
    # vllm-metal #274: the engine core aborts under guidellm's load on a Mac
    line = ("libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
            "execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)")
    report = classify_lines([line])
    assert report.kind == "out_of_memory" and report.root is not None and report.root.rule == "gpu_oom"
