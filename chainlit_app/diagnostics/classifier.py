"""Turn log lines into findings, and a whole log into one root cause.

`LineClassifier` is fed one line at a time (the live tail feeds it as the log grows) and keeps the
little state that single lines cannot carry: whether we are inside a traceback, whether the server
has become ready or is shutting down, and the recent throughput lines used to detect stalls.
`classify_lines` / `classify_file` wrap it for whole logs and pick the root cause: the earliest
decisive finding; weak findings decide only when nothing decisive was seen, wrappers never.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

from .redact import redact
from .rules import RULES, SHM_WAIT, is_harmless, match_rule, parse_line, strip_ansi
from .taxonomy import HEALTHY, KINDS, Kind

MAX_TEXT = 500
MAX_LINE_BYTES = 64 * 1024

_EXTRA_NEEDLES = (
    "traceback (most recent call last)",
    'file "',
    "file ~",
    "throughput",
    "shared memory broadcast",
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
)


def _minimal(needles: set[str]) -> tuple[str, ...]:
    """Drop needles that contain a shorter needle: the shorter one already lets such lines through."""
    ordered = sorted(needles, key=len)
    kept: list[str] = []
    for needle in ordered:
        if not any(k in needle for k in kept):
            kept.append(needle)
    return tuple(kept)


PREFILTER_NEEDLES = _minimal({n for r in RULES for n in r.needles} | set(_EXTRA_NEEDLES))

# Faster form of the same test: a needle that holds a whole word inside it (e.g. "already" in
# "address already in use") occurs only in lines that contain that word as a token, and one set
# intersection checks all such words at once. Words common in healthy logs are not used as gates.
_WORD = re.compile(r"\w+")
_COMMON_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "not",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
        "api",
        "appear",
        "attention",
        "available",
        "background",
        "cache",
        "chat",
        "client",
        "completions",
        "content",
        "default",
        "detected",
        "engine",
        "error",
        "hit",
        "info",
        "kernel",
        "load",
        "loop",
        "max_model_len",
        "maximum",
        "memory",
        "model",
        "out",
        "platform",
        "prefix",
        "process",
        "request",
        "route",
        "server",
        "size",
        "template",
        "tokens",
        "transformers",
        "version",
        "vllm",
        "weights",
    }
)


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
    return _any_in(low, _GATE_SUBSTRINGS) or not _GATE_WORDS.isdisjoint(_WORD.findall(low))


# Per-request bookkeeping lines: the bulk of a busy log. "received request" lines may quote the user's
# prompt (older vLLMs log it at INFO), so they must never reach the rules: a prompt about "CUDA out of
# memory" is not an out-of-memory error.
_BUSY_LINES = ('" 200 ok', "added request", "finished request", "aborted request", "received request")
_LIFECYCLE_NEEDLES = (
    "startup",
    "uvicorn running",
    "starting vllm",
    "throughput",
    "processed prompts",
    "received request",
    "shutdown",
    "shutting down",
    "received signal",
    "started server process",
    "api server version",
    "non-default args",
)


def _any_in(low: str, needles: tuple[str, ...]) -> bool:
    """True if any needle occurs in `low` (a plain loop: twice as fast as any() over a generator)."""
    for needle in needles:  # noqa: SIM110
        if needle in low:
            return True
    return False


_TB_START = re.compile(r"Traceback \(most recent call last\)")
_TB_MARKER = re.compile(
    r"\s|$|File [\"~<\[]|-+>\s*\d+|The above exception was the direct cause|During handling of the above|"
    r"[\^~]+$|\.\.\.|\(\.\.\.\)"
)
_FRAME_START = re.compile(r"File (?:\"[^\"]+\", line \d+|\S+:\d+\S*, in )")
_READY = re.compile(
    r"Application startup complete|Uvicorn running on|Starting vLLM (?:API )?server|Avg prompt throughput|"
    r"Processed prompts|Added request|Received request",
    re.IGNORECASE,
)
_RESTART = re.compile(r"Started server process|vLLM API server version|non-default args:", re.IGNORECASE)
_STOPPING = re.compile(
    r"\[shutdown\]|Shutting down|shutdown triggered|received signal[= ]SIG(?:INT|TERM)|"
    r"Waiting for application shutdown",
    re.IGNORECASE,
)
_ACCESS = re.compile(r"\"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+\" (?P<status>\d{3})")
_STAT_RUNNING = re.compile(r"Running: (\d+) reqs")
_STAT_WAITING = re.compile(r"(?:Waiting|Pending): (\d+) reqs")
_STAT_PROMPT = re.compile(r"Avg prompt throughput: ([\d.]+)")
_STAT_GEN = re.compile(r"Avg generation throughput: ([\d.]+)")
_STAT_KV = re.compile(r"(?:GPU|CPU)? ?KV cache usage: ([\d.]+)%")


@dataclass
class Finding:
    """One observed failure signal with the line it was seen on and a one-line fix."""

    kind: str
    line: int
    text: str
    hint: str
    root: bool = False
    source: str = "log"
    rule: str = ""
    role: str = "decisive"

    def to_json(self) -> dict[str, Any]:
        """The public shape used by the CLI and the panel API."""
        return {"kind": self.kind, "line": self.line, "text": self.text, "hint": self.hint}


@dataclass
class Report:
    """Findings of one log; `kind` is the root cause's kind or 'healthy'. The root finding comes first."""

    kind: str
    findings: list[Finding] = field(default_factory=list)
    lines: int = 0

    @property
    def root(self) -> Finding | None:
        return next((f for f in self.findings if f.root), None)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "findings": [f.to_json() for f in self.findings]}


