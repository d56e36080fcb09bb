"""Rules as data: which message means which failure, under which conditions, and how much it says.

A rule matches on the message text (a regular expression) and, when it states them, on the exception
type of the traceback the line ends, the module the exception was raised in, the line's level and the
phase of the server's life. Every rule that matches is a candidate; the most specific one wins (the
one stating the most conditions), ties broken by the order of the tables (`rule_tables.py`: the
start-up tables `rules_model`, `rules_resources`, `rules_builds`, then `rules_serving`, `rules_status`
and `rules_wrappers`, each ordered specific-before-general). Each rule keeps an id and real example
lines that a test checks.

Each rule has a role:
  decisive - the line names a cause (the earliest one is the root cause of a log);
  weak     - a symptom that decides only when no decisive line exists;
  wrapper  - a consequence such as "Engine core initialization failed. See root cause above":
             it points back at the traceback before it and only labels a log in which nothing else was found.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .phases import Phase
from .taxonomy import Kind

Role = Literal["decisive", "weak", "wrapper"]
ALL_PHASES: frozenset[Phase] = frozenset(Phase)
STARTING: frozenset[Phase] = frozenset({Phase.BOOT, Phase.LOADING})
SERVING: frozenset[Phase] = frozenset({Phase.SERVING, Phase.STOPPING})


@dataclass(frozen=True)
class Rule:
    """One message pattern and the conditions under which it applies. `needles` are lower-case literals
    taken from the pattern itself, one per top-level alternative, so any matching line contains at least
    one of them; they feed the cheap pre-filter that lets ordinary INFO lines through without running the
    regular expressions."""

    id: str
    kind: Kind
    pattern: re.Pattern[str]
    needles: tuple[str, ...]
    role: Role = "decisive"
    hint: str = ""
    in_frames: bool = False  # may match traceback frame/code lines (all others skip them)
    examples: tuple[str, ...] = ()
    phases: frozenset[Phase] = ALL_PHASES
    exception_types: tuple[str, ...] = ()  # class names (last dotted part) of the traceback's exception
    raised_in: tuple[str, ...] = ()  # path fragments of the innermost vLLM/transformers frame
    levels: tuple[str, ...] = ()  # ERROR, WARNING, ...
    check: Callable[[str], bool] | None = None  # what a pattern cannot say (figures compared), on the message
    # A warning that something will not work, which a server that then served disproves unless a later failure
    # names this word (torchao skipping its C++ extensions: "torchao"); empty for every other rule (`whole_log.py`)
    disproved_by_serving: str = ""
    # A slowdown vLLM warns of while an offline batch runs (requests preempted for KV cache): held until the batch's
    # progress bar says whether it went on (`printed.py`); False for every other rule
    held_for_batch: bool = False

    @property
    def specificity(self) -> int:
        """How many conditions the rule states: the message pattern plus each optional condition."""
        return (
            1
            + bool(self.exception_types)
            + bool(self.raised_in)
            + bool(self.levels)
            + (self.phases != ALL_PHASES)
        )


@dataclass(frozen=True, slots=True)
class Context:
    """What is known about a line besides its text when the rules are asked about it."""

    phase: Phase = Phase.BOOT
    frame: bool = False  # a traceback frame or code line
    exception_type: str = ""  # set on the exception line that ends a traceback
    raised_in: str = ""
    level: str = ""


_SPECIAL = set("()[]{}.^$*+?|")
_QUOTED_BODY = re.compile(r'\{\\?"error\\?":')  # an error body relayed in a message, maybe escaped in a string


def _class_end(regex: str, i: int) -> int:
    """Index just after the character class that starts at regex[i] == '['."""
    j = i + 1
    if j < len(regex) and regex[j] == "^":
        j += 1
    if j < len(regex) and regex[j] == "]":
        j += 1
    while j < len(regex) and regex[j] != "]":
        j += 2 if regex[j] == "\\" else 1
    return j + 1


def _split_top(regex: str) -> list[str]:
    """Split a pattern at its top-level '|' (not inside groups or classes)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(regex, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(regex[start:i])
            start = i + 1
        i += 1
    parts.append(regex[start:])
    return parts


def _longest_literal(branch: str) -> str:
    """Longest run of characters that every match of `branch` must contain (groups, classes and
    quantified characters end a run, so the result is conservative)."""
    runs, run, i, depth = [], "", 0, 0
    while i < len(branch):
        ch = branch[i]
        nxt = branch[i + 1] if i + 1 < len(branch) else ""
        literal: str | None = None
        if depth:
            if ch == "\\":
                i += 2
                continue
            if ch == "[":
                i = _class_end(branch, i)
                continue
            depth += {"(": 1, ")": -1}.get(ch, 0)
            i += 1
            if depth:
                continue
        elif ch == "\\":
            literal = nxt if nxt and not nxt.isalnum() else None
            i += 2
        elif ch == "[":
            i = _class_end(branch, i)
        elif ch == "{":
            i = branch.find("}", i) + 1 or len(branch)
        elif ch == "(":
            depth = 1
            i += 1
        elif ch in _SPECIAL:
            i += 1
        else:
            literal = ch
            i += 1
        quantified = i < len(branch) and branch[i] in "?*+{"
        if literal is not None and not quantified:
            run += literal
        else:
            runs.append(run)
            run = ""
    runs.append(run)
    return max(runs, key=len).lower()


def literal_needles(regex: str) -> tuple[str, ...]:
    """One lower-case literal per top-level alternative; empty when an alternative has no literal of
    at least 3 characters (or one non-ASCII character): such a rule could not be pre-filtered, and a
    test forbids it."""
    needles = [_longest_literal(b) for b in _split_top(regex)]
    if any(len(n) < 3 and (not n or n.isascii()) for n in needles):
        return ()
    return tuple(dict.fromkeys(needles))



def rule(
    rule_id: str,
    kind: Kind,
    regex: str,
    *,
    role: Role = "decisive",
    hint: str = "",
    in_frames: bool = False,
    case: bool = False,
    examples: tuple[str, ...] = (),
    phases: frozenset[Phase] = ALL_PHASES,
    exception_types: tuple[str, ...] = (),
    raised_in: tuple[str, ...] = (),
    levels: tuple[str, ...] = (),
    check: Callable[[str], bool] | None = None,
    disproved_by_serving: str = "",
    held_for_batch: bool = False,
) -> Rule:
    """Build a rule; the needles for the pre-filter are derived from the pattern."""
    flags = 0 if case else re.IGNORECASE
    return Rule(
        rule_id,
        kind,
        re.compile(regex, flags),
        literal_needles(regex),
        role,
        hint,
        in_frames,
        examples,
        phases,
        exception_types,
        raised_in,
        levels,
        check,
        disproved_by_serving,
        held_for_batch,
    )


def applies(candidate: Rule, message: str, context: Context) -> bool:
    """True when every condition the rule states holds for this line."""
    if context.frame and not candidate.in_frames:
        return False
    if context.phase not in candidate.phases:
        return False
    if candidate.levels and context.level not in candidate.levels:
        return False
    if candidate.exception_types and context.exception_type.rsplit(".", 1)[-1] not in candidate.exception_types:
        return False
    if candidate.raised_in and not any(part in context.raised_in for part in candidate.raised_in):
        return False
    return candidate.pattern.search(message) is not None and (candidate.check is None or candidate.check(message))


def _rank(candidate: Rule) -> tuple[bool, int]:
    """Non-wrappers first, then the number of conditions."""
    return candidate.role != "wrapper", candidate.specificity


def most_specific(rules: tuple[Rule, ...], message: str, context: Context) -> Rule | None:
    """The matching rule with the most conditions; the earlier one in `rules` on a tie. A wrapper ranks below
    every decisive rule: a wrapper line that quotes its cause ('Exception in worker ... while processing method
    determine_num_available_blocks: CUDA out of memory') is named by the cause. A symptom that quotes a server's
    error body ('Failed to load model: … {"error":{"message":"… default chat template is no longer allowed"}}')
    yields to any rule but a wrapper on the body. A rule's regex only runs when one of its needles occurs in the
    line."""
    best = _most_specific(rules, message, context)
    if best is not None and best.role == "weak" and (body := _QUOTED_BODY.search(message)) is not None:
        inner = _most_specific(rules, message[body.start():], context)  # what the server said, relayed
        if inner is not None and inner.role != "wrapper":
            return inner
    return best


def _most_specific(rules: tuple[Rule, ...], message: str, context: Context) -> Rule | None:
    low = message.lower()
    best: Rule | None = None
    for candidate in rules:
        if best is not None and _rank(candidate) <= _rank(best):
            continue
        for needle in candidate.needles:
            if needle in low:
                if applies(candidate, message, context):
                    best = candidate
                break
    return best
