"""Rules that read the shape of a message rather than one program's words.

- A prompt said to be too long next to a maximum (`Prompt is too long, max tokens supported is 226 or less,
  got 303`): whoever raises it, a request larger than what the model takes is context_length.
- An exception whose message quotes mojibake: UTF-8 bytes read as Latin-1 or cp1252 (`ï½` + byte 0x9C, the
  fullwidth bar of DeepSeek's special tokens; `â` + bytes 0x96 0x81, SentencePiece's word boundary). A token piece
  looked up under text decoded with the wrong codec is a decoding failure, not an unknown engine error.
- Memory a server could not get, in its own words (`Not enough memory`), and a pod Kubernetes cannot place
  for want of a GPU (`Insufficient nvidia.com/gpu`).
- A 5xx next to its reason phrase in any client's words (a browser console, Spring, .NET, Rust).
- A process killed by SIGKILL, whoever says so: a shell's job notice for any command, exit code 137.
- Windows' socket errors by their code (`[WinError 10061]`), in whichever language Windows wrote the words
  (`由于目标计算机积极拒绝，无法连接。`): the code, not the words, says refused, reset or timed out.

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

# A UTF-8 lead byte read as Latin-1 (Â..ï) followed by a continuation byte read as Latin-1 (U+0080-U+00BF) or
# as cp1252 (its letters and punctuation for 0x80-0x9F).
_MOJIBAKE_PAIR = "[\u00c2-\u00ef][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc" \
                 "\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]"
_TWO_PAIRS = rf"[^\n]{{0,300}}?{_MOJIBAKE_PAIR}[^\n]{{0,40}}?{_MOJIBAKE_PAIR}"

SHAPE_RULES: tuple[Rule, ...] = (
    rule(
        "prompt_too_long_for_maximum",
        Kind.CONTEXT_LENGTH,
        r"\b(?:prompt|input|sequence|text|request|message)s? (?:is|was|are) too long\b[^\n]{0,80}\bmax(?:imum)?\b"
        r"[^\n]{0,30}\b(?:tokens?|length|len|context)\b",
        hint=Msg("rule.context_too_long"),
        examples=(
            "ValueError: Prompt is too long, max tokens supported is 226 or less, got 303",  # CogVideoXWrapper #204
        ),
    ),
    rule(
        "not_enough_memory",
        Kind.OUT_OF_MEMORY,
        # any server's own words for memory it could not get (SGLang's KV pool, a device, the GPU)
        r"\bNot enough (?:GPU |device |CUDA |KV[ -]cache |free )?memory\b",
        hint=Msg("rule.gpu_oom"),
        examples=("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",),  # SGLang #4330
    ),
    rule(
        "pod_unschedulable_accelerator",
        Kind.STARTUP_FAILURE,
        # Kubernetes cannot place the server's pod: no node has the GPU (or NPU) it asks for
        r"Insufficient [\w.-]*/(?:gpu|npu)\b",
        role="weak",
        hint=Msg("rule.pod_unschedulable_accelerator"),
        examples=(
            "FailedScheduling  53s (x3 over 119s)  default-scheduler   0/2 nodes are available: 2 Insufficient "
            "nvidia.com/gpu, 2 node(s) didn't match node selector.",  # KServe #794
        ),
    ),
    rule(
        "status_with_reason_phrase",
        Kind.ENGINE_ERROR,
        # a 5xx next to its reason phrase, whoever prints it: a browser console's 'POST … 500 (Internal Server
        # Error)', Spring's and .NET's '500 Internal Server Error', Rust's '(500 Internal Server Error)': any 5xx
        # an engine error (weak), as uvicorn's 5xx access lines are, which keep their own rule ('" 500 …' is not
        # matched here); a line whose words another rule reads first (a 503 a client reports in its own words)
        # keeps that rule's kind
        "|".join(rf'(?<!" )\b5\d\d \(?{phrase}\b' for phrase in
                 ("Internal Server Error", "Bad Gateway", "Service Unavailable", "Gateway Time-?out")),
        role="weak",
        hint=Msg("rule.reported_status_500"),
        examples=("POST http://localhost:5173/api/llmcall 500 (Internal Server Error)",),  # bolt.diy #1550
    ),
    rule(
        "killed_exit_137",
        Kind.OUT_OF_MEMORY,
        # SIGKILL, whoever reports it: a shell's job notice for any command ('line 28:  7 Killed  cmd'), docker
        # compose's and Kubernetes' exit code 137 (128 + 9), usually the OOM killer
        r"\bline \d+:\s+\d+\s+Killed\s+\S|exited with code 137\b|\bexit (?:status|code):? 137\b|"
        r"\bExit Code:\s*137\b",
        role="weak",
        hint=Msg("rule.killed"),
        examples=(
            "scalellm          | ./entrypoint.sh: line 28:     7 Killed                  LD_LIBRARY_PATH=/app/lib:"
            "$LD_LIBRARY_PATH /app/bin/scalellm $ARGS \"$@\"",
            "scalellm exited with code 137",
        ),  # ScaleLLM #38
    ),
    rule(
        "winsock_connection_error",
        Kind.CONNECTION,
        # Windows' socket errors by their code, whatever language Windows printed the words in: 10053/10054
        # a connection aborted or reset, 10060 a connect that timed out, 10061 refused
        r"\[WinError 100(?:53|54|60|61)\]|\[Errno 100(?:53|54|60|61)\]",
        hint=Msg("rule.connection_refused"),
        examples=(
            # Langchain-Chatchat #2985
            "2024-02-17 10:18:41,010 - utils.py[line:95] - ERROR: ConnectError: error when post "
            "/llm_model/list_running_models: [WinError 10061] 由于目标计算机积极拒绝，无法连接。",
        ),
    ),
    rule(
        "exception_quotes_mojibake",
        Kind.DECODE_ERROR,
        rf"Error: {_TWO_PAIRS}|Exception: {_TWO_PAIRS}",
        hint=Msg("rule.unicode_decode"),
        examples=(
            "KeyError: '<ï½\x9cendâ\x96\x81ofâ\x96\x81sentenceï½\x9c>'",  # ex-ui #22
        ),
    ),
)
