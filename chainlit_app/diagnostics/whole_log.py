"""A whole log: feed every line, settle what is still open at its end, and choose the root cause.

The root cause is the earliest finding of the strongest role present: decisive, then fallback, weak,
wrapper; unless the log also names what explains that finding (`EXPLAINED_BY`). Later findings are listed
after it as consequences. Memory stays bounded for any file size.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterable, Iterator
from itertools import chain
from os import PathLike

from .answer_fields import ONE_TOKEN_ID as PRINTED_ONE_TOKEN
from .answer_fields import RULE_ID as PRINTED_ANSWER_FIELDS
from .answer_fields import AnswerFieldsWatch
from .classifier import LineClassifier
from .failure_sentences import RULE_ID as FAILURE_SENTENCE
from .failure_sentences import FailureSentenceWatch
from .findings import ROLE_RANK, Finding, Report
from .hard_wrap import unwrapped
from .redact import secrets_of
from .sse_undecoded import RULE_ID as SSE_LINE_PARSED_AS_JSON
from .sse_undecoded import SseUndecodedWatch
from .taxonomy import HEALTHY, Kind
from .unfinished_start import STEPS, StartWatch

MAX_LINE_BYTES = 64 * 1024
# What only the watches of a whole log name (an unfinished start, a client's SSE line parsed as JSON, an answer
# printed as fields): the live path, which feeds `LineClassifier` alone, never names these. Kept beside the watches
# `_classify` runs, so that a new watch is added to both at once.
WHOLE_LOG_ONLY_RULES: frozenset[str] = frozenset(
    {step.id for step in STEPS} | {SSE_LINE_PARSED_AS_JSON, PRINTED_ANSWER_FIELDS, PRINTED_ONE_TOKEN, FAILURE_SENTENCE})
# A symptom whose cause the same log names: vLLM answers a prompt longer than the context with an empty
# output (finish_reason 'length') and a warning; the warning, wherever it stands, is the root cause.
EXPLAINED_BY: dict[str, tuple[str, ...]] = {
    Kind.EMPTY_OUTPUT.value: (Kind.CONTEXT_LENGTH.value,),
}
# A connection refused while the same log shows the model still loading after minutes: the server is not up
# yet, and the slow load is why (rule ids, not the kind: a 504 a gateway saw explains no refusal). A missing
# repository beside the hub's refusal of the token: the token is why.
EXPLAINED_BY_RULES: dict[str, tuple[str, ...]] = {
    Kind.CONNECTION.value: ("weight_loading_crawls", "model_load_elapsed_minutes"),
    # the hub answers 'Repository Not Found' for any 401; its words for a refused token say the token is why
    Kind.MODEL_NOT_FOUND.value: ("hf_token_refused",),
    # vLLM could not read its own version (a fork's wheel under another name): its platform detection fails next
    Kind.STARTUP_FAILURE.value: ("vllm_distribution_unnamed",),
}
# A start-up failure no rule recognised (named by where it was raised or by the phase) in a log that also
# shows a build that does not fit (a compiled extension missing, an ABI mismatch): the build explains it.
# (A traceback under the chat template's frames is named where it was raised: `exceptions.RAISED_IN`.)
EXPLAINED_WHEN_UNRECOGNISED: dict[str, tuple[str, ...]] = {
    Kind.STARTUP_FAILURE.value: (Kind.VERSION_MISMATCH.value,),
}


class Collector:
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
        """The root cause: the earliest finding of the strongest role present."""
        if not self.findings:
            return Report(HEALTHY, [], lines)
        root = min(self.findings, key=lambda f: ROLE_RANK.get(f.role, 9))
        causes = EXPLAINED_BY.get(root.kind, ())
        if root.basis != "rule":
            causes += EXPLAINED_WHEN_UNRECOGNISED.get(root.kind, ())
        cause_rules = EXPLAINED_BY_RULES.get(root.kind, ())
        cause = next((f for f in self.findings
                      if (f.kind in causes or f.rule in cause_rules) and ROLE_RANK.get(f.role, 9) <= 2), None)
        root = cause or root
        root.root = True
        rest = [f for f in self.findings if f is not root]
        return Report(root.kind, [root, *rest], lines)


def classify_lines(lines: Iterable[str], secrets: Iterable[str] = (), *, excerpt: bool = True) -> Report:
    """Classify a whole log given as lines (numbered from 1). `excerpt=False` for the last lines of a
    process known to have exited: a start-up it never finished is then its exit, not a stall."""
    numbered = ((lineno, line, False) for lineno, line in enumerate(lines, start=1))
    return _classify(numbered, secrets_of(secrets), excerpt=excerpt)


def _classify(numbered: Iterable[tuple[int, str, bool]], secrets: tuple[str, ...], *, excerpt: bool) -> Report:
    """Feed (lineno, text, replaced) lines to the line classifier and to the watches that read a whole log
    only, then settle the log's end (`_ended`). One loop for `classify_lines` and `classify_file`."""
    classifier = LineClassifier(secrets)
    collector = Collector()
    start, sse, fields, sentences = StartWatch(), SseUndecodedWatch(), AnswerFieldsWatch(), FailureSentenceWatch()
    read = [0]  # physical lines read: a joined line is numbered by its first piece

    def counted() -> Iterator[tuple[int, str, bool]]:
        for lineno, text, replaced in numbered:
            read[0] = lineno
            yield lineno, as_typed(text), replaced

    for lineno, text, replaced in unwrapped(without_margin(counted())):
        start.feed(text, lineno)
        sentences.feed(text, lineno)
        sse.feed(text, lineno, secrets)
        fields.feed(text, lineno, secrets)
        for finding in classifier.feed(text, lineno, replaced=replaced):
            collector.add(finding)
    return _ended(classifier, collector, (start, sentences) if excerpt else None, read[0], secrets, sse, fields)


