"""Turn log lines into findings, and a whole log into one root cause.

`LineClassifier` is fed one line at a time (the live tail feeds it as the log grows). Lines are folded
into events (`events.py`): tracebacks, JSON bodies, access lines, fatal signals; the phase of the
server's life is followed with the markers of `phases.py`. Each event is named by a ladder that never
ends in silence:

  1. a rule (`rules.py`: the most specific matching rule of the tables);
  2. the exception's type (`exceptions.py`, most specific class first);
  3. the module the exception was raised in;
  4. the phase: an unrecognised error, traceback or fatal signal before the server was ready is a
     start-up failure, after it an engine error.

So `healthy` means that no error line, traceback, fatal signal, 5xx or empty answer was seen.
The ladder for tracebacks is `traceback_ladder.py`; `whole_log.py` picks the root cause of a whole log.
"""

from __future__ import annotations

import re
from collections import Counter

from chainlit_app.i18n import Msg

from .answers import ANSWER_FIELDS, StreamAssembler, is_chunk, judge_body, judge_fragment
from .chains import SEPARATOR, ChainLinks
from .error_words import last_reading
from .events import Body, EventFolder, Traceback
from .exception_shapes import (
    UNTYPED_TORCH_MESSAGES,
    flattened_traceback,
    relayed_exception,
    untyped_python_exception,
    untyped_torch_exception,
    without_group_gutter,
)
from .exceptions import error_body, lookup
from .findings import Finding, evidence_text
from .grpc_status import as_http_status
from .harmless import SHM_WAIT, is_harmless, is_probe_refusal
from .inventory_lines import InventoryBlock
from .json_text import field_offset
from .lineformat import (
    LOG_LINE_START,
    ParsedLine,
    parse_line,
    printed_behind_envelope,
    split_after_bar,
    strip_ansi,
    unwrap_docker_json,
)
from .phases import (
    Phase,
    PhaseTracker,
    logger_shows_serving,
    stack_shows_serving,
    words_show_serving,
)
from .ports import PortWatch
from .prefilter import BUSY_LINES, ECHO_LINES, interesting
from .printed import PrintedCycle, PrintedOutput
from .redact import SecretSource, secrets_of
from .request_lines import RequestLines
from .rule_tables import RULES
from .rules import ALL_PHASES, Context, most_specific
from .shell_words import AsWritten, in_english
from .stats import StallWatch
from .taxonomy import KINDS, Kind
from .traceback_ladder import TracebackLadder
from .warning_text import WarningText

# Cheap first looks before the full patterns (most lines are neither). An exception line may come indented: a
# poster quoting a line under a command (vllm-gaudi #1407), a logger indenting a relayed error.
_TORCH_FIRST_WORDS = "|".join(sorted({re.escape(words.split()[0]) for words, _type in UNTYPED_TORCH_MESSAGES}))
_MAY_BE_EXCEPTION = re.compile(rf"\s*(?:[\w.]*[A-Z]\w*(?::|$)|(?:Value error|Assertion failed), |"
                               rf"(?i:{_TORCH_FIRST_WORDS}) )")
_MAY_BE_FATAL = re.compile(r"(?i)fatal|sig[a-z]{3,4}\b|segmentation|segfault|core dumped|double free|invalid pointer|"
                           r"bus error|illegal instruction|aborted|floating point exception|"
                           r"terminate called|panic|signal|exitcode=-|died with|died or was killed|terminated by")
# A client's error as its status and message (the openai library for JavaScript prints `400 <message>`, as do
# coding agents built on it): an error response, as a body with that code would be. A count ("500 requests") is not.
_STATUS_MESSAGE = re.compile(r"^\s*(?P<status>[45]\d\d) (?P<message>(?:[A-Z`'\"]|status code\b).*)$")


