"""Printed output in a log: answers vLLM echoes, `CompletionOutput` printouts, a pasted /metrics page and
plain lines (no log prefix) that are an answer someone printed. Judged as answers, never as errors.

Mixed into `LineClassifier`, kept apart so that each file holds one concern.
"""

from __future__ import annotations

import re
from collections import Counter, deque

from chainlit_app.i18n import Msg

from .answer_loops import is_looping
from .answer_reprs import RULE_ID as PRINTED_ANSWER
from .answer_reprs import read_printed_answer
from .answers import StreamAssembler, is_garbled, judge_answer
from .byte_pieces import RULE_ID as BYTE_PIECES
from .byte_pieces import byte_pieces_hint, shows_byte_pieces
from .classifier_part import ClassifierPart
from .detok_shortfall import MECHANISM_ID as TEXT_SHORTER
from .detok_shortfall import text_shorter_than_tokens
from .empty_chunks import RULE_ID as EMPTY_CHUNKS
from .empty_chunks import is_empty_message_chunk
from .findings import Finding
from .inventory_lines import InventoryBlock
from .lineformat import strip_ansi
from .logprob_pieces import without_logprobs
from .printed_chunks import RULE_ID as PRINTED_CHUNK
from .printed_chunks import is_printed_none, read_printed_chunk
from .scripts import LETTER
from .special_tokens import SPECIAL_TOKENS_KEPT, special_token_run
from .table_layout import is_table_line
from .taxonomy import KINDS, Kind
from .turn_markers import SPELLED_ID, spelled_marker
from .word_salad import RULE_ID as WORD_SALAD
from .word_salad import is_word_salad

MAX_PLAIN_LINES = 500
COMPLETION_OUTPUT = re.compile(
    r"CompletionOutput\(index=\d+, text=(?P<q>['\"])(?P<text>.*?)(?P=q), token_ids=(?P<ids>\[[^\]]*\]|\S+)"
    r".*?finish_reason=(?P<finish>\w+)"
)
_ECHOED_OUTPUT = re.compile(
    r"Generated response \S+: output: (?P<q>['\"])(?P<text>.*?)(?P=q)"
    r"(?:, output_token_ids.*?|, finish_reason: (?P<finish>\w+).*|$)"
)
_PLAIN_LINE_MIN = 12
_GLUED = re.compile(r"[A-Za-z][\U0001F300-\U0001FAFF]|[\U0001F300-\U0001FAFF][A-Za-z]")
_GAUGE = re.compile(r"vllm:num_requests_(running|waiting)\{[^}]*\}\s+([\d.]+)")
# Printed lines that are diagnostics, not an answer: repeated, they are not a loop of the model.
_NOT_AN_ANSWER = re.compile(r"error|exception|assert|failed|warning|traceback|\.(?:py|cu|cpp|so)\b", re.I)
# A notice that ends on the absolute path it names (ModelScope's `Downloading Model to directory: /home/…/Qwen2.5-7B-
# Instruct`), printed once by each process that loads the model, between those processes' log records: not counted
# where it stands alone, nor, when it is a tool's progress notice (`Downloading …`, `Loading …`), where its copies stand
# back to back, one per process of a node (up to eight, nothing else printed between them); an answer that says such a
# line again among its other lines, or a ninth time, is (counted from its first copy).
_PATH_NOTICE = re.compile(r":\s+(?:/|[A-Za-z]:\\)[\w.\-/\\]+\s*$")
_PROGRESS_NOTICE = re.compile(r"[A-Z][a-z]+ing\b")
_PROCESSES_OF_A_NODE = 8
# A communication or kernel library's own line behind its bracketed name ('[Gloo] Rank 0 is connected to 0 peer
# ranks' once per process group, '[aiter] type hints mismatch' once per tensor-parallel worker): logged, not printed
# by anyone, and as alike as the groups are. Named one by one: an answer may open with any word in brackets
# ('[Answer] ', '[THINK] ') and still loop.
_LIBRARY_TAG = re.compile(r"\[(?:Gloo|c10d|NCCL|RCCL|HCCL|UCX|NIXL|DeepEP|TensorRT-LLM|aiter)\]:? ", re.I)
# (a bar's body alone, a run of tqdm's blocks, is what a fold at the width leaves of it: round 65, `fold -w 80`)
_PROGRESS_BAR = re.compile(r"\d+%\||it/s|s/it|\d+/\d+ \[|[\u2588-\u258f]{8,}")
# A capitalised label alone on its line, its value on the next ('PROMPT:', 'GENERATED TEXT:' above each answer of a
# test run): printed once per answer, never the answer looping (a model's 'Here is the output:' again and again is)
_LABEL = re.compile(r"[A-Z][A-Z\d_ ]{0,40}:")
# A rule drawn with one symbol (a test script's '=====' banner around its sections): layout, never an answer;
# nor is Python 3.11's caret line under a frame's code ('^^^^^', '~~~^^^') in an excerpt cut inside a traceback
_BANNER = re.compile(r"([=\-*#_~+.─━═])\1{9,}|[\^~]{3,}")
# vLLM's offline progress bar (tqdm; a paste may hold several of its updates on one line)
# its percentage, and (tqdm's `|…| 495/28461 [06:22<1:58:30,  3.93it/s`) the prompts done and the rate's unit
_PROMPTS_BAR = re.compile(
    r"Processed prompts:\s*(\d+)%(?:\|[^|\n]*\|\s*(\d+)/\d+(?: \[[^,\]]*,\s*[\d.?]+\s?(it/s|s/it))?)?")
