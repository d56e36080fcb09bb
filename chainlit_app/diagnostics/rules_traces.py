"""Failures that a log tells only by a trace they leave, not by an error line: a client whose whole error output is
the one word 'unauthorized', tool-call arguments whose non-Latin text arrives as escape codes, and vLLM's dump of
the input of a model step that failed.

Learnt from holdout round 19 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms19.py`).
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

TRACE_RULES: tuple[Rule, ...] = (
    rule(
        "bare_unauthorized",
        Kind.AUTH,
        # a client that prints only the status phrase of a 401 as its error (Continue, a gateway's plain-text
        # body): a line that is that word and nothing else (an optional 401 beside it), so a sentence that only
        # mentions authorisation is no match
        r"^\W*(?:401\W*)?unauthori[sz]ed\W*(?:401\W*)?$",
        hint=Msg("rule.reported_status_auth"),
        examples=("unauthorized", "401 Unauthorized"),  # Continue #11748 (Ollama cloud, qwen3-coder)
    ),
    rule(
        "tool_arguments_escaped",
        Kind.DECODE_ERROR,
        # a tool call's arguments (a JSON string inside the response's JSON) whose non-Latin characters arrive as
        # \uXXXX codes: the server serialised the arguments with ASCII escapes, so the caller that reads the
        # string once sees codes where the user's words were; two codes in a row, above Latin-1, inside the
        # value of "arguments"
        r"""['"]arguments['"]\s*:\s*['"][^\n]*?\\\\u(?:0[1-9a-f]|[1-9a-f][0-9a-f])[0-9a-f]{2}"""
        r"\\\\u(?:0[1-9a-f]|[1-9a-f][0-9a-f])[0-9a-f]{2}",
        role="weak",
        hint=Msg("rule.tool_arguments_escaped"),
        examples=(
            # QwenLM/Qwen3 #1009 (Qwen2.5-72B on vLLM 0.6.3, hermes tool parser)
            '                    "arguments": "{\\"location\\": \\"\\\\u5317\\\\u4eac, \\\\u4e2d\\\\u56fd\\", '
            '\\"unit\\": \\"celsius\\"}",',
        ),
    ),
    rule(
        "failed_step_dumped",
        Kind.ENGINE_ERROR,
        # vLLM V0's model runner writes the inputs of a model step to /tmp/err_execute_model_input_*.pkl only
        # from its exception handler: the line itself says a step of the engine failed (the error follows, or
        # is lost when the pickling fails too)
        r"Writing input of failed execution to|Failed to pickle inputs of failed execution",
        hint=Msg("rule.failed_step_dumped"),
        examples=(
            # vLLM #10389 (0.6.4.post1, AWQ Marlin, prefix caching with chunked prefill)
            "INFO 11-16 10:37:53 model_runner_base.py:120] Writing input of failed execution to "
            "/tmp/err_execute_model_input_20241116-103753.pkl...",
            "WARNING 11-16 10:37:53 model_runner_base.py:143] Failed to pickle inputs of failed execution: CUDA "
            "error: an illegal memory access was encountered",
        ),
    ),
)
