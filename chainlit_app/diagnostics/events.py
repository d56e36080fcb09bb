"""Fold log lines into events: a traceback is one event, a JSON body is one event, a line keeps what its
prefixes said.

The classifier reads lines one at a time (the live tail feeds it as the log grows), so folding is
incremental: `EventFolder.feed` takes one parsed line and returns the events that line completes.
A traceback completes at its exception line, a pretty-printed JSON body at its closing brace, so
nothing waits for the next line. Memory is bounded: a traceback keeps at most `MAX_FRAMES` frames and a
body at most `MAX_BODY_LINES` lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .exception_bases import BASES
from .json_text import close_json, parse_json
from .lineformat import ParsedLine

MAX_FRAMES = 60
MAX_BODY_LINES = 200

_TB_START = re.compile(r"Traceback \(most recent call last\)")
# faulthandler's stack dump after a fatal signal, and the stack logging's `stack_info=True` or
# `traceback.print_stack()` prints: frames to show, not an exception to name
_DUMP_START = re.compile(r"(?:Stack|(?:Current )?[Tt]hread 0x[0-9a-f]+) \(most recent call first\)|"
                         r"^Stack \(most recent call last\):")
_TB_MARKER = re.compile(
    r"\s|$|File [\"~<\[]|-+>\s*\d+|The above exception was the direct cause|During handling of the above|"
    r"[\^~]+$|\.\.\.|\(\.\.\.\)|\+[-+]|\|"
)
_FRAME = re.compile(
    r"File (?:\"(?P<path>[^\"]+)\", line \d+(?:,? in (?P<func>\S+))?|(?P<path2>\S+):\d+\S*, in (?P<func2>\S+))"
)
# The end of a frame line whose start is on another line (a paste wrapped it) or whose quotes a text editor
# curled: `ference/vllm/model_runner.py", line 733, in generate_draft_token_ids`, `“api_server”,line 56, in generate`.
_FRAME_TAIL = re.compile(r"^[\"“”]?(?P<path>[^\s\"“”]*)[\"“”]\s*,\s*line \d+,? in (?P<func>[\w<>.]+)\s*$")
# The line that ends a traceback: a dotted class name, then ':' and the message (or nothing). The standard
# library's few lower-case classes are read by their module (`socket.gaierror`, `socket.herror`, `zlib.error`).
_EXCEPTION = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z_]\w*|(?:[A-Za-z_]\w*\.)+[a-z]*error)"
                        r"(?::\s?(?P<msg>.*))?$")
# An exception line printed without its traceback (excerpts, loggers that print only the message).
# Its class is named like an exception, or lives in a library's errors module (`triton.runtime.errors.
# OutOfResources`, `torch._dynamo.exc.BackendCompilerFailed`), or is a class the hierarchy table knows.
_BARE_EXCEPTION = re.compile(
    r"^(?P<type>(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Fault|Interrupt|Warning|Timeout|Dead)|"
    r"(?:[a-z_]\w*\.)*(?:exc|errors?|exceptions)\.[A-Z]\w*|(?:Base)?Exception)"
    r"(?::\s?(?P<msg>.*))?$"
)
# A label before a body that a client, proxy or wrapper relays (`relayed_body`): `Error code: 400 - {...}` (the
# openai library's status errors), `Invalid Xinference response: {`, `Upstream error: {`. Any other text before a
# brace ('non-default args: {...}') stays a line. A note after the body (`(request_id=req_…)`) is not JSON.
_RELAYED_LABEL = re.compile(r"(?i).{0,60}?\b(?:response|error|body|reply|answer|result)s?\b[^{}]{0,24}?[:=-]\s*")
# How a pretty-printed document's first line goes on after its brace: nothing, or its first key in quotes. Any
# other text after a brace is a line that holds braces (vllm_tgis_adapter logs a request as `generate{input=[…]
# params=stopping { max_new_tokens: 16 } …}: <error>`, unbalanced): read as a body it swallowed the traceback
# that followed, and the log read healthy (vLLM #7232).
_BODY_OPENING = re.compile(r"\{\s*(?:$|[\"'‘’“”])")  # curled quotes too: a poster's editor curls them
_TRAILING_NOTE = re.compile(r"\}\s+\([\w ]{1,30}[=:][^(){}]{0,80}\)\s*$")
# pydantic's line for one error of a ValidationError (`pydantic_value_error`): vLLM's config classes refuse their
# arguments so, `Value error, <message> [type=value_error, input_value=…]`, with no exception line of its own.
_PYDANTIC_ERROR = re.compile(r"^(?P<kind>Value error|Assertion failed), (?P<msg>.*?)(?:\s*\[type=\w+.*)?$")
_NAMED_EXCEPTION = re.compile(r"^(?P<type>[A-Z][A-Za-z]+): (?P<msg>\S.*)$")
_MENTIONED = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
_ACCESS = re.compile(r"\"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+\" (?P<status>\d{3})")
_FATAL = re.compile(
    r"Fatal Python error|Segfault encountered|"
    r"SIGSEGV|SIGABRT|SIGBUS|Segmentation fault|core dumped|\bsignal 11\b|exitcode=-(?:11|6)\b|"
    # a signal handler's own report by number (Triton Inference Server: "Signal (11) received.")
    r"\bsignal \((?:11|6|7)\) received|"
    # Python's subprocess convention: a negative return code is the signal that killed the child (11 SIGSEGV,
    # 6 SIGABRT, 7 SIGBUS), as Ray reports its dashboard: "Failed to start the dashboard, return code -11"
    r"\b(?:return|exit) ?code:? -(?:11|6|7)\b|\breturncode=-(?:11|6|7)\b|"
    r"died with (?:exit code -|signal)|terminated by signal|double free or corruption|free\(\): invalid|"
    r"worker died or was killed|"
    r"realloc\(\): invalid|terminate called after throwing|thread '[^']*' panicked at|"
    # a shell's job notice or an interactive shell's report of a job a fault killed (`line 3:  4242 Bus error
    # python …`, `Illegal instruction`); SIGSEGV's words and `(core dumped)` are matched above
    r"^\s*(?:Bus error|Illegal instruction|Aborted|Floating point exception)\s*$|"
    r"\b\d+\s+(?:Bus error|Illegal instruction|Aborted|Floating point exception)(?:\s{2,}|\s*$)|"
    # Go's runtime (Ollama, gateways and routers in front of vLLM): an unrecovered panic, or the runtime's own
    # fatal error ("fatal error: runtime: out of memory", "all goroutines are asleep - deadlock!")
    r"^panic: |^fatal error: ",
    re.IGNORECASE,
)
# A fatal signal's banner printed among stack frames (torch prints native frames around it).
_FATAL_BANNER = re.compile(r"^[!*=#\s]*(?:Segfault encountered|Fatal Python error|\*\*\* SIG[A-Z]+ received)",
                           re.IGNORECASE)
# The names the innermost source line calls or reads from (`detokenize_incrementally(`, `tokenizer.decode`), or the
# whole line when it imports: what the code did there. A name only passed along (`self.parser(tokenizer,
# request.tools)`, vLLM #39683) says nothing of it.
_CALLED = re.compile(r"[A-Za-z_][\w.]*(?=\s*[(.])")
# Python's own library: a top-level module (typing.py) or a package whose frames wrap any program's code
_STDLIB = re.compile(r"/lib/python[\d.]*/(?:(?!(?:site|dist)-packages/)[^/]+$|"
                     r"(?:asyncio|concurrent|importlib|multiprocessing)/)")
# Innermost frames worth naming: the serving stack's own code, not asyncio or the standard library.
# A server's OpenAI-compatible entrypoint package (`vllm_omni/entrypoints/openai/`) is not the openai library.
_OWN_CODE = re.compile(r"(?:^|/)(vllm|transformers|tokenizers|torch|jinja2|safetensors|huggingface_hub|"
                       r"(?<!entrypoints/)openai|httpx|httpcore|requests|urllib3|aiohttp|xformers|flash_attn|triton)/")


@dataclass
class Traceback:
    """One Python traceback: its exception and where it was raised."""

    first_line: int
    line: int = 0  # the exception line
    exception_type: str = ""
    message: str = ""
    frames: list[tuple[str, str]] = field(default_factory=list)  # (file path, function)
    process: str = ""
    text: str = ""  # the exception line as printed
    last_code: str = ""  # the source line under the innermost frame
    # the last line folded into it (a frame or its code) and its number: the evidence of a traceback that was cut
    # before its exception line (an excerpt, a stored copy)
    last_seen: tuple[int, str] = (0, "")
    mentions: list[str] = field(default_factory=list)  # exception classes named in its lines
    dump: bool = False  # a faulthandler stack dump: the fatal signal before it is the event

    @property
    def raised_in(self) -> str:
        """Innermost frame in the serving stack's own code: 'path function code' ('' when none)."""
        for index in range(len(self.frames) - 1, -1, -1):
            path, func = self.frames[index]
            m = _OWN_CODE.search(path)
            if m:
                code = self.last_code if index == len(self.frames) - 1 else ""
                did = code if code.startswith(("from ", "import ")) else " ".join(_CALLED.findall(code))
                return f"{path[m.start(1):]} {func} {did}".strip()
        return ""

    @property
    def stack(self) -> str:
        """Every frame as 'path function', outermost first, then the innermost source line: for conditions
        that hold anywhere on the stack."""
        return " ".join([*(f"{path} {func}" for path, func in self.frames), self.last_code])

    @property
    def functions(self) -> list[str]:
        return [func for _path, func in self.frames]

    @property
    def reached(self) -> list[str]:
        """The functions, then what the innermost source line calls: a traceback cut after that line (a paste,
        a stored copy) still shows the function it was entering (`self.run_engine_loop()`)."""
        return [*self.functions, *(name.rsplit(".", 1)[-1] for name in _CALLED.findall(self.last_code))]

    @property
    def reached_outside_stdlib(self) -> list[str]:
        """`reached` without the frames of Python's own library: its `__call__` (typing's generic aliases) or
        `run` say nothing of what the program was doing (OpenLLM #787)."""
        own = [func for path, func in self.frames if not _STDLIB.search(path)]
        return [*own, *self.reached[len(self.frames):]]

    @property
    def native(self) -> bool:
        """Only native frames (`File "<unknown>", line 0, in cuMemcpyBatchAsync`): torch's C++ stack of a
        crash, printed around its "Segfault encountered", not a Python exception."""
        return bool(self.frames) and all(path.startswith("<unknown") for path, _func in self.frames)