# A request that finished, printed after the bar (`Finish Reason: stop`, `Generated text: …`): a bar a notebook stored
# at its first drawing (0 %) is then not the run's last word
_ANSWER_DONE = re.compile(r"(?i)\bfinish(?:ed)?[_ ]reason\W{0,4}(?:stop|length|eos)\b|"
                          r"\bgenerated[_ ]text['\"]?(?: \d+)?\s*[:=]")
# A process tag before a process's own print (Ray's worker stdout '(main_task pid=360402) ', vLLM's
# '(EngineCore pid=115) '), and how a logged line goes on after it (level, time, logger): that is no print.
_PROCESS_TAG = re.compile(r"\([^()\n]{1,60}?\bpid=\d+(?:, ip=[\d.]+)?\)\s?")
_LOGGED = re.compile(r"[\[\d]|INFO|DEBUG|WARN|ERROR|CRITICAL|[IWEF]\d{4}")
_TAGGED_PRINT_MIN = 60


class PrintedCycle:
    """Consecutive printed lines that repeat as a block ('Let me write. / Go. / Writing. / OK.' again and
    again): a model caught in a loop of short lines, which no single line shows. Bounded to the last lines."""

    MAX_PERIOD = 8

    def __init__(self) -> None:
        self._lines: deque[str] = deque(maxlen=3 * self.MAX_PERIOD)
        self._last = 0

    def follows_a_print(self, lineno: int) -> bool:
        """Whether the line just added (at `lineno`) came right after another printed line."""
        return self._last == lineno and len(self._lines) > 1  # cleared whenever another line came between

    def copies_of(self, key: str) -> int:
        """How many times the printout the line just added belongs to says that line and nothing else, back to
        back (one notice per process of a node, nothing printed between them); 0 when it holds another line."""
        return len(self._lines) if all(line == key for line in self._lines) else 0

    def add(self, key: str, lineno: int, previous: int) -> bool:
        """Record one printed line (`previous`: the log's last non-blank line before it); True when the latest
        lines are a block of 3+ lines printed twice in a row, or of 2 lines printed three times."""
        if previous != self._last:
            self._lines.clear()  # another line came between: these are not one printout
        self._last = lineno
        self._lines.append(key)
        lines = list(self._lines)
        for period in range(2, self.MAX_PERIOD + 1):
            repeats = 2 if period >= 3 else 3
            if len(lines) < period * repeats:
                break
            block = lines[-period:]
            if len(set(block)) < period or sum(len(LETTER.findall(line)) for line in block) < 16:
                continue
            if all(lines[-period * (i + 1):len(lines) - period * i] == block for i in range(1, repeats)):
                return True
        return False


