"""A line that says in plain words that something failed, in a log no other reading found anything in: the last
step of the ladder before `healthy`, for a whole log only (a pasted excerpt, `classify`), never the live monitor.

Nearly half of the rules' own example lines read healthy when their rule is left out (148 of 324, measured
2026-12-03, `tests/unit/test_failure_sentences.py`): a message no rule knows, printed without a level or an
exception's class, is passed over, and a held-out round's failure "called healthy" is most often one. Such a
line names no cause the ladder can trust, so it is a weak finding named by the phase (startup_failure before the
log shows serving, engine_error after), with the line as its evidence: the failure is not hidden, and its cause
is left to the reader, as the issue's ladder asks for an unrecognised error.

What is not read, because healthy logs print it or the other readings judged it: a line with a level (a
logger's line, ERROR included, was read by the rules and the phases, which know the harmless ones), a counter or
a table's row (`Failed requests: 0`, `| failed | 0 |`), a heading (`## Recent failed boot attempts`), a negation
(`no errors`, `0 failed`, `without failures`), a field's value (`code=killed`), and lines that echo a request
or an answer.
Memory is constant: only the first such line is kept.
"""

from __future__ import annotations

import re

from chainlit_app.i18n import Msg

from .findings import Finding, evidence_text
from .harmless import is_harmless
from .lineformat import parse_line, strip_ansi
from .prefilter import ECHO_LINES
from .taxonomy import Kind

RULE_ID = "failure_sentence"
MAX_LINE = 600  # longer lines are data (a body, a prompt), not a sentence
_FAILURE_WORDS = re.compile(
    r"(?i)\b(?:failed|failure|fatal|cannot|can't|could not|couldn't|unable to|not found|does not exist|"
    r"doesn't exist|no such|refused|denied|invalid|not supported|unsupported|not allowed|exceed(?:ed|s)|"
    r"timed out|out of memory|insufficient|mismatch(?:es|ed)?|incompatible|too old|not compatible|must be|"
    r"not permitted|crashed|killed|panicked|corrupt(?:ed)?|no available|not enough|is not a registered|"
    r"not recognized|unrecognized|unknown (?:model|quantization|argument|architecture|option)|"
    r"(?:buffer|stack|integer|arithmetic) overflow)\b")
# a count or a table cell: the word, then (soon) a zero, or a row of a table
_COUNTER = re.compile(r"(?i)\b(?:fail\w*|errors?|invalid)\b[^\n\d]{0,40}?[:=|]\s*\"?0(?:\.0+)?\b|^\s*\||\|\s*$")
# a field's value is no sentence (`code=killed, status=15/TERM`: systemd's words for a stop that was asked for)
_KEY_VALUE = re.compile(r"\b[\w.-]+=\S+")
# a Markdown heading, also behind an envelope (a quote, `grep -n`'s `file:6:`, `cat -n`'s number)
_HEADING = re.compile(r"(?:^|[\s|:>])#{1,6}\s+\S")
_NEGATED = re.compile(r"(?i)\b(?:no|0|zero|without|never)\s+(?:\w+\s+){0,2}?(?:errors?|fail\w*|failures)\b|"
                      # a line that says what it is not (Unsloth: "Not an error, but `device` is not supported in
                      # vLLM. Skipping.")
                      r"\bnot an? (?:error|failure|problem)\b")
# a sentence that says what it did instead is no failure (`[aiter] type hints mismatch, override to --> …`,
# `… not supported, falling back to …`, `… Will ignore error and continue.`, `Ignored error while …`)
_RECOVERED = re.compile(r"(?i)\b(?:fall(?:s|ing)? back|override to|overriding|defaulting to|instead|"
                        # huggingface_hub: "Could not cache non-existence of file. Will ignore error and continue.",
                        # "Ignored error while writing commit hash to …: [Errno 13] Permission denied"
                        r"ignor(?:e|ing) (?:the |this )?error and continu\w*|^ignored (?:an? )?error\b)")
# a sentence that opens by telling its reader what to do is an instruction: after `You must …` (a printed prompt's
# rule: `You must be able to correctly predict …`, `You must not answer questions that cannot be answered`) only what
# follows its first colon or comma may be a failure (`You must upgrade your driver: it is too old`); after `Please`
# the rest is read (`Please note the server failed to start`)
_AFTER_CLAUSE = re.compile(r"[:,]")
_INSTRUCTION = re.compile(
    r"(?i)^\W{0,3}(?:you (?:must|should|need to|have to|will need to|may need to)|(?P<please>please))\b")
# a printed text in Python's quotes is data (an answer `Output: ' … We cannot prevent the future.'`, a prompt):
# the sentence is what stands outside them. Only long single-quoted spans not opened by an apostrophe: a JSON
# body's double-quoted message ("invalid x-api-key") and a quoted name ('config.json') are the failure's words
_QUOTED = re.compile(r"(?<![A-Za-z])'[^'\n]{20,}'")
# a level the line parser did not take off (`(ServeController pid=1) WARNING 2026-08-19 … -- Cannot deregister …`)
_LEVEL_WORD = re.compile(r"^\W{0,3}(?:INFO|DEBUG|WARN(?:ING)?|ERROR|CRITICAL|FATAL|TRACE)\b")


class FailureSentenceWatch:
    """Keeps the first line of a log that says in words that something failed."""

    def __init__(self) -> None:
        self.first: tuple[int, str] | None = None

    def feed(self, line: str, lineno: int) -> None:
        if self.first is not None or len(line) > MAX_LINE or _FAILURE_WORDS.search(line) is None:
            return
        text = strip_ansi(line).strip()
        if not text or _HEADING.search(text) or _COUNTER.search(text) or _NEGATED.search(text):
            return
        parsed = parse_line(text)
        if parsed.level or _LEVEL_WORD.match(parsed.message) or any(echo in text for echo in ECHO_LINES) \
                or is_harmless(parsed):  # a line known to be normal says nothing failed
            return
        sentence = _QUOTED.sub(" ", _KEY_VALUE.sub(" ", parsed.message))
        if (instruction := _INSTRUCTION.match(sentence)) is not None:
            clause = _AFTER_CLAUSE.search(sentence, instruction.end())
            if clause is not None:
                sentence = sentence[clause.end():]
            elif instruction.group("please"):
                sentence = sentence[instruction.end():]
            else:
                sentence = ""
        if _FAILURE_WORDS.search(sentence) and not _RECOVERED.search(sentence):
            self.first = (lineno, text)

    def finding(self, serving: bool, secrets: tuple[str, ...] = ()) -> Finding | None:
        """A weak finding named by the phase, for a log in which nothing else was found."""
        if self.first is None:
            return None
        kind = Kind.ENGINE_ERROR if serving else Kind.STARTUP_FAILURE
        return Finding(
            kind=kind.value,
            line=self.first[0],
            text=evidence_text(self.first[1], secrets),
            hint=Msg("hint.failure_sentence"),
            rule=RULE_ID,
            role="weak",
            basis="phase",
        )
