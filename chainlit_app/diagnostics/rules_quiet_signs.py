"""Rules for failures whose log holds no error line at all, only a sign in plain words or figures.

- Clients' own sentences for an empty answer (Cline: 'The provider returned an empty or unparsable response',
  Roo Code: 'did not provide any assistant messages', a server's 'empty content: ... the token budget went to
  reasoning'): empty_output, as `client_empty_answer` reads other wordings.
- An app's own debug lines for an answer whose content came back empty ('EMPTY CONTENT - checking reasoning
  fallback', 'Empty response details: { finish_reason: 'stop' ...'): the model stopped normally with nothing
  said, whatever the app goes on to call it (a retry labelled a network error): empty_output.
- A torch.compile time far beyond minutes (`torch.compile takes 2222.52 s in total`): healthy starts print
  seconds to a few minutes, so a figure above `COMPILE_STALL_SECONDS` is a start that stalled.
- One running request holding nearly the whole KV cache (`Running: 1 reqs ... GPU KV cache usage: 97.3%`):
  a single answer that never stops fills the cache; the server freezes on it (read by `stats.py`, which
  sees the stats lines).
- torchao skipping its C++ extensions because the installed torch is not the one it was built for:
  version_mismatch, in a log that shows nothing else (a `vllm --help` that printed only this after an install);
  a server that then became ready disproves it (torchao's Python code still loads; vLLM needs its kernels only
  for torchao quantization, and that fails in its own words).
- A printed output of nothing but repeated '<' (vLLM 0.2.2's `< <`): garbage, degenerate_output.

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

import re

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

COMPILE_STALL_SECONDS = 900.0  # 15 minutes: the corpus's healthy starts compile in under a minute
KV_FULL_PERCENT = 95.0

_COMPILE_SECONDS = re.compile(r"\b(?:torch\.compile|Compiling a graph\b.*?) takes (\d+(?:\.\d+)?) s\b")
_KV_ONE_RUNNING = re.compile(r"\bRunning: 1 reqs?\b.*?\bGPU KV cache usage: (\d+(?:\.\d+)?)%")


def compile_far_beyond_minutes(message: str) -> bool:
    """True when a torch.compile time printed is longer than a healthy start ever takes."""
    found = _COMPILE_SECONDS.search(message)
    return found is not None and float(found.group(1)) > COMPILE_STALL_SECONDS


def one_request_fills_cache(message: str) -> bool:
    """True when a single running request holds nearly all of the GPU KV cache."""
    found = _KV_ONE_RUNNING.search(message)
    return found is not None and float(found.group(1)) >= KV_FULL_PERCENT


QUIET_SIGN_RULES: tuple[Rule, ...] = (
    rule(
        "client_words_for_empty_answer",
        Kind.EMPTY_OUTPUT,
        # a client's, gateway's or app's own words that the model's answer came back without text: one idea
        # in the wordings met so far (coding agents, FastGPT's SSE error and its error code, an app's debug lines)
        r"\bempty or unparsable response\b|\bdid not provide any assistant messages?\b|"
        r"^\s*empty (?:content|answer|response|output)\s*:|\btoken budget went to (?:reasoning|thinking)\b|"
        r"\b(?:LLM|model|AI)[ _](?:model[ _])?response[ _](?:is[ _]|was[ _])?empty\b|"
        r"\bempty[ _](?:LLM|model)[ _]response\b|"
        r"\bEMPTY CONTENT\W+checking reasoning fallback\b|\bEmpty response details\W+.*\bfinish_reason\W+stop\b|"
        # a structured log's event for it, with the finish reason it came with; an agent's words for the finish
        r"\b\w*empty_response\b[^\n]{0,120}\bfinish_reason=\w|"
        r"\b(?:assistant|model|LLM) returned (?:an )?empty (?:stop|response|answer|reply|message)\b|"
        # a client counting what came back: reasoning, and no answer after it (llm-wiki #743)
        r"\breasoning\b[^\n]{0,80}\bbut no (?:actual )?(?:response |answer )?content\b|"
        # a server's own words that the reasoning never ended, so nothing after it is the answer (ds4 #1088)
        r"\b(?:thinking|reasoning) (?:was |is )?(?:not|never) closed\b",
        hint=Msg("rule.client_empty_answer"),
        examples=(
            "Invalid API Response: The provider returned an empty or unparsable response.",  # cline #10238
            "Unexpected API Response: The language model did not provide any assistant messages.",  # roo #1089
            "empty content: the answer never started because the token budget went to reasoning",
            "2024-08-05 00:42:54 [Error] 2024-08-04 16:42:54 sse error: LLM model response empty",  # FastGPT #2245
            '  "message": "chat:LLM_model_response_empty"',  # FastGPT #3882
            "[DEBUG][LLM] ⚠️ EMPTY CONTENT - checking reasoning fallback",  # SpeakMCP PR #793
            "[DEBUG][LLM] Empty response details: { finish_reason: 'stop', ... }",  # SpeakMCP PR #793
            # markdown-vault-mcp #919 (a reasoning budget spent), oh-my-pi #7465 (Ollama's done_reason 'load')
            "WARNING markdown_vault_mcp.summarizer: summarize_empty_response model=gpt-5-mini finish_reason=length",
            "Assistant returned empty stop after retry cap; try switching models",
            "Analysis failed: Model produced 14,735 characters of reasoning / chain-of-thought, but no actual "
            "response content.",  # llm-wiki #743
            "ds4-server: thinking not closed, ignoring incomplete GLM tool calls in reasoning",  # ds4 PR #1088
        ),
    ),
    rule(
        "compile_stalled_start",
        Kind.SLOW_OR_STALLED,
        r"\btorch\.compile takes \d|\bCompiling a graph\b.*\btakes \d",
        hint=Msg("rule.compile_stalled_start"),
        check=compile_far_beyond_minutes,
        examples=(
            "(EngineCore_DP0 pid=6448) INFO 02-12 15:00:36 [monitor.py:34] torch.compile takes 2222.52 s in total",
        ),
    ),
    rule(
        "cpp_extensions_need_newer_torch",
        Kind.VERSION_MISMATCH,
        r"\bSkipping import of cpp extensions due to incompatible torch version\b|"
        r"\bPlease upgrade to torch >= ?\d[\w.]* \(found \d",
        hint=Msg("rule.cpp_extensions_need_newer_torch"),
        disproved_by_serving="torchao",
        examples=(
            "Skipping import of cpp extensions due to incompatible torch version. Please upgrade to torch >= 2.11.0 "
            "(found 2.10.0+cu128).",  # unsloth #4851
        ),
    ),
    rule(
        "output_of_angle_brackets",
        Kind.DEGENERATE_OUTPUT,
        r"^\s*< <(?:\s+<)*\s*$",
        hint=Msg("rule.degenerate_output"),
        examples=("< <",),  # vllm #1929 (0.2.2)
    ),
)
