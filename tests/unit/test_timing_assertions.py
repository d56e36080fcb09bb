"""Every timing assertion in the test suite states the figure it compares against (issue 14, item 18).

A message that says "within 2 s" over a comparison with 2.5 misleads whoever reads a failure. Durations
are asserted through tests.timing.assert_within (one figure for both); a bare `assert` on a duration must
carry a message that names each number of its comparison.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TypeGuard

import pytest

from tests.timing import assert_within

TESTS = Path(__file__).resolve().parents[1]
# durations, and the clock readings a duration is taken from
TIMING_NAMES = {"elapsed", "seconds", "waited", "worst", "cold_s", "warm_s", "took",
                "started", "killed", "made", "written"}
CLOCKS = {"monotonic", "perf_counter", "time"}
ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _is_timing(node: ast.AST) -> bool:
    """A comparison operand that is a duration: a clock read, or a name the suite uses for durations."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in CLOCKS:
            return True
        if isinstance(sub, ast.Name) and sub.id in TIMING_NAMES:
            return True
    return False


def _message_text(msg: ast.expr | None) -> str:
    if msg is None:
        return ""
    return " ".join(str(n.value) for n in ast.walk(msg) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _is_number(node: ast.AST) -> TypeGuard[_Number]:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


class _Number(ast.Constant):
    value: float


def _figure(value: float) -> str:
    return f"{value:g}"


def unstated_timing_asserts(source: str) -> list[str]:
    """`assert <duration> <op> <number>` whose message does not name every number compared."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare)):
            continue
        compare = node.test
        if not all(isinstance(op, ORDERINGS) for op in compare.ops):
            continue
        operands = [compare.left, *compare.comparators]
        if not any(_is_timing(o) for o in operands):
            continue
        numbers = [n.value for o in operands for n in ast.walk(o) if _is_number(n)]
        text = _message_text(node.msg)
        missing = [_figure(v) for v in numbers if _figure(v) not in text]
        if not text or missing:
            problems.append(f"line {node.lineno}: {ast.unparse(compare)} (message {text!r}, missing {missing})")
    return problems


def test_every_timing_assertion_in_the_suite_states_its_figure() -> None:
    found = {}
    for path in sorted(TESTS.rglob("*.py")):
        problems = unstated_timing_asserts(path.read_text())
        if problems:
            found[str(path.relative_to(TESTS))] = problems
    assert not found, f"timing assertions whose message does not state the limit: {found}"


def test_the_check_catches_a_message_with_another_figure() -> None:
    bad = 'assert time.monotonic() - killed < 2.5, "the user must hear about the crash within 2 s"\n'
    good = 'assert elapsed >= 0.9, f"stop took {elapsed:.2f} s (at least 0.9 s)"\n'
    silent = "assert warm_s < cold_s / 2\n"
    assert unstated_timing_asserts(bad) and unstated_timing_asserts(silent)
    assert unstated_timing_asserts(good) == []


def test_assert_within_names_the_limit_it_compares_with() -> None:
    assert_within(0.2, 2.5, "a quick thing")
    with pytest.raises(AssertionError, match=r"a slow thing took 3\.00 s \(limit 2\.5 s\)"):
        assert_within(3.0, 2.5, "a slow thing")
