"""The one way a test asserts a duration, so that the figure compared and the figure printed are the same.

The project's tests avoid timing assertions (a shared machine is noisy); the few that state a promise
(a crash is shown within 2 s, a refusal comes before vLLM would even start) go through `assert_within`.
"""

from __future__ import annotations


def assert_within(seconds: float, limit: float, what: str) -> None:
    """Fail unless `seconds` < `limit`; the message names both figures and what was timed."""
    assert seconds < limit, f"{what} took {seconds:.2f} s (limit {limit:g} s)"