def _ended(classifier: LineClassifier, collector: Collector,
           excerpt: tuple[StartWatch, FailureSentenceWatch] | None, count: int,
           secrets: tuple[str, ...], sse: SseUndecodedWatch, fields: AnswerFieldsWatch) -> Report:
    """The log's end: what is still open, then (file-level only, never the live monitor) a start-up whose
    last line began a step and that showed nothing else (`unfinished_start.py`), then a line that says in words
    that something failed (`failure_sentences.py`). A client's JSON error on an SSE line it printed
    (`sse_undecoded.py`) comes first: it is the root, what the engine reading says after."""
    if sse.found is not None:
        collector.add(sse.found)
    if fields.found is not None:  # a printed answer's fields (`answer_fields.py`)
        collector.add(fields.found)
    for finding in classifier.finish():
        collector.add(finding)
    if excerpt is not None and not collector.findings:
        start, sentences = excerpt
        last = start.finding(classifier.ready, secrets) or sentences.finding(classifier.ready, secrets)
        if last is not None:
            collector.add(last)
    return collector.report(count)


MARGIN_WINDOW = 64


def without_margin(numbered: Iterable[tuple[int, str, bool]]) -> Iterator[tuple[int, str, bool]]:
    """The lines without the indentation they all share: a log pasted as a Markdown code block or quoted in a
    mail is indented as a whole, and an indented line reads as a traceback's fragment. The margin is what the
    first `MARGIN_WINDOW` non-blank lines share (memory stays bounded); a later line keeps what it does not share."""
    lines = iter(numbered)
    window: list[tuple[int, str, bool]] = []
    texts: list[str] = []  # the window's non-blank lines
    for item in lines:
        window.append(item)
        if item[1].strip():
            texts.append(item[1])
            if len(texts) >= MARGIN_WINDOW:
                break
    margin = _common_margin(texts)
    for lineno, text, replaced in chain(window, lines):
        yield lineno, text[len(margin):] if margin and text.startswith(margin) else text, replaced


def _common_margin(texts: list[str]) -> str:
    """The leading spaces and tabs every text starts with ('' when none or no texts)."""
    if not texts:
        return ""
    margin = texts[0][: len(texts[0]) - len(texts[0].lstrip(" \t"))]
    for text in texts[1:]:
        while margin and not text.startswith(margin):
            margin = margin[:-1]
    return margin


def iter_file_lines(path: str | PathLike[str]) -> Iterator[tuple[int, str, bool]]:
    """Yield (lineno, text, replaced) reading line by line: memory stays bounded for any file size,
    lines longer than 64 KiB are cut, undecodable bytes become U+FFFD (replaced=True). A file that starts with a
    UTF-16 or UTF-32 byte-order mark is read in that encoding: Windows PowerShell 5 writes `docker logs vllm >
    llm.log` so, and read as UTF-8 such a file was one garbled line (a decode_error for a refused port)."""
    with open(path, "rb") as fh:
        wide = _wide_encoding(fh.read(4))
        fh.seek(0)
        if wide is not None:
            # the text was decoded once already by whoever wrote it: a U+FFFD in it is the log's own
            with io.TextIOWrapper(fh, encoding=wide, errors="replace", newline="\n") as text:
                for lineno, line in enumerate(iter(lambda: text.readline(MAX_LINE_BYTES), ""), start=1):
                    yield lineno, line, False
            return
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


def _wide_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark names, when it is not UTF-8's (UTF-32's mark starts like UTF-16's)."""
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    return "utf-16" if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else None


# Spaces a copy from a web page or a word processor leaves for plain ones: the indentation of a pretty-printed
# answer turned into no-break spaces is not JSON any more, and the empty answer in it read healthy.
_PAGE_SPACES = str.maketrans({"\u00a0": " ", "\u2007": " ", "\u202f": " "})


def as_typed(text: str) -> str:
    """A line as it was typed: without a byte-order mark (Notepad saves UTF-8 with one, and it hid the first
    line's prefix), page spaces as spaces, and no trailing blanks (a JSON log line padded by a paste is still JSON)."""
    return text.lstrip("\ufeff").translate(_PAGE_SPACES).rstrip()


def classify_file(path: str | PathLike[str], secrets: Iterable[str] = ()) -> Report:
    """Classify a log file; see `iter_file_lines` for how the file is read. A file is an excerpt: a start-up
    it shows stopping at a step is a stall (`unfinished_start.py`)."""
    return _classify(iter_file_lines(path), secrets_of(secrets), excerpt=True)
