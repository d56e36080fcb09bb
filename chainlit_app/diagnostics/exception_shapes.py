"""Exceptions printed in shapes other than a plain traceback: torch's or CPython's message without its class, an
exception relayed behind a status label, a whole traceback folded onto one line, and an exception group's
tracebacks behind their `|` gutter. Each is read as the exception it is, so that it is never passed over.
"""

from __future__ import annotations

import errno
import re
from dataclasses import replace

from .events import MAX_FRAMES, Traceback
from .grpc_status import HTTP_STATUS as _GRPC_HTTP_STATUS
from .lineformat import ParsedLine

# torch's messages for a tensor of the wrong shape, device or type, printed without their class (a poster
# quoting the message alone, a wrapper logging str(exc)): the words are torch's own, so the class is known.
UNTYPED_TORCH_MESSAGES: tuple[tuple[str, str], ...] = (
    ("dimension out of range (expected to be in range of", "IndexError"),
    ("index out of range in self", "IndexError"),
    ("the expanded size of the tensor (", "RuntimeError"),
    ("the size of tensor a (", "RuntimeError"),
    ("mat1 and mat2 shapes cannot be multiplied", "RuntimeError"),
    ("expected all tensors to be on the same device", "RuntimeError"),
)
# CPython's own messages for its built-in exceptions (and two libraries', at the end), printed without their
# class: `print(exc)`, a wrapper's `str(exc)` on a line of its own, a poster quoting the message alone
# (smolagents #1896: `expected string or bytes-like object, got 'NoneType'`). The words are the interpreter's and
# the libraries': tests/unit/test_untyped_exceptions.py raises each for real and reads its str() back as its
# class. Whole lines only: a sentence that quotes one is not read.
_UNTYPED_PYTHON: tuple[tuple[str, str], ...] = (
    (r"expected string or bytes-like object(?:, got '[\w.]+')?", "TypeError"),
    (r"'[\w.]+' object is not (?:subscriptable|iterable|callable)", "TypeError"),
    (r"object of type '[\w.]+' has no len\(\)", "TypeError"),
    (r"can only concatenate \w+ \(not \"[\w.]+\"\) to \w+", "TypeError"),
    (r"argument of type '[\w.]+' is not iterable", "TypeError"),
    (r"unsupported operand type\(s\) for [^:]{1,6}: '[\w.]+' and '[\w.]+'", "TypeError"),
    (r"(?:string|str) indices must be integers(?: or slices)?(?:, not '[\w.]+')?", "TypeError"),
    (r"[\w.<>]+\(\) (?:got an unexpected keyword argument '\w+'|missing \d+ required (?:positional|keyword-only) "
     r"arguments?: '\w+'(?:,? (?:and )?'\w+')*)", "TypeError"),
    (r"'[\w.]+' object has no attribute '\w+'", "AttributeError"),
    (r"(?:list|tuple|string) index out of range", "IndexError"),
    (r"Expecting (?:value|property name enclosed in double quotes|',' delimiter|':' delimiter): line \d+ column "
     r"\d+ \(char \d+\)", "JSONDecodeError"),
    (r"(?:invalid literal for int\(\) with base \d+|could not convert string to float): '.*'", "ValueError"),
    (r"No module named '[\w.]+'(?:; '[\w.]+' is not a package)?", "ModuleNotFoundError"),
    (r"cannot import name '\w+' from '[\w.]+'(?: \([^()]*\))?", "ImportError"),
    (r"'[\w-]+' codec can't encode characters? .{1,40} in position \d+(?:-\d+)?: .{1,80}", "UnicodeEncodeError"),
    (r"(?:integer |float )?division (?:or modulo )?by zero", "ZeroDivisionError"),
    (r"\[Errno \d+\] [\w ,'-]{3,60}(?:: '[^']*')?", "OSError"),  # its class by its number, as CPython picks it
    (r"sequence item \d+: expected str instance, [\w.]+ found", "TypeError"),  # str.join
    (r"name '\w+' is not defined", "NameError"),
    (r"EOF when reading a line", "EOFError"),  # input() with no terminal (a trust_remote_code prompt in a container)
    (r"Command '.{1,400}' returned non-zero exit status -?\d+\.?", "CalledProcessError"),
    # two libraries' own words: httpx's raise_for_status (its status decides: the exception table's HTTP rows) and
    # jinja2's parser refusing a template (a chat template that does not compile)
    (r"(?:Client|Server) error '\d{3} [^']{1,60}' for url '[^']+'", "HTTPStatusError"),
    (r"expected token '[^']+', got '[^']*'|Unexpected end of template\. Jinja was looking for .+|"
     r"Encountered unknown tag '\w+'\..*", "TemplateSyntaxError"),
)
_UNTYPED_PYTHON_LINE = re.compile("(?:" + "|".join(f"(?P<t{i}>{words})" for i, (words, _type) in
                                                   enumerate(_UNTYPED_PYTHON)) + r")\s*$")
