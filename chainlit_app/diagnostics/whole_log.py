"""A whole log: feed every line, settle what is still open at its end, and choose the root cause.

The root cause is the earliest finding of the strongest role present: decisive, then fallback, weak,
wrapper; unless the log also names what explains that finding (`EXPLAINED_BY`). Later findings are listed
after it as consequences. Memory stays bounded for any file size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from os import PathLike
from typing import BinaryIO

from .answer_fields import ONE_TOKEN_ID as PRINTED_ONE_TOKEN
from .answer_fields import RULE_ID as PRINTED_ANSWER_FIELDS
from .answer_fields import AnswerFieldsWatch
from .classifier import LineClassifier
from .disproved import ServingDisproves
from .failure_sentences import RULE_ID as FAILURE_SENTENCE
from .failure_sentences import FailureSentenceWatch
from .findings import ROLE_RANK, Finding, Report
from .hard_wrap import unwrapped
from .lineformat import split_after_bar
from .optional_extension import DeviceWatch, without_absent_extension
from .pasted_text import as_typed, iter_file_lines, iter_stream_lines, without_collector_prefix, without_margin
from .redact import secrets_of
from .sse_undecoded import RULE_ID as SSE_LINE_PARSED_AS_JSON
from .sse_undecoded import SseUndecodedWatch
from .taxonomy import HEALTHY, Kind
from .unfinished_start import STEPS, StartWatch

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
    devices = DeviceWatch()
    read = [0]  # physical lines read: a joined line is numbered by its first piece

    def counted() -> Iterator[tuple[int, str, bool]]:
        for lineno, text, replaced in numbered:
            read[0] = lineno
            yield lineno, as_typed(text), replaced

    records = ((lineno, text, replaced) for lineno, joined, replaced in unwrapped(without_margin(counted()))
               for text in split_after_bar(without_collector_prefix(joined)))  # a record behind a bar's redraw
    for lineno, text, replaced in records:
        start.feed(text, lineno)
        devices.feed(text)
        sse.feed(text, lineno, secrets)
        fields.feed(text, lineno, secrets)
        found = classifier.feed(text, lineno, replaced=replaced)
        for finding in found:
            collector.add(finding)
        # a warning's words say what it warns of, not what failed; a line a rule named was judged by that rule
        # (and stays judged if the log disproves it, `Rule.disproved_by_serving`)
        if not classifier.in_warning_text and not found:
            sentences.feed(text, lineno)
    if devices.not_cuda:  # no vllm._C is how a CPU, Neuron, TPU or plugin build is made (`optional_extension.py`)
        collector.findings[:] = without_absent_extension(collector.findings)
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
    if classifier.served:  # warnings the serving disproved (`disproved.py`)
        notes = ServingDisproves()
        for finding in collector.findings:
            notes.feed(finding)
        gone = {id(note) for note in notes.withdrawn()}
        collector.findings[:] = [f for f in collector.findings if id(f) not in gone]
    if excerpt is not None and not collector.findings:
        start, sentences = excerpt
        last = start.finding(classifier.ready, secrets) or sentences.finding(classifier.ready, secrets)
        if last is not None:
            collector.add(last)
    return collector.report(count)


def classify_file(path: str | PathLike[str], secrets: Iterable[str] = ()) -> Report:
    """Classify a log file; see `iter_file_lines` for how the file is read. A file is an excerpt: a start-up
    it shows stopping at a step is a stall (`unfinished_start.py`)."""
    return _classify(iter_file_lines(path), secrets_of(secrets), excerpt=True)


def classify_stream(fh: BinaryIO, secrets: Iterable[str] = ()) -> Report:
    """Classify a log read from a binary stream (standard input), as `classify_file` reads a file."""
    return _classify(iter_stream_lines(fh), secrets_of(secrets), excerpt=True)
