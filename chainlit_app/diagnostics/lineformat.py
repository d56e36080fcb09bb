"""Log line formats: split a line into its prefixes (time, level, process, logger) and its message.

vLLM logs mix many formats (V1 process prefixes, V0 `INFO 01-21 ... file.py:70]`, uvicorn access
lines, docker/CI prefixes, loguru, glog). Removing the prefixes lets one set of message patterns
serve all of them; what the prefixes said is kept on the parsed line.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\^\[\[[0-9;]*m|\r|"
                   # colour codes whose ESC byte a page or an editor turned into U+FFFD: "\ufffd[1;36m(VllmWorker
                   # rank=3 pid=4867)\ufffd[0;0m" (vLLM #21713): the terminal's, not a garbled answer's
                   r"\ufffd\[[0-9;]*m|"
                   # colour codes whose ESC a copy from a terminal dropped: "[1;36m(EngineCore_0 pid=399)[0;0m"
                   r"\[(?:[0-9]{1,3};)*[0-9]{1,3}m(?=[\w(\[\s]|$)")
# An exception's class as a traceback's last line opens with it (`ModuleNotFoundError`, `torch.OutOfMemoryError`,
# `SystemExit`, `KeyboardInterrupt`): the unwrapper, a warning's message and the harmless list all ask whether a
# line is an exception's own, and must agree on what one looks like
EXCEPTION_CLASS = r"(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)"
EXCEPTION_START = re.compile(EXCEPTION_CLASS + ": ")  # a line that is an exception's own
_LEVEL_NAMES = {
    "WARN": "WARNING",
    "CRITICAL": "ERROR",
    "FATAL": "ERROR",
    "I": "INFO",
    "W": "WARNING",
    "E": "ERROR",
    "F": "ERROR",
    "D": "DEBUG",
    # nginx's error log (a proxy in front of vLLM) writes its levels in lower case
    "error": "ERROR",
    "crit": "ERROR",
    "alert": "ERROR",
    "emerg": "ERROR",
    "warn": "WARNING",
    "notice": "INFO",
    "info": "INFO",
    "debug": "DEBUG",
}
_PREFIXES: tuple[re.Pattern[str], ...] = (
    # grep -n (and -H, and -C's context lines) or cat -n before a log's line: "123:", "llm.log:123:", "123-",
    # "   123\t"; a clock's "21:31:02" or a date's "2025-01-02" is no line number
    re.compile(r"(?:[A-Za-z_][\w./-]*\.(?:log|txt|out|err)[:-])?\d{1,7}[:-](?!\d{2}(?::\d{2}|\b))|\s*\d{1,7}\t"),
    # ISO timestamps: "[2024-09-05T00:38:34Z] ", "2024-04-27 10:13:05 "
    re.compile(r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s?"),
    # loguru / fastchat: "| ERROR    | app.llm:ask_tool:426 - ", "| ERROR | stderr | "
    re.compile(r"\|\s*(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL)\s*\|\s*(?:[\w.:<>-]+ - |stderr \| )?"),
    # containerd/CRI (Kubernetes node logs) after the time: "stdout F ", "stderr P "
    re.compile(r"(?:stdout|stderr) [FP] "),
    # a Markdown quote of a log in an issue: "> "
    re.compile(r">\s"),
    # kubectl logs --prefix: "[pod/vllm-0/vllm] "
    re.compile(r"\[pod/[\w.-]+(?:/[\w.-]+)?\]\s"),
    # rich's logging handler: "[05/05/25 18:08:24] ERROR    " (a time column, then the level)
    re.compile(r"\[\d{2}/\d{2}/\d{2,4} \d{2}:\d{2}:\d{2}\]\s+(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+"),
    # nginx / OpenResty's error log: "2026/03/04 18:40:27 [error] 7#7: *2 " (time, level, pid#tid, connection)
    re.compile(r"\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} \[(?P<lvl>error|crit|alert|emerg|warn|notice|info|debug)\] "
               r"\d+#\d+: (?:\*\d+ )?"),
    # journald: "Sep 05 11:48:04 host bash[20397]: "
    re.compile(r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [\w.@/-]+\[\d+\]: "),
    # box-drawing borders of terminal UIs (k9s, rich): "│ "
    re.compile(r"[│┃║]\s?"),
    # docker compose: "vllm-1  | "
    re.compile(r"[\w.-]+\s+\|\s"),
    # process tags: "(APIServer pid=1) ", "(EngineCore_DP0 pid=123) ", "(VllmWorker rank=0 pid=9) "
    re.compile(r"\((?P<proc>[^()\n]{1,60}?\bpid=\d+(?:, ip=[\d.]+)?)\)\s?"),
    re.compile(r"\[rank\d+\]:\s?"),
    # a launcher running a server per device tags each line it passes on: "[GPU 0] " (round 65: behind it torch's
    # c10d warning lost its level and its words read as a failure sentence), "[worker-2] ", "[node 0] "
    re.compile(r"\[(?:GPU|gpu|[Rr]ank|[Ww]orker|[Nn]ode)[ _-]?\d+\]\s"),
    # torchrun's and elastic's tag of each worker's output ("[default0]:"), Open MPI's with --tag-output
    # ("[1,0]<stderr>:")
    re.compile(r"\[default\d+\]:\s?|\[\d+,\d+\]<std(?:out|err)>:\s?"),
    # vLLM: "INFO 11-30 14:00:01 [core.py:700] ", V0 "ERROR 10-26 11:35:32 registry.py:267] "
    re.compile(
        r"(?P<lvl>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+(?P<time>\d{2}-\d{2}\s+\d{2}:\d{2}:\d{2}(?:\.\d+)?)\s+"
        r"(?:\[(?P<logger>[^\]\s]+)\]?\]|(?P<logger0>[\w./-]+:\d+)\])\s?"
    ),
    # vLLM's logger location with the time (and maybe the level) cut by the poster: "ERROR [glm4_moe_tool_parser.py
    # :123] ", " [glm4_moe_tool_parser.py:123] " (vLLM #31379, #32213)
    re.compile(r"\s?(?:(?P<lvl>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+)?\[(?P<logger>[\w./-]+\.py:\d+)\]\s"),
    # glog / torch C++: "W1130 15:01:47.512000 5649 torch/x.py:53] ", "[W1130 15:02:02.38 utils.cpp:68] "; torch's
    # c10 logging writes the month unpadded: "[W302 07:08:56.175536091 socket.cpp:209] " (2 March)
    re.compile(r"\[?(?P<lvl>[IWEF])\d{3,4} \d{2}:\d{2}:\d{2}\.\d+(?: \d+)? [\w./-]+:\d+\]\s?"),
    # absl's C++ logging after its time (TensorFlow, XLA, imported beside vLLM): ": E external/local_xla/xla/
    # stream_executor/cuda/cuda_fft.cc:467] Unable to register cuFFT factory: ..."; older torch's c10 logging
    # without a time: "[W socket.cpp:663] [c10d] The client socket has failed to connect to ..."
    re.compile(r"(?::? ?|\[)(?P<lvl>[IWEF]) [\w./-]+\.(?:cc|cpp|h|py):\d+\]\s"),
    # LMCache's logger after its bracketed time: "LMCache WARNING: Could not load 'builtin' from vLLM. ..."
    re.compile(r"LMCache (?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL):\s"),
    # Ray's C++ core after its time: "E 46008 46008] core_worker_process.cc:232: ..." (level, pid, thread id),
    # and the tag of Ray's own component the driver prints it under: "(raylet) ", "(pid=gcs_server) "
    re.compile(r"(?P<lvl>[IWEF]) \d+ \d+\]\s"),
    re.compile(r"\((?:raylet|gcs_server|pid=[a-z_]+)\)\s"),
    # Ray's own logging after its time: "ERROR services.py:1207 -- Failed to start the dashboard"
    re.compile(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+(?P<logger0>[\w./-]+\.py:\d+) -- "),
    # Rust's tracing (routers and gateways in front of vLLM): "ERROR vllm_router::server: "
    re.compile(r"(?P<lvl>DEBUG|INFO|WARN|ERROR)\s+[a-z_][\w:.-]*:\s"),
    # uvicorn / python logging: "INFO:     ", "ERROR:    "
    re.compile(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+"),
    # pytest failure lines: "E           Exception: ..."
    re.compile(r"E {2,}"),
)
_PY_WARNING = re.compile(r"\b\w*Warning: ")
# Lines that are errors without a level: a Go/Node/Rust CLI's fatal error ("Error: mkdir /home/user: permission
# denied", Ollama's, docker's, npm's; title case, first word of the message), and systemd's words for a service
# whose main process failed ("Main process exited, code=exited, status=1/FAILURE", "Failed with result
# 'exit-code'"; a clean stop says status=0/SUCCESS or "Deactivated successfully", and a stop asked for ends on
# SIGTERM or SIGINT, status=15/TERM or 2/INT)
_UNLEVELLED_ERROR = re.compile(
    # a program's own error label, its message after it or on the next line ("Error in code parsing:", smolagents)
    r"Error: (?=\S)|Error (?:in|while|during|when|occurred)\b[^:]{0,80}:(?:\s|$)|"
    r"(?:[\w.@-]+: )?(?:Main process exited, code=(?:exited|killed|dumped), "
    r"status=(?!0/|15/|2/)\d+|Failed with result '(?!success')[\w-]+')")
# Levels inside other logging formats: "2025-02-28 17:34:37,164 xinference.core.worker 1 ERROR    msg",
# "Evaluation - ERROR - msg", "kserve ERROR [__main__.py:<module>():254] msg".
_INNER_LEVEL = re.compile(r"^[\w.:<>()\[\] -]{0,80}?(?:^|[\s\-|\[])"
                          r"(?P<lvl>ERROR|CRITICAL|FATAL|WARNING|WARN|INFO|DEBUG)"
                          r"(?:\]|\s+-\s|\s*\||\s{2,}|\s+(?=\[))")


# logfmt (Go proxies and operators next to vLLM): 'level=error msg="engine failed"'
_LOGFMT = re.compile(r"\blevel=(?P<lvl>debug|info|warn|warning|error|fatal)\b.*?\bmsg=\"?(?P<msg>[^\"]*)", re.I)


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """A log line without its prefixes; `message` keeps its own indentation (tracebacks need it)."""

    level: str
    message: str
    process: str = ""  # "EngineCore_DP0 pid=123", "APIServer pid=1"
    logger: str = ""  # "core.py:700"
    time: str = ""  # "11-30 14:00:01"


def strip_ansi(text: str) -> str:
    """Remove colour codes (real ESC sequences and their pasted '^[[' form) and carriage returns, and
    undo HTML escaping (&quot; ...) that logs copied from web pages carry."""
    text = _ANSI.sub("", text)
    if "&" in text and ";" in text:
        text = html.unescape(text)
    return text


def parse_line(text: str) -> ParsedLine:
    """Split off timestamps, process tags and level prefixes of the formats vLLM logs come in."""
    level = process = logger = when = ""
    message = text
    for _ in range(6):
        for prefix in _PREFIXES:
            m = prefix.match(message)
            if m and m.end() > 0:
                groups = m.groupdict()
                lvl = groups.get("lvl")
                if lvl and not level:
                    level = _LEVEL_NAMES.get(lvl, lvl)
                process = process or groups.get("proc") or ""
                logger = logger or groups.get("logger") or groups.get("logger0") or ""
                when = when or groups.get("time") or ""
                message = message[m.end() :]
                break
        else:
            break
    if not level:
        inner = _INNER_LEVEL.match(message)
        if inner:
            level = _LEVEL_NAMES.get(inner.group("lvl"), inner.group("lvl"))
            message = message[inner.end():].lstrip(" -|")
    if not level:
        logfmt = _LOGFMT.search(message)
        if logfmt:
            level = _LEVEL_NAMES.get(logfmt.group("lvl").upper(), logfmt.group("lvl").upper())
            message = logfmt.group("msg")
    if not level and _UNLEVELLED_ERROR.match(message[2:] if message.startswith(": ") else message):
        level = "ERROR"
    if not level and _PY_WARNING.search(message):
        level = "WARNING"
    return ParsedLine(level, message, process, logger, when)


_DOCKER_JSON = re.compile(r'^(?:\d+:)?\{"log":"((?:[^"\\]|\\.)*)"')


def unwrap_docker_json(raw: str) -> str:
    """A line of Docker's json-file log (`{"log":"...\\n","stream":...}`, maybe after grep's `N:`): the
    line the process wrote."""
    m = _DOCKER_JSON.match(raw)
    if m is None:
        return unwrap_json_log(raw)
    try:
        return str(json.loads(f'"{m.group(1)}"')).rstrip("\r\n")
    except ValueError:
        return raw


_JSON_LEVEL_KEYS = ("level", "levelname", "severity", "lvl")
_JSON_MESSAGE_KEYS = ("message", "msg", "event")
_JSON_TIME_KEYS = ("timestamp", "time", "ts", "@timestamp", "asctime")
# docker compose's service column before a structured record: "model-download  | {"
_COMPOSE_COLUMN = re.compile(r"^[\w.-]+\s+\|\s(?=\{)")


def unwrap_json_log(raw: str) -> str:
    """A structured log line (`{"level": "error", "msg": "..."}`, GKE, Ray Serve, structlog) as the plain line
    it stands for: `ERROR:    message`. A record with a time but no level (structlog's `{"event": ..,
    "timestamp": ..}`, one record per traceback line) is its message. A response body has neither key and
    stays as it is."""
    column = _COMPOSE_COLUMN.match(raw)
    if column:
        unwrapped = unwrap_json_log(raw[column.end():])
        return raw if unwrapped == raw[column.end():] else unwrapped
    if not raw.startswith("{") or not raw.rstrip().endswith("}"):
        return raw
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(data, dict):
        return raw
    level = next((data[k] for k in _JSON_LEVEL_KEYS if isinstance(data.get(k), str)), None)
    message = next((data[k] for k in _JSON_MESSAGE_KEYS if isinstance(data.get(k), str)), None)
    if message is None:
        return raw
    if level is None:
        return message if any(k in data for k in _JSON_TIME_KEYS) else raw
    level = _LEVEL_NAMES.get(level.upper(), level.upper())
    return f"{level}:    {message}" if level in ("DEBUG", "INFO", "WARNING", "ERROR") else message


def line_level(text: str) -> str:
    """INFO / WARNING / ERROR / DEBUG or '' for one raw log line."""
    return parse_line(strip_ansi(text)).level


# The envelopes a collector puts before what a process printed: an ISO time, a compose or pod column, journald's
# month, a quote, grep's or cat's line number (`printed_behind_envelope`).
_ENVELOPE_START = re.compile(r"\[?\d{4}-\d{2}-\d{2}[T ]|[\w.-]+\s+\|\s|\[pod/|[A-Z][a-z]{2} [ \d]\d \d|>\s|"
                             r"\s*\d{1,7}[:\t-]|[\w./-]+\.(?:log|txt|out|err)[:-]\d")
# How the lines a server writes begin (levels, process tags, times): anything else is printed output.
LOG_LINE_START = re.compile(r"[(\[\d]|INFO|DEBUG|WARN|ERROR|CRITICAL|[IWEF]\d{4}")


def printed_behind_envelope(text: str) -> str | None:
    """What a process printed when only an envelope stands before it (a timestamp from `docker logs -t`, a
    compose service's or a pod's column, journald's prefix, a quote's `> `) and no level, logger or process
    tag: the line's printed text, or None for a logged line or a line with no envelope."""
    if not _ENVELOPE_START.match(text):
        return None
    parsed = parse_line(text)
    if parsed.level or parsed.logger or parsed.process or parsed.message == text:
        return None
    return parsed.message


# tqdm redraws its bar with a carriage return and no newline, so the next record written lands on the bar's line
# ('Processed prompts:   0%|…| 0/4 [00:00<?, …]WARNING 03-26 13:39:39 [cpu.py:154] Pin memory is not supported')
_GLUED_AFTER_BAR = re.compile(r"\d+%\|[^\n]*?\](?=(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) |\(\w[^()]{0,60}pid=\d+\) )")


def split_after_bar(text: str) -> list[str]:
    """A line as the records it holds: a progress bar and whatever record was written right after its redraw."""
    parts = []
    while (glued := _GLUED_AFTER_BAR.search(text)) is not None:
        parts.append(text[:glued.end()])
        text = text[glued.end():]
    return [*parts, text]