# lower-case words every message above holds: the prefilter's needles for them
UNTYPED_PYTHON_NEEDLES = ("expected string or bytes", "object is not ", "has no len()", "can only concatenate",
                          "is not iterable", "unsupported operand", "indices must be integers", "() got an unexpected",
                          "required positional", "required keyword", "has no attribute", "index out of range",
                          "expecting ", "invalid literal for", "could not convert", "no module named",
                          "cannot import name", "codec can't encode", "division", "[errno ", "expected str instance",
                          "is not defined", "eof when reading", "returned non-zero exit status", "' for url '",
                          "expected token '", "unexpected end of template", "encountered unknown tag")


def _errno_class(number: int) -> str:
    """The OSError subclass CPython raises for an errno (ENOENT: FileNotFoundError, ECONNREFUSED:
    ConnectionRefusedError), asked of CPython itself."""
    return type(OSError(number, errno.errorcode.get(number, ""))).__name__


# The status a server relays an exception under, before the exception's own line: gRPC's status codes (the names
# of grpc.StatusCode, bare or as `[StatusCode.UNAVAILABLE]`) and Triton's error codes in its words
# (TRITONSERVER_ErrorCodeString): `UNAVAILABLE: Internal: AssertionError: vLLM Triton backend must be configured to
# use decoupled model transaction policy` (vLLM #1647) is that AssertionError.
GRPC_STATUS_NAMES = tuple(_GRPC_HTTP_STATUS)  # gRPC's own names, one table (`grpc_status.py`)
_TRITON_CODES = ("Unknown", "Internal", "Not found", "Invalid argument", "Unavailable", "Unsupported", "Already exists",
                 "Cancelled")
_STATUS_LABELS = re.compile(
    r"^(?:(?:\[StatusCode\.[A-Z_]+\]|" + "|".join(("OK", *GRPC_STATUS_NAMES, *_TRITON_CODES)) + r"):?\s+)+")
_RELAYED = re.compile(r"(?P<type>(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): (?P<msg>\S.*)$")


# A traceback whose line breaks a page or a chat folded away, so frames, code and exception share one line:
# `ile ".../tokenization_baichuan.py", line 101, in vocab_size return self.sp_model.get_piece_size()
# AttributeError: 'BaichuanTokenizer' object has no attribute 'sp_model'` (Baichuan2 #204). The exception is
# the first exception-named class after the last frame.
_FLAT_FRAME = re.compile(r"(?P<path>[^\s\"“”]+)[\"“”]\s*,\s*line \d+,? in (?P<func>[\w<>.]+)")
_FLAT_EXCEPTION = re.compile(r"\s(?P<type>(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)):\s")
# Python 3.11's exception groups (anyio and Starlette in vLLM's API server) print each sub-exception's traceback
# behind a gutter: "  | Traceback (most recent call last):", "    |   File …", "    | TypeError: …" (vLLM #39683).
# Without its gutter such a line is the traceback line it stands for; a table's row ("| gsm8k | 3 |") is not.
_GROUP_GUTTER = re.compile(r"^\s*[|+] (?=\s*(?:Traceback \(most recent call last\)|Exception Group Traceback|"
                           r"File \"|(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Group|Exit|Interrupt)(?::|$)))")