class LineClassifier(PrintedOutput, RequestLines, TracebackLadder):
    """Stateful, streaming line classifier: `feed` each line once, in order, with its 1-based number."""

    def __init__(self, secrets: SecretSource = ()) -> None:
        self._secrets = secrets if callable(secrets) else secrets_of(secrets)  # a function: asked per finding
        self._folder = EventFolder()
        self._phases = PhaseTracker()
        self._stalls = StallWatch()
        self._ports = PortWatch()  # a server that moved up past a port another process holds
        self._warning_text = WarningText()
        self.in_warning_text = False  # the last line fed was the rest of a Python warning's message
        self._chat_ok = 0
        self._last_traceback = 0  # exception line of the latest traceback: where wrappers point
        self._named_in_traceback: set[str] = set()  # processes whose open traceback already has a finding
        self._plain: Counter[str] = Counter()
        self._cycle = PrintedCycle()
        self._inventory = InventoryBlock()  # printed `Label: value` fields: an inventory, not a loop
        self._progress_at_zero: tuple[int, str] | None = None
        self._batch_done, self._slowed_batch = None, None
        self._previous_line = self._last_line = 0  # non-blank lines: printed blocks must follow each other
        self._loop_reported = False
        # Findings whose kind depends on a phase the excerpt had not shown yet (no marker seen): named as
        # start-up failures, renamed engine errors if the log later shows that the server was serving.
        self._phase_guesses: list[Finding] = []
        self._tb_guesses: list[tuple[Finding, Traceback, str]] = []  # named by type or place before a phase showed
        self._aborts = 0
        self._abort_second = ""
        self._streams = StreamAssembler()
        self._gauges: dict[str, float] = {}
        self._glued = 0
        self._gauge_reported = False
        self._fatal_seen = False  # native stacks after a fatal signal are its frames, not another failure
        self._named_messages: dict[str, int] = {}  # process -> line of its latest message a rule named
        self._fatal_guesses: list[Finding] = []  # fatal signals named before their stack showed the phase
        self._chains = ChainLinks()  # 'The above exception was the direct cause …': the next traceback's cause
        self._as_written = AsWritten()  # lines read in the shell's English words (`shell_words.py`)

    @property
    def ready(self) -> bool:
        """True once the server has shown that it serves (startup complete, requests, stats)."""
        return self._phases.phase >= Phase.SERVING

    @property
    def served(self) -> bool:
        """True once the server was seen serving, even if it has stopped since (a stop before it is not)."""
        return self._phases.served

    def feed(self, line: str, lineno: int, *, replaced: bool = False) -> list[Finding]:
        """Classify one line. `replaced` says the line had undecodable bytes that we replaced with U+FFFD
        ourselves, so replacement characters in it are not evidence of garbled model output."""
        raw = line.rstrip("\r\n")
        if "%|" in raw and len(parts := split_after_bar(raw)) > 1:  # a record written behind a progress bar's redraw
            return [found for part in parts for found in self.feed(part, lineno, replaced=replaced)]
        if not raw or raw.isspace():
            self.in_warning_text = self._warning_text.holds("")  # a blank line ends a warning's message
            return []
        self._previous_line, self._last_line = self._last_line, lineno
        if '"log":' in raw[:40] or ('{"' in raw[:60] and raw.endswith("}")):
            raw = unwrap_docker_json(raw)  # Docker's json-file lines and structured (JSON) log lines
        if (english := in_english(raw)) is not raw:  # a shell's `段错误 (核心已转储)`: its English words
            self._as_written.keep(lineno, strip_ansi(raw))
            raw = english
        self.in_warning_text = self._warning_text.holds(raw)
        if self.in_warning_text:  # the rest of a Python warning's message: what a rule names in it, nothing else
            plain = strip_ansi(raw)
            parsed = parse_line(plain)
            return self._match(parsed.message, plain, lineno, Context(self.phase, level="WARNING"),
                               parsed, replaced)
        low = raw.lower()
        self._stalls.observe(low)
        if "LISTEN" in raw or "Uvicorn running on" in raw:
            self._ports.observe(strip_ansi(raw), lineno)
        if not (self._folder.in_traceback or self._folder.in_body):
            if any(n in low for n in BUSY_LINES):  # per-request lines: the bulk of a busy log
                return self._busy_line(raw, lineno)
            if not interesting(low) and not _STATUS_MESSAGE.match(raw):
                if raw[:1] == "(":
                    return self._tagged_print(raw, lineno)
                text = strip_ansi(raw)
                printed = printed_behind_envelope(text)
                if printed is not None:  # a time, a container's or a pod's column, a quote: what was printed,
                    # read as the same line bare would be (a digit or a bracket opens a log's record or a repr)
                    return [] if LOG_LINE_START.match(printed) else self._plain_line(printed, lineno, text)
                return [] if LOG_LINE_START.match(raw) else self._plain_line(text, lineno, text)
        text = strip_ansi(raw)
        parsed = without_group_gutter(parse_line(text)) if "|" in text else parse_line(text)
        msg = parsed.message
        if self._folder.in_body or "{" in msg:
            body = self._folder.body(msg, lineno)
            if body is not None:
                return self._on_body(body, parsed)
            if self._folder.in_body:
                return []
        frame = self._folder.frame_state(parsed, lineno)
        if frame is None:
            self._named_in_traceback.discard(parsed.process)
            return []
        if self._phases.observe(msg) is not None and self._phases.phase == Phase.BOOT:
            self._on_new_life()
        if frame:
            return self._match(msg, text, lineno, Context(self.phase, frame=True, level=parsed.level), parsed,
                               replaced)
        dump = self._folder.peek(parsed.process)
        tb = self._folder.end_traceback(parsed, lineno)
        if tb is None and dump is not None:  # a stack that ended without its exception line still shows where
            self._settle_fatal(dump)
            if not self._phases.seen_marker and stack_shows_serving(dump.functions[-12:]):
                self._phases.enter(Phase.SERVING)
        if tb is not None and not tb.line:  # cut before its exception line by the line after it (a fence, prose)
            return self._on_cut_traceback(tb, mid_log=True) + self._on_line(parsed, text, lineno, replaced)
        if tb is not None:
            return self._on_traceback(tb, parsed, text, replaced)
        return self._on_line(parsed, text, lineno, replaced)

    # -- events ------------------------------------------------------------------------------------

    def _on_line(self, parsed: ParsedLine, text: str, lineno: int, replaced: bool) -> list[Finding]:
        msg = parsed.message
        if not msg.strip() or SEPARATOR.match(msg.strip()):  # a blank ERROR line; a chain's separator
            self._chains.separator(parsed.process, self._last_traceback if msg.strip() else 0)
            return []
        if "Processed prompts" in msg:
            self._note_progress(msg, lineno, text)
        if any(n in msg for n in ECHO_LINES):
            return self._on_echo(msg, lineno, text)
        if "shared memory broadcast" in msg and SHM_WAIT.search(msg):
            signal = self._stalls.shm_wait(self.phase == Phase.SERVING or not self._phases.seen_marker)
            return [self._finding(Kind.SLOW_OR_STALLED, lineno, text, signal.hint, signal.rule, signal.role)] \
                if signal else []
        if "unfinished: True" in msg:
            self._stalls.holds_work(msg, parsed.process)
        signals = self._stalls.stats(msg, self.phase == Phase.STOPPING, (lineno, text)) if "hroughput" in msg else None
        if signals is not None:
            self._phases.enter(Phase.SERVING)
            return [self._finding(Kind.SLOW_OR_STALLED, lineno, text, s.hint, s.rule, s.role) for s in signals]
        access = self._folder.access(msg, lineno) if "HTTP/" in msg else None
        if access is not None:
            found = self._on_access(access, text)
            if found is not None:
                return found
        printed = self._on_printed_answer(msg, lineno, text) if "Completion" in msg else None
        if printed is not None:  # vLLM's CompletionOutput, the openai library's ChatCompletion or Completion
            return printed
        if not self._phases.seen_marker and logger_shows_serving(parsed.logger):
            self._phases.enter(Phase.SERVING)
        may_be = _MAY_BE_EXCEPTION.match(msg) is not None
        bare = self._folder.bare_exception(parsed, lineno) if may_be else None
        if bare is None and ", line " in msg:
            bare = flattened_traceback(parsed, lineno)
        elif bare is None:  # a message without its class, or an exception behind a server's status label
            bare = (untyped_torch_exception(parsed, lineno) if may_be else None) or \
                untyped_python_exception(parsed, lineno) or relayed_exception(parsed, lineno)
        bare = None if bare is None or is_harmless(parsed) else bare
        if bare is not None:
            return self._on_traceback(bare, parsed, text, replaced)
        found = self._match(msg, text, lineno, Context(self.phase, level=parsed.level), parsed, replaced)
        if found:
            if found[0].role != "wrapper":
                self._named_messages[parsed.process] = lineno  # a logger's message; its traceback may follow
            return found
        status = _STATUS_MESSAGE.match(msg)
        if status is not None:  # no rule named its message: its status, then the phase, as for an error body
            return self._error_response(["HTTPStatusError"], f"status code {status['status']}: {status['message']}",
                                        lineno, text)
        grpc = as_http_status(msg)
        if grpc is not None:  # a gRPC status (Triton, XLA): the HTTP status gRPC maps it to
            return self._error_response(["HTTPStatusError"], f"status code {grpc[0]}: {grpc[1]}", lineno, text)
        fatal = self._folder.fatal(msg, lineno) if _MAY_BE_FATAL.search(msg) else None
        if fatal is not None:
            # native code (kernels, NCCL) runs once the model is loaded: in an excerpt that shows no phase at
            # all, a fatal signal is read as a crash while serving
            phase = None if self._phases.seen_marker else Phase.SERVING
            self._fatal_seen = True
            found = self._phase_default(lineno, text, Msg("what.fatal_signal"), "fallback", phase)
            if phase is not None and len(self._fatal_guesses) < 10:
                self._fatal_guesses += found
            return found
        if parsed.level == "ERROR" and self.phase != Phase.STOPPING and not is_harmless(parsed) \
                and not (self._phases.saw_start and is_probe_refusal(parsed)) \
                and not msg[:1].isspace():  # an indented line is a fragment of a traceback, not a message
            unknown = not self._phases.seen_marker and words_show_serving(msg)
            return self._phase_default(lineno, text, Msg("what.error_line"), "weak", Phase.SERVING if unknown else None)
        if msg.startswith("vllm:num_requests_"):
            return self._gauge(msg, lineno, text)
        if not parsed.level and not parsed.process:
            if msg != text and not interesting(msg.lower()) and LOG_LINE_START.match(msg):
                return []  # behind a column or a time ('vllm-1  | [[0.93, 0.33]]'): read as the bare line is
            return self._plain_line(msg, lineno, text)
        return self._tagged_print(text, lineno) if not parsed.level else []

    def _on_body(self, body: Body, parsed: ParsedLine) -> list[Finding]:
        """A completed JSON body: an answer is judged as an answer (the words it quotes decide nothing);
        anything else (error bodies, text that was not JSON after all) goes through the rules line by line."""
        if body.data is not None and is_chunk(body.data):
            self._phases.enter(Phase.SERVING)
            whole = self._streams.add(body.data, body.line)  # the whole streamed answer, once its last chunk came
            if whole is not None:
                return [self._finding(whole.kind, body.line, whole.evidence, whole.hint,
                                      f"stream_{whole.kind.value}", "decisive")]
        verdict = judge_body(body.data) if body.data is not None else judge_fragment(body.text)
        if verdict is None:
            if body.data is not None and "choices" in body.data:
                self._phases.enter(Phase.SERVING)
                return []
            found: list[Finding] = []
            for offset, message in enumerate(body.lines):  # not an answer: each line as any other line
                found += self._on_line(ParsedLine(parsed.level, message), message, body.first_line + offset, False)
            error = error_body(body.data) if body.data is not None and not found else None
            if error is not None:  # an error response no rule named: its type, then its status, then the phase
                return self._error_response(error[0].split(), error[1], body.first_line, body.text)
            return found
        self._phases.enter(Phase.SERVING)
        pretty = "\n" in body.text  # a pretty-printed body: its verdict, at its answer's line
        answer_at = field_offset(body.lines, ANSWER_FIELDS) if pretty else None
        line = body.line if answer_at is None else body.first_line + answer_at
        return [self._finding(verdict.kind, line, verdict.evidence if pretty else body.text, verdict.hint,
                              f"body_{verdict.kind.value}", "decisive")]

    def _error_response(self, names: list[str], message: str, lineno: int, text: str) -> list[Finding]:
        """An error response no rule named (a body, a client's `400 <message>`): its type and status in the
        exception table, else the phase."""
        entry = lookup(names, message, self.phase)
        if entry is None:
            return self._phase_default(lineno, text, Msg("what.error_response"), "weak", Phase.SERVING)
        return [self._finding(entry.kind, lineno, text, entry.hint, "error_body", "weak", "exception_type")]

    def finish(self) -> list[Finding]:
        """The log (or the excerpt) ends: name what is still open. A traceback whose exception line never
        came is still a failure; a body cut off at its end is closed and judged. Guesses made before the
        log showed its phase are settled."""
        still_open = self._folder.open_tracebacks()
        if not self._phases.seen_marker and any(stack_shows_serving(tb.functions[-12:]) for tb in still_open):
            self._phases.enter(Phase.SERVING)  # a stack cut off by the excerpt still shows where it ran
        # guesses made before the excerpt showed serving (a stop after serving counts: the engine died serving)
        if self._phases.served and self.phase >= Phase.SERVING and not self._phases.saw_start:
            for guess, tb, text in self._tb_guesses:  # what the type or the place means while serving
                settled = self._ladder(tb, text, Phase.SERVING, [], guess.points_to)
                if settled and settled[0].kind != guess.kind:
                    guess.kind, guess.hint, guess.rule, guess.basis = (
                        settled[0].kind, settled[0].hint, settled[0].rule, settled[0].basis)
            for finding in self._phase_guesses:
                if finding.kind in (Kind.STARTUP_FAILURE.value, Kind.MODEL_NOT_FOUND.value):  # start-up-only readings
                    finding.kind = Kind.ENGINE_ERROR.value
                    finding.rule, finding.basis = f"phase_{Kind.ENGINE_ERROR.value}", "phase"
                    finding.hint = Msg("hint.engine_failed_serving")
        self._phase_guesses.clear()
        self._tb_guesses.clear()
        found = [self._finding(v.kind, line, v.evidence, v.hint, f"stream_{v.kind.value}", "decisive")
                 for v, line in self._streams.flush()]
        found += self._stuck_progress() + [self._finding(Kind.SLOW_OR_STALLED, s.line, s.text, s.hint, s.rule, s.role)
                                           for s in self._stalls.held()]
        if (moved := self._ports.moved()) is not None:
            found.append(self._finding(Kind.PORT_IN_USE, moved[1], moved[2], Msg("hint.server_moved_port",
                                       port=moved[0]), "server_moved_past_taken_port", "weak"))
        body = self._folder.open_body()
        if body is not None:
            found += self._on_body(body, ParsedLine("", ""))
        for tb in still_open:
            if tb.dump or tb.native:
                self._settle_fatal(tb)
            found += self._on_cut_traceback(tb)
        return found

    # -- helpers -----------------------------------------------------------------------------------

    def _match(self, msg: str, text: str, lineno: int, context: Context, parsed: ParsedLine, replaced: bool,
               pointed_from: int = 0) -> list[Finding]:
        rule = most_specific(RULES, msg, context)
        if rule is None or (replaced and rule.id == "replacement_char") or is_harmless(parsed):
            return []
        if self.phase == Phase.STOPPING and rule.role != "decisive":
            return []  # errors printed while an intentional stop tears the engine down
        if (self._folder.in_traceback or context.frame) and rule.role != "weak":
            self._named_in_traceback.add(parsed.process)  # a symptom in a frame leaves the ladder to run
        finding = self._finding(rule.kind, lineno, text, rule.hint, rule.id, rule.role)
        if rule.held_for_batch and self._held_for_batch(finding):
            return []
        if rule.phases != ALL_PHASES and not self._phases.seen_marker:
            self._guess(finding)
        if rule.role == "wrapper":
            finding.points_to = pointed_from or self._last_traceback
            if finding.points_to:
                finding.hint = Msg("hint.traceback_is_cause", hint=finding.hint, line=finding.points_to)
        return [finding]

    def _phase_default(self, lineno: int, text: str, what: str, role: str, phase: Phase | None = None
                       ) -> list[Finding]:
        phase = self.phase if phase is None else phase
        if phase == Phase.STOPPING:
            return []
        kind, hint, rule, basis = last_reading(text, phase == Phase.SERVING, what)
        finding = self._finding(kind, lineno, text, hint, rule, role, basis)
        if basis == "phase" and not self._phases.seen_marker:
            self._guess(finding)
        return [finding]

    def _guess(self, finding: Finding) -> None:
        if len(self._phase_guesses) < 50:
            self._phase_guesses.append(finding)

    def _on_new_life(self) -> None:
        self._chat_ok = 0
        self._stalls.reset()

    def _finding(self, kind: Kind | str, lineno: int, text: str, hint: str, rule: str, role: str,
                 basis: str = "rule") -> Finding:
        kind = Kind(kind)
        return Finding(
            kind=kind.value,
            line=lineno,
            text=evidence_text(self._as_written.get(lineno, text), secrets_of(self._secrets)),
            hint=hint or KINDS[kind].fix_msgs[0],
            rule=rule,
            role=role,
            basis=basis,
        )
