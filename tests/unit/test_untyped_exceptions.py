"""An exception printed without its class is still an exception (issue 11: never `healthy` while something
failed). Each message here is CPython's own: the test raises the error for real and reads `str(exc)` back as a
log line, as `print(exc)` or a poster quoting the message alone leaves it. Before the table every one of them
read healthy (round 34: smolagents #1896's `expected string or bytes-like object, got 'NoneType'`).
"""

from __future__ import annotations

import io
import json
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jinja2
import pytest

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.exception_shapes import relayed_exception, untyped_python_exception
from chainlit_app.diagnostics.lineformat import parse_line


def _none() -> Any:  # typed Any: the calls below fail at run time, on purpose, not in the type checker
    return None


def _key(key: object) -> Any:
    return key


def _call(function: Callable[..., object]) -> object:
    return function()


def _input_without_terminal() -> str:
    """input() with standard input at its end, as in a container without a terminal: EOFError."""
    saved, sys.stdin = sys.stdin, io.StringIO("")
    try:
        return input()
    finally:
        sys.stdin = saved


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


RAISERS: dict[str, Callable[[], object]] = {
    "re_on_none": lambda: re.match("x", _none()),
    "subscript_none": lambda: _none()[0],
    "len_of_none": lambda: len(_none()),
    "concatenate_none": lambda: "a" + _none(),
    "iterate_none": lambda: list(_none()),
    "in_none": lambda: "x" in _none(),
    "attribute_of_none": lambda: _none().strip(),
    "list_index": lambda: [][0],
    "tuple_index": lambda: _key(())[0],
    "string_index": lambda: ""[1],
    "string_indices": lambda: "abc"[_key("x")],
    "json_empty": lambda: json.loads(""),
    "json_single_quotes": lambda: json.loads("{'a': 1}"),
    "int_literal": lambda: int("a"),
    "float_literal": lambda: float("x"),
    "operand_none": lambda: 1 + _none(),
    "call_none": lambda: _none()(),
    "unexpected_keyword": lambda: json.dumps({}, no_such_argument=1),
    "missing_argument": lambda: _call(json.dumps),
    "no_module": lambda: __import__("vllm_surely_absent_module"),
    "cannot_import": lambda: exec("from json import no_such_name"),
    "codec_encode": lambda: "é".encode("ascii"),
    "division": lambda: 1 / 0,
    "file_not_found": lambda: Path("/nonexistent-dir/config.json").read_text(),
    "connection_refused": lambda: socket.create_connection(("127.0.0.1", _closed_port()), timeout=5),
    "join_none": lambda: ",".join(["a", _none()]),
    "name_undefined": lambda: eval("worker"),  # the NameError CPython raises for an unbound name
    "input_without_terminal": lambda: _input_without_terminal(),
    "command_failed": lambda: subprocess.run(["false"], check=True),
    "template_token": lambda: jinja2.Environment().from_string("{{ messages b }}"),
    "template_unclosed": lambda: jinja2.Environment().from_string("{% for m in messages %}"),
    "template_unknown_tag": lambda: jinja2.Environment().from_string("{% generation %}"),
    "http_404": lambda: httpx.Response(404, request=httpx.Request("POST", "http://127.0.0.1:8000/v1/chat/completions"))
    .raise_for_status(),
}


def _raised(name: str) -> BaseException:
    try:
        RAISERS[name]()
    except Exception as exc:  # the point is the exception each raises
        return exc
    raise AssertionError(f"{name} raised nothing")


@pytest.mark.parametrize("name", sorted(RAISERS))
def test_cpythons_message_without_its_class_is_read_as_that_class(name: str) -> None:
    exc = _raised(name)
    line = str(exc).splitlines()[0]  # httpx adds a line of advice under its message
    read = untyped_python_exception(parse_line(line), 1)
    assert read is not None, line
    assert read.exception_type == type(exc).__name__, (line, read.exception_type)
    assert classify_lines([line]).kind != HEALTHY, line


@pytest.mark.parametrize("line", [
    "The error was 'NoneType' object is not subscriptable, which means the content was None.",
    "list index out of range errors are common in beginners' code",
    "INFO 01-02 10:00:00 [loader.py:1] No module named 'flash_attn' is fine: the fallback is used",
    "Expecting value",
])
def test_a_sentence_that_quotes_a_message_is_not_the_exception(line: str) -> None:
    assert untyped_python_exception(parse_line(line), 1) is None


@pytest.mark.parametrize(("line", "exception_type"), [
    ("UNAVAILABLE: Internal: AssertionError: vLLM Triton backend must be configured to use decoupled model "
     "transaction policy", "AssertionError"),  # vLLM #1647, Triton's vLLM backend
    ("[StatusCode.INTERNAL] Internal: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
     "OutOfMemoryError"),
])
def test_an_exception_behind_a_servers_status_labels_is_that_exception(line: str, exception_type: str) -> None:
    read = relayed_exception(parse_line(line), 1)
    assert read is not None and read.exception_type == exception_type
    assert classify_lines([line]).kind != HEALTHY


@pytest.mark.parametrize("line", ["Internal: the model is ready", "UNAVAILABLE: try again later",
                                  "Unknown: AssertionErrors are rare"])
def test_a_status_label_without_an_exception_is_no_exception(line: str) -> None:
    assert relayed_exception(parse_line(line), 1) is None


def test_a_programs_error_label_with_its_message_on_the_next_line_is_an_error() -> None:
    # smolagents #1896 as posted: the label, CPython's message, the program's advice
    report = classify_lines(["Error in code parsing:", "expected string or bytes-like object, got 'NoneType'",
                             "Make sure to provide correct code blobs."])
    assert report.kind != HEALTHY
    assert {f.line for f in report.findings} >= {1, 2}