def evidence_text(text: str, secrets: tuple[str, ...]) -> str:
    text = redact(text.strip(), secrets)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


class LineClassifier:
    """Stateful, streaming line classifier: `feed` each line once, in order, with its 1-based number."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = tuple(s for s in secrets if s)
        self._in_traceback = False
        self._ready = False
        self._stopping = False
        self._chat_ok = 0
        self._waiting_idle = 0
        self._no_tokens = 0
        self._queue_stuck = 0
        self._stall_reported = False
        self._shm_waits = 0
        self._kv_full = 0

    @property
    def ready(self) -> bool:
        """True once the server has shown that it serves (startup complete, requests, stats)."""
        return self._ready

    def feed(self, line: str, lineno: int, *, replaced: bool = False) -> list[Finding]:
        """Classify one line. `replaced` says the line had undecodable bytes that we replaced with U+FFFD
        ourselves, so replacement characters in it are not evidence of garbled model output."""
        raw = line.rstrip("\r\n")
        if not raw or raw.isspace():
            return []
        low = raw.lower()
        if not self._in_traceback:
            if _any_in(low, _BUSY_LINES):  # per-request lines: the bulk of a busy log, handled cheaply
                return self._busy_line(raw)
            if not interesting(low):
                return []
        text = strip_ansi(raw)
        parsed = parse_line(text)
        msg = parsed.message
        frame = self._traceback_state(msg)
        if frame is None:
            return []
        if _any_in(low, _LIFECYCLE_NEEDLES):
            self._track_lifecycle(msg)
        if not frame:
            handled = self._stats(msg, lineno, text)
            if handled is None:
                handled = self._access(msg, lineno, text)
            if handled is not None:
                return handled
        rule = match_rule(msg, frame=frame)
        if rule is None or (replaced and rule.id == "replacement_char") or is_harmless(parsed):
            return []
        if self._stopping and rule.role != "decisive":
            return []  # errors printed while an intentional stop tears the engine down
        kind = rule.ready_kind if (rule.role == "wrapper" and self._ready and rule.ready_kind) else rule.kind
        return [self._finding(kind, lineno, text, rule.hint, rule.id, rule.role)]

    def _busy_line(self, raw: str) -> list[Finding]:
        """Successful access lines and request bookkeeping: only update the serving state."""
        self._ready = True
        m = _ACCESS.search(raw)
        if m and m.group("status") == "200" and m.group("path").startswith("/v1/chat/completions"):
            self._chat_ok += 1
        return []

    # -- state helpers -------------------------------------------------------------------------

    def _traceback_state(self, msg: str) -> bool | None:
        """Track Python tracebacks. Returns None for lines that carry nothing (the 'Traceback' header),
        True for frame/code lines, False for ordinary lines (including the exception line)."""
        if _TB_START.match(msg.lstrip()):
            self._in_traceback = True
            return None
        if _FRAME_START.match(msg.lstrip()):
            self._in_traceback = True
            return True
        if self._in_traceback:
            if _TB_MARKER.match(msg):
                return True
            self._in_traceback = False  # first unindented line after the frames: the exception itself
        return False

    def _track_lifecycle(self, msg: str) -> None:
        if _RESTART.search(msg):
            self._ready = self._stopping = False
            self._chat_ok = self._shm_waits = 0
        if _STOPPING.search(msg):
            self._stopping = True
        elif _READY.search(msg):
            self._ready = True

    def _finding(self, kind: Kind | str, lineno: int, text: str, hint: str, rule: str, role: str) -> Finding:
        kind = Kind(kind)
        return Finding(
            kind=kind.value,
            line=lineno,
            text=evidence_text(text, self._secrets),
            hint=hint or KINDS[kind].fix[0],
            rule=rule,
            role=role,
        )

    def _stats(self, msg: str, lineno: int, text: str) -> list[Finding] | None:
        """Periodic 'Avg prompt throughput ... Running: N reqs, Waiting: M reqs' lines and the
        shared-memory wait message: detect queues that do not move and engines that stopped.
        Returns None when the line is neither, else the (possibly empty) findings."""
        if SHM_WAIT.search(msg):
            return self._shm_wait(lineno, text)
        gen = _STAT_GEN.search(msg)
        if gen is None:
            return None
        gen_tps = float(gen.group(1))
        prompt_tps = float(m.group(1)) if (m := _STAT_PROMPT.search(msg)) else 0.0
        running = int(m.group(1)) if (m := _STAT_RUNNING.search(msg)) else 0
        waiting = int(m.group(1)) if (m := _STAT_WAITING.search(msg)) else 0
        if gen_tps > 0:
            self._shm_waits = 0
        found = self._kv_cache_full(msg, waiting, lineno, text)
        reason = self._stall_reason(running, waiting, gen_tps, prompt_tps)
        if reason and not self._stall_reported and not self._stopping:
            self._stall_reported = True
            hint = (
                f"Requests are not being served ({reason}): check KV cache usage and load in /metrics; "
                f"restart "
                "the server if tokens/s stays at 0."
            )
            found.append(self._finding(Kind.SLOW_OR_STALLED, lineno, text, hint, "stats_stalled", "decisive"))
        return found

    def _stall_reason(self, running: int, waiting: int, gen_tps: float, prompt_tps: float) -> str:
        """Count how long each stall pattern has lasted; a reason once one has lasted long enough."""
        busy = running + waiting > 0
        self._waiting_idle = self._waiting_idle + 1 if running == 0 and waiting > 0 else 0
        self._no_tokens = self._no_tokens + 1 if busy and gen_tps == 0 and prompt_tps == 0 else 0
        self._queue_stuck = self._queue_stuck + 1 if waiting > 0 and prompt_tps == 0 else 0
        if not (self._waiting_idle or self._no_tokens or self._queue_stuck):
            self._stall_reported = False  # the episode is over; a new one may be reported
        if self._waiting_idle >= 2:
            return f"{waiting} requests wait while none runs"
        if self._no_tokens >= 3:
            return f"{running} running and {waiting} waiting requests at 0 tokens/s for 3 reports in a row"
        if self._queue_stuck >= 3:
            return f"{waiting} requests keep waiting and no new prompt is admitted"
        return ""

    def _shm_wait(self, lineno: int, text: str) -> list[Finding]:
        """'No available shared memory broadcast block': normal during warm-up compilation, a stall when
        it repeats while the server is serving."""
        if not self._ready or self._stopping:
            return []
        self._shm_waits += 1
        if self._shm_waits != 2:
            return []
        hint = "Workers made no progress for minutes while serving: the engine hangs or is overloaded."
        return [self._finding(Kind.SLOW_OR_STALLED, lineno, text, hint, "shm_broadcast_stall", "weak")]

    def _kv_cache_full(self, msg: str, waiting: int, lineno: int, text: str) -> list[Finding]:
        """A KV cache at >= 98 % for two reports (or 99 % with a queue) forces queueing and preemption."""
        m = _STAT_KV.search(msg)
        usage = float(m.group(1)) if m else 0.0
        self._kv_full = self._kv_full + 1 if usage >= 98.0 else 0
        if self._kv_full == 2 or (self._kv_full == 1 and usage >= 99.0 and waiting > 0):
            self._kv_full = 3  # report once per episode
            hint = (
                f"The KV cache is full ({usage:g} %): requests queue or get preempted; lower --max-num-seqs "
                f"or "
                "max_tokens, or give the cache more memory."
            )
            return [self._finding(Kind.SLOW_OR_STALLED, lineno, text, hint, "kv_cache_full", "weak")]
        return []

    def _access(self, msg: str, lineno: int, text: str) -> list[Finding] | None:
        """HTTP access lines: count successful chats and read meaning into bare 400 responses, which
        vLLM logs without the reason (the reason only reaches the client). None: let the rules decide."""
        m = _ACCESS.search(msg)
        if m is None:
            return None
        status, path = m.group("status"), m.group("path")
        chat = path.startswith("/v1/chat/completions")
        if status == "200":
            self._ready = True
            self._chat_ok += chat
            return []
        if status != "400" or not path.startswith(("/v1/chat/completions", "/v1/completions")):
            return None
        if self._stopping:
            return []
        if chat and self._chat_ok == 0:
            hint = (
                "Every chat request so far was rejected with 400: usually a missing chat template "
                "(--chat-template); the chat's error message says for sure."
            )
            return [self._finding(Kind.CHAT_TEMPLATE, lineno, text, hint, "access_400_every_chat", "weak")]
        hint = (
            "A request was rejected with 400 after others succeeded: usually prompt + max_tokens above "
            "max_model_len; the chat's error message says for sure."
        )
        return [self._finding(Kind.CONTEXT_LENGTH, lineno, text, hint, "access_400", "weak")]


class _Collector:
    """Keeps a bounded list of findings (a few per rule) and chooses the root cause."""

    def __init__(self, per_rule: int = 5, limit: int = 200) -> None:
        self.findings: list[Finding] = []
        self._per_rule: dict[str, int] = {}
        self._limit = limit
        self._max_per_rule = per_rule
        self._has_decisive = False

    def add(self, finding: Finding) -> None:
        count = self._per_rule.get(finding.rule, 0)
        if count >= self._max_per_rule:
            return
        if self._has_decisive and len(self.findings) >= self._limit:
            return
        self._per_rule[finding.rule] = count + 1
        self._has_decisive = self._has_decisive or finding.role == "decisive"
        self.findings.append(finding)

    def report(self, lines: int) -> Report:
        root = None
        for role in ("decisive", "weak", "wrapper"):
            root = next((f for f in self.findings if f.role == role), None)
            if root is not None:
                break
        if root is None:
            return Report(HEALTHY, [], lines)
        root.root = True
        rest = [f for f in self.findings if f is not root]
        return Report(root.kind, [root, *rest], lines)


def classify_lines(lines: Iterable[str], secrets: Iterable[str] = ()) -> Report:
    """Classify a whole log given as lines (numbered from 1)."""
    classifier = LineClassifier(secrets)
    collector = _Collector()
    count = 0
    for count, line in enumerate(lines, start=1):
        for finding in classifier.feed(line, count):
            collector.add(finding)
    return collector.report(count)


def iter_file_lines(path: str | PathLike[str]) -> Iterator[tuple[int, str, bool]]:
    """Yield (lineno, text, replaced) reading line by line: memory stays bounded for any file size,
    lines longer than 64 KiB are cut, undecodable bytes become U+FFFD (replaced=True)."""
    with open(path, "rb") as fh:
        lineno = 0
        while True:
            chunk = fh.readline(MAX_LINE_BYTES)
            if not chunk:
                return
            if not chunk.endswith(b"\n"):
                rest = chunk
                while rest and not rest.endswith(b"\n"):  # skip the remainder of an over-long line
                    rest = fh.readline(MAX_LINE_BYTES)
            lineno += 1
            try:
                yield lineno, chunk.decode("utf-8"), False
            except UnicodeDecodeError:
                yield lineno, chunk.decode("utf-8", errors="replace"), True


def classify_file(path: str | PathLike[str], secrets: Iterable[str] = ()) -> Report:
    """Classify a log file; see `iter_file_lines` for how the file is read."""
    classifier = LineClassifier(secrets)
    collector = _Collector()
    count = 0
    for count, text, replaced in iter_file_lines(path):
        for finding in classifier.feed(text, count, replaced=replaced):
            collector.add(finding)
    return collector.report(count)