@dataclass
class Body:
    """A JSON document printed in the log (one line or pretty-printed)."""

    first_line: int
    line: int
    data: Any  # None when the text did not parse (cut by an excerpt, quoted, not JSON after all)
    text: str
    lines: list[str] = field(default_factory=list)  # the messages it was folded from


@dataclass
class Access:
    """An HTTP access line (uvicorn)."""

    line: int
    method: str
    path: str
    status: int


@dataclass
class FatalSignal:
    """A process died of a signal or a fatal runtime error."""

    line: int
    text: str


Event = Traceback | Body | Access | FatalSignal


class EventFolder:
    """Incremental folding of one log's lines into events."""

    def __init__(self) -> None:
        self._tracebacks: dict[str, Traceback] = {}  # open tracebacks by process: logs interleave them
        self._after_frame: set[str] = set()  # processes whose last line was a frame: the next is its code
        self._latest = ""  # the process whose traceback got the latest frame: where a wrapped frame's tail goes
        self._body: list[str] = []
        self._body_start = 0
        self._depth = 0

    @property
    def in_traceback(self) -> bool:
        return bool(self._tracebacks)

    @property
    def in_body(self) -> bool:
        return bool(self._body)

    def frame_state(self, parsed: ParsedLine, lineno: int) -> bool | None:
        """Track tracebacks line by line. None: the line carries nothing (a 'Traceback' header);
        True: a frame or code line; False: an ordinary line (the exception line included)."""
        msg = parsed.message
        stripped = msg.lstrip()
        key = parsed.process
        dump = bool(_DUMP_START.match(stripped))
        if dump or _TB_START.match(stripped):
            if len(self._tracebacks) > 16:  # processes that never finished theirs: keep the map bounded
                self._tracebacks.clear()
            self._tracebacks[key] = Traceback(first_line=lineno, process=key, dump=dump)
            return None
        frame = _FRAME.match(stripped)
        if not frame and key in self._tracebacks and _FATAL_BANNER.search(stripped):
            self._after_frame.discard(key)
            return False  # "!!!!!!! Segfault encountered !!!!!!!" between native frames: an event, not code
        if not frame and key in self._after_frame:
            self._after_frame.discard(key)  # the source line under a frame, however it is indented
            tb = self._tracebacks.get(key)
            if tb is not None and stripped and not _EXCEPTION.match(stripped):
                tb.last_code, tb.last_seen = stripped[:200], (lineno, stripped)
                return True
        tail = None if frame or key in self._after_frame else _FRAME_TAIL.match(stripped)
        if tail:
            if not key and key not in self._tracebacks and self._latest in self._tracebacks:
                key = self._latest  # a prefix-less tail continues the traceback that got the latest frame
            tb = self._tracebacks.setdefault(key, Traceback(first_line=lineno, process=key))
            if len(tb.frames) < MAX_FRAMES:
                tb.frames.append((tail.group("path"), tail.group("func")))
            tb.last_seen = (lineno, stripped)
            self._latest = key
            return True
        if frame:
            self._after_frame.add(key)
            self._latest = key
            tb = self._tracebacks.setdefault(key, Traceback(first_line=lineno, process=key))
            if len(tb.frames) < MAX_FRAMES:
                path = frame.group("path") or frame.group("path2") or ""
                func = frame.group("func") or frame.group("func2") or ""
                tb.frames.append((path.replace("\\", "/"), func))
            tb.last_seen = (lineno, stripped)
            return True
        tb = self._tracebacks.get(key)
        if tb is not None and len(msg) - len(stripped) <= 2 and _BARE_EXCEPTION.match(stripped):
            return False  # an exception line pasted with a stray indent (code lines are indented by 4)
        if tb is not None and _TB_MARKER.match(msg):
            if stripped and not stripped.startswith(("File", "^", "~", "|", "+", "└", "│")):
                tb.last_code, tb.last_seen = stripped[:200], (lineno, stripped)
            for name in _MENTIONED.findall(msg):
                if len(tb.mentions) < 8 and name not in tb.mentions:
                    tb.mentions.append(name)
            return True
        return False

    @staticmethod
    def bare_exception(parsed: ParsedLine, lineno: int) -> Traceback | None:
        """An exception line seen outside any traceback: an event of its own, without frames."""
        pydantic = _PYDANTIC_ERROR.match(parsed.message.strip())
        if pydantic is not None:
            kind = "ValueError" if pydantic.group("kind") == "Value error" else "AssertionError"
            return Traceback(first_line=lineno, line=lineno, exception_type=kind, message=pydantic.group("msg"),
                             process=parsed.process, text=parsed.message.strip())
        m = _BARE_EXCEPTION.match(parsed.message.strip())
        if m is None:
            m = _NAMED_EXCEPTION.match(parsed.message.strip())
            if m is None or m.group("type") not in BASES:
                return None
        if m.group("type").endswith("Warning"):  # a warning printed without its `file.py:N:` (cut off, folded away)
            return None
        return Traceback(first_line=lineno, line=lineno, exception_type=m.group("type"),
                         message=(m.group("msg") or "").strip(), process=parsed.process,
                         text=parsed.message.strip())

    def open_tracebacks(self) -> list[Traceback]:
        """Tracebacks still open (their exception line never came: the excerpt or the log ends)."""
        found, self._tracebacks = list(self._tracebacks.values()), {}
        return found

    def open_body(self) -> Body | None:
        """A body still open at the end: closed as well as it can be, then parsed."""
        if not self._body:
            return None
        lines, start = self._body, self._body_start
        self._body, self._depth = [], 0
        text = "\n".join(lines)
        data = parse_json(close_json(text))
        return Body(start, start + len(lines) - 1, data if isinstance(data, dict) else None, text, lines)

    def peek(self, process: str) -> Traceback | None:
        """The traceback open for a process, if any (it stays open)."""
        return self._tracebacks.get(process)

    def end_traceback(self, parsed: ParsedLine, lineno: int) -> Traceback | None:
        """Called for an ordinary line: when a traceback is open, this line is its exception line."""
        tb = self._tracebacks.pop(parsed.process, None)
        if tb is None:
            return None
        m = _EXCEPTION.match(parsed.message.strip())
        if m is None:  # cut by the excerpt or by other output: its stack still tells (native frames and a dump's
            return tb if tb.frames and not (tb.dump or tb.native) else None  # only show: their signal names it)
        tb.line = lineno
        tb.exception_type = m.group("type")
        tb.message = (m.group("msg") or "").strip()
        tb.text = parsed.message.strip()
        return tb

    def body(self, message: str, lineno: int) -> Body | None:
        """Fold JSON bodies: a one-line document at once, a pretty-printed one at its closing brace."""
        stripped = message.strip()
        if not self._body:
            start = stripped.find("{")
            if start < 0 or (start > 8 and not _RELAYED_LABEL.fullmatch(stripped[:start])):  # "data: {", ">>> {"
                return None
            candidate = _TRAILING_NOTE.sub("}", stripped[start:])
            if candidate.rstrip("%").rstrip().endswith("}"):
                data = parse_json(candidate)
                if isinstance(data, dict):
                    return Body(lineno, lineno, data, stripped, [message])
                # an answer elided by its poster ('..., "eval_count":1'): still an answer, read field by field
                answer = '"choices"' in candidate or '"role"' in candidate
                return Body(lineno, lineno, None, stripped, [message]) if answer else None
            if candidate.count("{") <= candidate.count("}") or (start > 8 and candidate.strip() != "{"):
                return None  # behind a label, only a brace alone opens a pretty-printed body (a cut line does not)
            if not _BODY_OPENING.match(candidate):
                return None  # `generate{input=… decoding { … }: <error>`: braces in a line of text, not a document
            self._body, self._body_start = [message if start <= 8 else candidate], lineno
            self._depth = candidate.count("{") - candidate.count("}")
            return None
        self._body.append(message)
        self._depth += message.count("{") - message.count("}")
        if self._depth > 0 and len(self._body) < MAX_BODY_LINES:
            return None
        lines, start = self._body, self._body_start
        self._body, self._depth = [], 0
        text = "\n".join(lines)
        data = parse_json(text)
        if not isinstance(data, dict):  # a paste wrapped at a fixed width cuts strings: the lines are one line
            data = parse_json("".join(lines))
        return Body(start, lineno, data if isinstance(data, dict) else None, text, lines)

    @staticmethod
    def access(message: str, lineno: int) -> Access | None:
        m = _ACCESS.search(message)
        if m is None:
            return None
        return Access(lineno, m.group("method"), m.group("path"), int(m.group("status")))

    @staticmethod
    def fatal(message: str, lineno: int) -> FatalSignal | None:
        return FatalSignal(lineno, message.strip()) if _FATAL.search(message) else None