class PrintedOutput(ClassifierPart):
    """Reading printed answers; the classifier provides `_finding` and this state."""

    _plain: Counter[str]
    _progress_at_zero: tuple[int, str] | None  # the latest offline progress bar, while it shows 0 %
    _batch_done: int | None  # prompts done by an offline run whose progress bar stands between 0 and 100 %
    _slowed_batch: tuple[Finding, int] | None  # a slowdown said while that bar ran, and the prompts done by then
    _cycle: PrintedCycle
    _inventory: InventoryBlock
    _previous_line: int  # the last non-blank line before the current one
    _glued: int
    _loop_reported: bool
    _gauges: dict[str, float]
    _gauge_reported: bool
    _streams: StreamAssembler

    def _on_echo(self, msg: str, lineno: int, text: str) -> list[Finding]:
        """An echo of a request or an answer: the words it quotes are never matched against the error
        rules. A logged answer is judged as an answer (garbled, empty, looping), as a symptom only."""
        m = _ECHOED_OUTPUT.search(msg)
        if m is None:
            return []
        output = m.group("text")
        if "\ufffd" in output:
            hint = Msg("hint.echo_output_garbled")
            return [self._finding(Kind.DECODE_ERROR, lineno, text, hint, "echo_output_garbled", "weak")]
        verdict = judge_answer(output.encode().decode("unicode_escape", "ignore") if "\\n" in output else output,
                               m.group("finish"), None)
        if verdict is None:
            return []
        return [self._finding(verdict.kind, lineno, text, verdict.hint, f"echo_{verdict.kind.value}", "weak")]

    def _on_printed_answer(self, msg: str, lineno: int, text: str) -> list[Finding] | None:
        """A printed answer: vLLM's `CompletionOutput(...)`, the openai library's `ChatCompletion(...)` or
        `Completion(...)`. Judged as an answer; None when the line holds none (the rules then read it)."""
        output = COMPLETION_OUTPUT.search(msg) if "CompletionOutput(" in msg else None
        if output is not None:
            if output.group("finish") != "None":
                self._answer_printed()
            return self._on_completion_output(output, lineno, text)
        chunk = read_printed_chunk(msg) if "ChatCompletionChunk(" in msg else None
        if chunk is not None:  # one printed chunk of a stream: the stream is judged once it finishes
            whole = self._streams.add(chunk, lineno)
            return [] if whole is None else [self._finding(whole.kind, lineno, text, whole.hint,
                                                          f"{PRINTED_CHUNK}_{whole.kind.value}", "decisive")]
        answer = read_printed_answer(msg)
        if answer is None:
            return None
        verdict = judge_answer(answer.text, answer.finish_reason, answer.completion_tokens,
                               reasoning=answer.reasoning, tool_calls=answer.tool_calls)
        if verdict is None:
            return []
        hint = verdict.hint
        return [self._finding(verdict.kind, lineno, text, hint, f"{PRINTED_ANSWER}_{verdict.kind.value}", "decisive")]

    def _on_completion_output(self, m: re.Match[str], lineno: int, text: str) -> list[Finding]:
        ids = m.group("ids")
        tokens = ids.count(",") + 1 if ids.startswith("[") and ids != "[]" else None
        finish = m.group("finish")
        distinct = set(ids.strip("[]").replace(" ", "").split(",")) if tokens else set()
        if tokens is not None and tokens >= 8 and len(distinct) == 1:
            # one id over and over (pad, <unk>, '!'): the model generated, but nothing a reader gets, whatever
            # it decodes to (an empty text here is not an empty answer: the tokens were sampled)
            hint = Msg("hint.output_one_token_id", token=distinct.pop(), count=tokens)
            return [self._finding(Kind.DEGENERATE_OUTPUT, lineno, text, hint, "output_one_token_id", "decisive")]
        if tokens is not None and text_shorter_than_tokens(m.group("text"), tokens, finish):
            hint = Msg("hint.text_shorter_than_tokens", tokens=tokens, chars=len(m.group("text")))
            return [self._finding(Kind.DECODE_ERROR, lineno, text, hint, TEXT_SHORTER, "decisive")]
        verdict = judge_answer(m.group("text"), None if finish == "None" else finish, tokens)
        if verdict is None:
            return []
        return [self._finding(verdict.kind, lineno, text, verdict.hint, f"output_{verdict.kind.value}",
                              "decisive")]

    def _plain_line(self, msg: str, lineno: int, text: str) -> list[Finding]:
        """Lines without any log prefix are printed output: an answer that repeats itself shows here."""
        key = without_logprobs(msg).strip()  # token pieces of a logprobs record are not the answer
        if self._progress_at_zero is not None and _ANSWER_DONE.search(key):
            self._answer_printed()
        if is_printed_none(key):  # a client printing a stream's next content right after its last chunk
            whole = self._streams.ends_on_none(self._previous_line)
            return [] if whole is None else [self._finding(whole.kind, lineno, text, whole.hint,
                                                          f"{PRINTED_CHUNK}_{whole.kind.value}", "decisive")]
        found = self._printed_block(key, lineno, text)
        if found:
            return found
        if (self._loop_reported or _PROGRESS_BAR.search(key) or _NOT_AN_ANSWER.search(key) or _BANNER.fullmatch(key)
                or _LABEL.fullmatch(key) or is_table_line(key)):
            return []
        logged = _LIBRARY_TAG.match(key) is not None  # judged as text below, never counted as a repeat
        if not logged and self._cycle.add(key, lineno, self._previous_line):
            self._loop_reported = True
            hint = KINDS[Kind.DEGENERATE_OUTPUT].fix_msgs[0]
            return [self._finding(Kind.DEGENERATE_OUTPUT, lineno, text, hint, "printed_block_loops", "weak")]
        inventory = self._inventory.holds(key, lineno, self._previous_line)  # every line: runs must follow on
        if len(key) < _PLAIN_LINE_MIN:
            return []
        if len(self._plain) >= MAX_PLAIN_LINES:
            self._plain.clear()
        if (marker := spelled_marker(key)) is not None:  # a template that is not the model's (a printed prompt
            self._loop_reported = True  # may hold whole markers: only their pieces spelled on are read here)
            hint = Msg("hint.marker_spelled_in_pieces", marker=marker)
            return [self._finding(Kind.CHAT_TEMPLATE, lineno, text, hint, SPELLED_ID, "weak")]
        if special_token_run(key) is not None:  # decoded without skipping special tokens: no loop of the model's
            self._loop_reported = True
            return [self._finding(Kind.DECODE_ERROR, lineno, text, Msg("hint.special_tokens_kept"),
                                  SPECIAL_TOKENS_KEPT, "weak")]
        if len(key) >= 20 and is_garbled(key):
            if shows_byte_pieces(key):
                return [self._finding(Kind.DECODE_ERROR, lineno, text, byte_pieces_hint(), BYTE_PIECES, "weak")]
            hint = Msg("hint.printed_output_garbled")
            return [self._finding(Kind.DECODE_ERROR, lineno, text, hint, "printed_output_garbled", "weak")]
        if len(key) >= 200 and is_word_salad(key):
            self._loop_reported = True
            hint = Msg("hint.word_salad")
            return [self._finding(Kind.DEGENERATE_OUTPUT, lineno, text, hint, WORD_SALAD, "weak")]
        if inventory or logged:
            return []  # one field of a printed inventory (a line per GPU): not an answer repeating itself
        if _PATH_NOTICE.search(key):
            if not self._cycle.follows_a_print(lineno):
                return []
            copies = self._cycle.copies_of(key) if _PROGRESS_NOTICE.match(key) else 0
            if 0 < copies <= _PROCESSES_OF_A_NODE:
                return []
            if copies == _PROCESSES_OF_A_NODE + 1:  # the ninth: all of them count
                self._plain[key] = _PROCESSES_OF_A_NODE
        self._plain[key] += 1
        if self._plain[key] >= 3 or (len(key) >= 60 and is_looping(key)):
            self._loop_reported = True
            if is_empty_message_chunk(key):  # what repeats is the empty content: no answer, not a loop
                hint = Msg("hint.empty_chunks_repeat")
                return [self._finding(Kind.EMPTY_OUTPUT, lineno, text, hint, EMPTY_CHUNKS, "weak")]
            hint = KINDS[Kind.DEGENERATE_OUTPUT].fix_msgs[0]
            return [self._finding(Kind.DEGENERATE_OUTPUT, lineno, text, hint, "printed_output_loops", "weak")]
        return []

    def _tagged_print(self, raw: str, lineno: int) -> list[Finding]:
        """A line a process printed behind its tag, with no level (a rollout worker printing what the model
        generated): judged by itself as an answer that loops. Unlike plain lines, tagged prints are not
        counted against each other: every worker of a tensor-parallel group prints the same lines."""
        tag = _PROCESS_TAG.match(raw)
        if tag is None or self._loop_reported:
            return []
        message = raw[tag.end():].strip()
        if len(message) < _TAGGED_PRINT_MIN or _LOGGED.match(message):
            return []  # most lines behind a tag are logged lines: the cheap checks first
        message = strip_ansi(message)
        if _NOT_AN_ANSWER.search(message) or _PROGRESS_BAR.search(message) or not is_looping(message):
            return []
        self._loop_reported = True
        hint = KINDS[Kind.DEGENERATE_OUTPUT].fix_msgs[0]
        return [self._finding(Kind.DEGENERATE_OUTPUT, lineno, strip_ansi(raw), hint, "tagged_print_loops", "weak")]

    def _printed_block(self, key: str, lineno: int, text: str) -> list[Finding]:
        """Across the printed lines so far: an answer whose words are glued to emoji again and again is
        tokens drawn at random."""
        if self._loop_reported or _NOT_AN_ANSWER.search(key) or _PROGRESS_BAR.search(key):
            return []
        self._glued += len(_GLUED.findall(key))
        if self._glued >= 5:
            self._loop_reported = True
            hint = Msg("hint.printed_output_fragments")
            return [self._finding(Kind.DECODE_ERROR, lineno, text, hint, "printed_output_fragments", "weak")]
        return []

    def _note_progress(self, msg: str, lineno: int, text: str) -> None:
        """Remember an offline run's progress bar (its latest update on the line): whether it stands at 0 % with no
        prompt done, and the prompts done while it runs; settle a slowdown held for the batch by how the bar moved."""
        found = _PROMPTS_BAR.findall(msg)
        if found:
            percent, done, unit = found[-1]
            self._progress_at_zero = (lineno, text) if int(percent) == 0 and int(done or 0) == 0 else None
            self._batch_done = int(done or 0) if int(percent) < 100 else None
            # finished, or went on past the slowdown, not at seconds a prompt: what slowed it stopped nothing
            if self._batch_done is None or (self._slowed_batch and self._batch_done > self._slowed_batch[1]
                                            and unit != "s/it"):
                self._slowed_batch = None

    def _answer_printed(self) -> None:
        """A finished request printed after an offline run's bar: the bar at 0 % was not the run's last word."""
        self._progress_at_zero = None

    def _held_for_batch(self, finding: Finding) -> bool:
        """A slowdown vLLM warns of (requests preempted for KV cache) while an offline batch runs is held until
        the batch's bar moves: at 100 % the batch finished, slowed but whole (a 512-prompt run preempting
        sequences and finishing in 4 minutes), and a bar that counts more prompts done than when the warning came, not
        at seconds a prompt, shows the batch going on past it (one preemption, then 495 of 28,461 prompts done at 3.9
        per second, the excerpt ending there); a bar that never moves again, or crawls, leaves it standing."""
        if self._batch_done is None:
            return False
        self._slowed_batch = self._slowed_batch or (finding, self._batch_done)
        return True

    def _stuck_progress(self) -> list[Finding]:
        """At the end of the log: an offline run whose progress bar never left 0 % processed no prompt at all
        (a finished run's bar shows 100 %; a hung engine leaves the first bar as the last word, unless a finished
        request is printed after it); a slowdown held for a batch whose bar never went on past it."""
        slowed = self._slowed_batch[0] if self._slowed_batch else None
        self._slowed_batch = None
        if self._progress_at_zero is None:
            return [slowed] if slowed is not None else []
        lineno, text = self._progress_at_zero
        self._progress_at_zero = None
        hint = Msg("hint.progress_stuck_at_zero")
        stuck = self._finding(Kind.SLOW_OR_STALLED, lineno, text, hint, "progress_stuck_at_zero", "weak")
        return [stuck] if slowed is None else [slowed, stuck]

    def _gauge(self, msg: str, lineno: int, text: str) -> list[Finding]:
        """A pasted /metrics page: requests waiting while none runs is a stall, as in the stats lines."""
        m = _GAUGE.match(msg)
        if m is None:
            return []
        self._gauges[m.group(1)] = float(m.group(2))
        if self._gauges.get("waiting", 0) > 0 and self._gauges.get("running") == 0 and not self._gauge_reported:
            self._gauge_reported = True
            hint = Msg("hint.metrics_waiting_none_running")
            return [self._finding(Kind.SLOW_OR_STALLED, lineno, text, hint, "metrics_waiting_none_running", "weak")]
        return []