def untyped_torch_exception(parsed: ParsedLine, lineno: int) -> Traceback | None:
    """torch's message printed without its class (`UNTYPED_TORCH_MESSAGES`), as the exception it is."""
    message = parsed.message.strip()
    low = message.lower()
    for words, exception_type in UNTYPED_TORCH_MESSAGES:
        if low.startswith(words):
            return Traceback(first_line=lineno, line=lineno, exception_type=exception_type, message=message,
                             process=parsed.process, text=message)
    return None


# A message quoted whole, as a poster or a client's error field writes it (ipex-llm #13012:
# `"'OpenAIServingTokenization' object has no attribute 'show_available_models'"`): read inside the quotes.
_QUOTED_WHOLE = re.compile(r'^(?:"(?P<d>.+)"|“(?P<c>.+)”|`(?P<b>[^`]+)`)$')


def untyped_python_exception(parsed: ParsedLine, lineno: int) -> Traceback | None:
    """CPython's message printed without its class (`_UNTYPED_PYTHON`), as the exception it is."""
    message = parsed.message.strip()
    quoted = _QUOTED_WHOLE.match(message)
    if quoted is not None and quoted.lastgroup is not None:
        message = quoted[quoted.lastgroup].strip()
    found = _UNTYPED_PYTHON_LINE.match(message) if len(message) < 2000 else None
    if found is None or found.lastgroup is None:
        return None
    exception_type = _UNTYPED_PYTHON[int(found.lastgroup[1:])][1]
    if exception_type == "OSError":
        exception_type = _errno_class(int(re.findall(r"\d+", message)[0]))
    return Traceback(first_line=lineno, line=lineno, exception_type=exception_type, message=message,
                     process=parsed.process, text=message)


def relayed_exception(parsed: ParsedLine, lineno: int) -> Traceback | None:
    """An exception a server relays behind its status labels (`_STATUS_LABELS`), as that exception."""
    message = parsed.message.strip()
    labels = _STATUS_LABELS.match(message)
    relayed = _RELAYED.match(message, labels.end()) if labels is not None else None
    if relayed is None:
        return None
    return Traceback(first_line=lineno, line=lineno, exception_type=relayed.group("type").rsplit(".", 1)[-1],
                     message=relayed.group("msg").strip(), process=parsed.process, text=message)


def flattened_traceback(parsed: ParsedLine, lineno: int) -> Traceback | None:
    """A whole traceback printed on one line (`_FLAT_FRAME`): its frames and its exception, or None."""
    message = parsed.message
    found = list(_FLAT_FRAME.finditer(message))
    if not found:
        return None
    frames = [(m.group("path"), m.group("func")) for m in found][:MAX_FRAMES]
    last_frame_end = found[-1].end()
    exception = _FLAT_EXCEPTION.search(message, last_frame_end)  # its message may name other classes
    if exception is None:
        return None
    return Traceback(first_line=lineno, line=lineno, exception_type=exception.group("type"),
                     message=message[exception.end():].strip(), frames=frames, process=parsed.process,
                     text=message[exception.start("type"):].strip(),
                     last_code=message[last_frame_end:exception.start()].strip()[:200])


def without_group_gutter(parsed: ParsedLine) -> ParsedLine:
    """The line without an exception group's `|` gutter (`_GROUP_GUTTER`), or the line as it was."""
    gutter = _GROUP_GUTTER.match(parsed.message)
    return replace(parsed, message=parsed.message[gutter.end():]) if gutter else parsed
