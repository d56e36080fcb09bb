"""The cheap first look at each line: most lines of a busy log carry no evidence and must cost little.

A line reaches the rules only when it contains one of the needles (lower-case literals that every rule's
pattern needs, plus the words that mark tracebacks, errors, bodies, phases and stats). Needles holding a
whole uncommon word are checked with one set intersection of the line's words.
"""

from __future__ import annotations

import re

from .exception_shapes import UNTYPED_PYTHON_NEEDLES, UNTYPED_TORCH_MESSAGES
from .grpc_status import NEEDLES as GRPC_STATUS_NEEDLES
from .rule_tables import RULES

# Per-request bookkeeping lines: the bulk of a busy log. "received request" lines may quote the user's
# prompt (older vLLMs log it at INFO), so they must never reach the rules: a prompt about "CUDA out of
# memory" is not an out-of-memory error.
BUSY_LINES = ('" 200 ok', "added request", "finished request", "aborted request", "received request")
# Lines that echo a request or the model's answer: what they quote decides nothing.
ECHO_LINES = ("Received request", "Generated response", "prompt: '", 'prompt: "', "Logging request")

_EXTRA_NEEDLES = (
    "traceback (most recent call last)",
    "stack (most recent call first)",
    'file "',
    '", line',  # the tail of a frame a paste wrapped
    "”,line",  # a frame whose quotes an editor curled
    "file ~",
    "throughput",
    "shared memory broadcast",
    "unfinished: true",
    "application startup complete",
    "uvicorn running",
    "starting vllm",
    "processed prompts",
    "added request",
    "received request",
    "http/",
    "shutdown",
    "shutting down",
    "received signal",
    "started server process",
    "api server version",
    "non-default args",
    "starting to load model",
    "loading weights",
    "attempted to load weight",
    "model loading took",
    "kv cache size",
    "init engine",
    "available routes",
    "error",
    "fatal",
    "sigsegv",
    "sigabrt",
    "segmentation",
    "segfault",
    "vllm:num_requests_",
    "core dumped",
    "bus error",  # a shell's notice of a job a fault killed (events._FATAL)
    "illegal instruction",
    "aborted",
    "floating point exception",
    "signal",
    "exception",
    "exc.",  # torch._dynamo.exc.BackendCompilerFailed: a library's exception module
    "{",
    "completionoutput(",
    "completion(id=",  # the openai library's printed ChatCompletion / Completion (answer_reprs.py)
    "invalid pointer",
    "double free",
    "terminate called",
    "panic: ",  # Go's runtime
)


def _minimal(needles: set[str]) -> tuple[str, ...]:
    """Drop needles that contain a shorter needle: the shorter one already lets such lines through."""
    ordered = sorted(needles, key=len)
    kept: list[str] = []
    for needle in ordered:
        if not any(k in needle for k in kept):
            kept.append(needle)
    return tuple(kept)


PREFILTER_NEEDLES = _minimal({n for r in RULES for n in r.needles} | set(_EXTRA_NEEDLES)
                             | {words for words, _type in UNTYPED_TORCH_MESSAGES} | set(UNTYPED_PYTHON_NEEDLES)
                             | set(GRPC_STATUS_NEEDLES))

# Faster form of the same test: a needle that holds a whole word inside it (e.g. "already" in
# "address already in use") occurs only in lines that contain that word as a token, and one set
# intersection checks all such words at once. Words common in healthy logs are not used as gates.
_WORD = re.compile(r"\w+")
_COMMON_TEXT = """a an and are as at be by for from in is it not of on or the to with api appear attention available
    background cache chat client completions content default detected engine error hit info kernel load
    loop max_model_len maximum memory model out platform prefix process request route server size template
    tokens transformers version vllm weights"""
_COMMON_WORDS = frozenset(_COMMON_TEXT.split())


def _split_gates(needles: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    words: set[str] = set()
    substrings: list[str] = []
    for needle in needles:
        inner = [
            m.group()
            for m in _WORD.finditer(needle)
            if m.start() > 0 and m.end() < len(needle) and len(m.group()) >= 3
        ]
        inner = [w for w in inner if w not in _COMMON_WORDS]
        if inner:
            words.add(max(inner, key=len))
        else:
            substrings.append(needle)
    return frozenset(words), tuple(substrings)


_GATE_WORDS, _GATE_SUBSTRINGS = _split_gates(PREFILTER_NEEDLES)


def interesting(low: str) -> bool:
    """The pre-filter: True when the lower-cased line may hold evidence (holds one of the needles)."""
    for needle in _GATE_SUBSTRINGS:
        if needle in low:
            return True
    return not _GATE_WORDS.isdisjoint(_WORD.findall(low))
