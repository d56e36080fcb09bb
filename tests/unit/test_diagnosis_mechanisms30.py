"""The general mechanisms of the round-30 pass (issue 11: holdout round 30's misses, moved to dev), each on the
real lines it was written from and each beside the shape that must keep its reading.

Lines whose shape no reading knew: vLLM's logger location left as the only prefix, an exception group's `|`
gutter, a JavaScript client's `400 <message>`, Rust's `error sending request for url`; a tool-call parser's frames
and logger run only while serving; and the innermost source line counts for what it calls, not for the names it
passes along.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.events import Traceback
from chainlit_app.diagnostics.lineformat import parse_line


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


_PARSER_FAILURE = [  # vLLM #31379 (GLM-4.7's tool-call parser; the poster cut the level and the time)
    " [glm4_moe_tool_parser.py:123] Failed to extract tool call spec",
    "[glm4_moe_tool_parser.py:123] Traceback (most recent call last):",
    ' [glm4_moe_tool_parser.py:123]   File "/dist-packages/vllm/tool_parsers/glm4_moe_tool_parser.py", line 104, in '
    "extract_tool_calls",
    " [glm4_moe_tool_parser.py:123]     pairs = self.func_arg_regex.findall(tc_args)",
    "",
    "[glm4_moe_tool_parser.py:123] TypeError: expected string or buffer",
]


def test_vllms_logger_location_as_the_only_prefix() -> None:
    parsed = parse_line("ERROR [glm4_moe_tool_parser.py:123] Failed to extract tool call spec")
    assert (parsed.level, parsed.logger, parsed.message) == ("ERROR", "glm4_moe_tool_parser.py:123",
                                                             "Failed to extract tool call spec")
    assert parse_line(" [serving_chat.py:9] x").logger == "serving_chat.py:9"
    # a bracketed word that is no file location stays in the message
    assert parse_line("[setup.py] no line number").message == "[setup.py] no line number"
    assert _root(_PARSER_FAILURE)[0] == "engine_error"


def test_a_tool_parsers_frames_and_logger_run_only_while_serving() -> None:
    # vLLM #32213: the same failure with its level kept, no marker of the phase in the excerpt
    lines = ["ERROR [glm4_moe_tool_parser.py:123] Failed to extract tool call spec",
             "Traceback (most recent call last):",
             '  File "/usr/local/lib/python3.12/dist-packages/vllm/tool_parsers/glm4_moe_tool_parser.py", line 104, '
             "in extract_tool_calls",
             "    pairs = self.func_arg_regex.findall(tc_args)",
             "TypeError: expected string or buffer"]
    assert classify_lines(lines).kind == "engine_error"
    # an unnamed error while loading stays a start-up failure
    assert classify_lines(["ERROR 01-02 10:00:00 [loader.py:10] weights file truncated"]).kind == "startup_failure"


_GROUP = [  # vLLM #39683 (the Responses API's stream handler, Python 3.11's exception group gutter)
    "(APIServer pid=3566526)   + Exception Group Traceback (most recent call last):",
    "(APIServer pid=3566526)   +-+---------------- 1 ----------------",
    "(APIServer pid=3566526)     | Traceback (most recent call last):",
    "(APIServer pid=3566526)     |   File \"/mnt/data4/jxy/vllm/vllm/entrypoints/openai/responses/serving.py\", line "
    "1344, in _process_simple_streaming_events",
    "(APIServer pid=3566526)     |     parser = self.parser(tokenizer, request.tools) if self.parser else None",
    "(APIServer pid=3566526)     |              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "(APIServer pid=3566526)     | TypeError: MiniMaxM2Parser.__init__() takes 2 positional arguments but 3 were given",
]


def test_an_exception_groups_tracebacks_behind_their_gutter() -> None:
    report = classify_lines(_GROUP)
    assert report.kind == "engine_error"
    assert report.root is not None and "MiniMaxM2Parser" in report.root.text
    # a table's rows keep their gutter: an evaluation's results are no traceback
    table = ["|Tasks|Version|Filter|n-shot|Metric|Value|", "|gsm8k|3|flexible-extract|5|exact_match|0.80|",
             "| gsm8k | 3 | strict-match | 5 | exact_match | 0.72 |"]
    assert classify_lines(table).kind == HEALTHY


def test_the_source_line_counts_for_what_it_calls_not_for_the_names_it_passes() -> None:
    passed = Traceback(first_line=1, frames=[("vllm/entrypoints/openai/responses/serving.py", "handler")],
                       last_code="parser = self.parser(tokenizer, request.tools) if self.parser else None")
    assert "tokenizer" not in passed.raised_in
    called = Traceback(first_line=1, frames=[("vllm/engine/llm_engine.py", "_decode_sequence")],
                       last_code="read_offset) = detokenize_incrementally(")
    assert "detokenize_incrementally" in called.raised_in
    imported = Traceback(first_line=1, frames=[("vllm/entrypoints/cli/benchmark/serve.py", "<module>")],
                         last_code="from vllm.benchmarks.serve import add_cli_args, main")
    assert "from vllm.benchmarks.serve" in imported.raised_in


def test_a_javascript_clients_status_and_message() -> None:
    # vLLM #38837 (Gemma 4's tool parser failing on every request, as the client saw it)
    line = "400 Gemma4ToolParser.__init__() takes 2 positional arguments but 3 were given"
    assert classify_lines([line]).kind == "engine_error"
    # its message still decides when a rule names it
    assert _root(["404 The model `qwen` does not exist."]) == ("model_not_found", "model_does_not_exist")
    assert classify_lines(["400 status code (no body)"]).kind != HEALTHY
    # a count that starts with the same digits is no status
    assert classify_lines(["500 requests completed in 12 s"]).kind == HEALTHY


def test_rusts_words_for_a_request_that_got_no_answer() -> None:
    # openai/codex #2257 (Codex calling Ollama's default port instead of the vLLM server configured)
    line = "🖐 error sending request for url (http://localhost:11434/v1/chat/completions)"
    assert _root([line]) == ("connection", "connection_refused")
