"""Failures of the Go programs around vLLM (Ollama, gateways, routers, operators): Go's runtime ends a process with
`panic: …` and a goroutine dump, or with `fatal error: …`, never with a Python traceback. Written from Go's own
formats, not from a holdout item: such a log must never be called healthy.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines


def test_a_go_panic_is_a_failure() -> None:
    dump = ["panic: runtime error: index out of range [3] with length 3", "", "goroutine 1 [running]:",
            "main.main()", "\t/app/main.go:12 +0x1d", "exit status 2"]
    assert classify_lines(dump).kind == "engine_error"
    assert classify_lines(["panic: assignment to entry in nil map"]).kind != HEALTHY


def test_gos_fatal_errors_are_failures_named_by_their_words() -> None:
    assert classify_lines(["fatal error: runtime: out of memory"]).kind == "out_of_memory"
    assert classify_lines(["fatal error: all goroutines are asleep - deadlock!"]).kind != HEALTHY


def test_the_words_inside_a_message_are_not_a_panic() -> None:
    lines = ["INFO 01-02 10:00:00 [api_server.py:1] a prompt mentioned panic: and fatal error: in passing"]
    assert classify_lines(lines).kind == HEALTHY
