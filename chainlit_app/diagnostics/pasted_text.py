"""How a log reaches the classifier: the file's encoding, the envelope it was collected or pasted in, the margin it
was quoted with. Each step gives back the lines as the process wrote them, numbered as `grep -n` numbers the
file; memory stays bounded (line by line, and a window of the first lines where a whole log decides).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from os import PathLike
from typing import TYPE_CHECKING, AnyStr, BinaryIO

from .byte_order import named_by_mark

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

MAX_LINE_BYTES = 64 * 1024


def iter_file_lines(path: str | PathLike[str]) -> Iterator[tuple[int, str, bool]]:
    """Yield (lineno, text, replaced) of a file; see `iter_stream_lines`."""
    with open(path, "rb") as fh:
        yield from iter_stream_lines(fh)


def iter_stream_lines(fh: BinaryIO) -> Iterator[tuple[int, str, bool]]:
    """Yield (lineno, text, replaced) reading line by line (a file, or standard input: `docker logs vllm 2>&1 |
    classify -`): memory stays bounded for any size, lines longer than 64 KiB are cut, undecodable bytes become
    U+FFFD (replaced=True). A stream that starts with a UTF-16 or UTF-32 byte-order mark is read in that encoding:
    Windows PowerShell 5 writes `docker logs vllm > llm.log` so, and read as UTF-8 such a file was one garbled line
    (a decode_error for a refused port)."""
    fh, head = _with_head(fh)
    wide = _wide_encoding(head)
    if wide is not None:
        yield from _wide_lines(fh, wide)
        return
    for lineno, chunk in enumerate(_cut_lines(fh.readline, b"\n"), start=1):
        try:
            yield lineno, chunk.decode("utf-8"), False
        except UnicodeDecodeError:
            yield lineno, chunk.decode("utf-8", errors="replace"), True


def _with_head(fh: BinaryIO) -> tuple[BinaryIO, bytes]:
    """The stream and its first 4 bytes, still unread. A file and standard input are buffered, so they can be
    looked at without reading them; but a pipe's first read may hold only 2 of them, and a UTF-32-LE mark
    (FF FE 00 00) cut there reads as UTF-16's: then they are read and put back in front."""
    if not isinstance(fh, io.BufferedReader):
        return fh, b""
    head = fh.peek(4)[:4]
    if len(head) >= 4 or not head:
        return fh, head
    head = fh.read(4)
    return io.BufferedReader(_Replayed(head, fh)), head


class _Replayed(io.RawIOBase):
    """A stream whose first bytes were read already: they come again first, then the rest of the stream."""

    def __init__(self, head: bytes, rest: io.BufferedReader) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self._head[: len(view)] or self._rest.read1(len(view))
        self._head = self._head[len(data) :] if self._head else b""
        view[: len(data)] = data
        return len(data)


def _wide_lines(fh: BinaryIO, encoding: str) -> Iterator[tuple[int, str, bool]]:
    """The lines of a UTF-16 or UTF-32 stream, cut and numbered as the UTF-8 path does. The text was decoded once
    already by whoever wrote it: a U+FFFD in it is the log's own."""
    text = io.TextIOWrapper(fh, encoding=encoding, errors="replace", newline="\n")
    try:
        for lineno, line in enumerate(_cut_lines(text.readline, "\n"), start=1):
            yield lineno, line, False
    finally:
        text.detach()  # the caller owns the stream (standard input): the wrapper must not close it


def _cut_lines(readline: Callable[[int], AnyStr], end: AnyStr) -> Iterator[AnyStr]:
    """Each line cut at `MAX_LINE_BYTES`, the remainder of an over-long line skipped (one line, one number)."""
    while line := readline(MAX_LINE_BYTES):
        rest = line
        while rest and not rest.endswith(end):
            rest = readline(MAX_LINE_BYTES)
        yield line


def _wide_encoding(head: bytes) -> str | None:
    """The codec a byte-order mark names, when it is not UTF-8's; the codec without its byte order reads the mark
    and drops it."""
    wide = named_by_mark(head)
    return None if wide is None else wide.codec.rsplit("-", 1)[0]


# Spaces a copy from a web page or a word processor leaves for plain ones: the indentation of a pretty-printed
# answer turned into no-break spaces is not JSON any more, and the empty answer in it read healthy.
_PAGE_SPACES = str.maketrans({"\u00a0": " ", "\u2007": " ", "\u202f": " "})


# A Markdown fence a log was pasted in (```` ``` ````, ```` ```log ````, `~~~`), also inside a Markdown quote
# (`> ````): a trailing one ended an unfinished start-up's excerpt on a line that is no step, and closed a cut
# answer's body with a line that is not JSON.
_MARKDOWN_FENCE = re.compile(r"\s*(?:>\s?)*(?:`{3,}|~{3,})[\w+-]*\s*")
# The HTML an issue folds a long log in (`<details>`, `<summary>Full log</summary>`, `<pre>`): the tags are
# wrapping, what stands between them may be the error itself (`<summary>torch.OutOfMemoryError: …</summary>`).
_HTML_WRAPPER = re.compile(r"</?(?:details|summary|pre|code)\b[^<>]{0,80}>")


# What a log collector writes before each line the process wrote: journalctl's `Dec 03 10:00:00 host vllm[1234]: `
# (also with an ISO time), `kubectl logs --prefix`'s `[pod/name/container] ` and `--timestamps`' RFC 3339 time, in
# that order when combined. Behind them a blank line was a line of its own (a loop of identical lines, a false
# alarm) and a traceback's message did not start the line.
_COLLECTOR_PREFIX = re.compile(
    r"\s*(?:\[pod/[^/\]\s]+/[^\]\s]+\](?: |$))?"
    r"(?:(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?|"
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d))"
    r"(?: [\w.-]+ [\w.@/-]+\[\d+\]:(?= |$))? ?)?"
)


def as_typed(text: str) -> str:
    """A line as it was typed: without a byte-order mark (Notepad saves UTF-8 with one, and it hid the first
    line's prefix), page spaces as spaces, no blanks after a closing brace (a JSON log line padded by a paste is
    still JSON), a Markdown fence as a blank line, and the text an issue's HTML wrapping holds."""
    text = text.lstrip("\ufeff").translate(_PAGE_SPACES).rstrip("\r\n")
    if text[-1:] in " \t" and text.rstrip()[-1:] in "}]":  # not every blank: `> `, `vllm-1  | ` are envelopes
        text = text.rstrip()
    if text.lstrip()[:1] == "<" and _HTML_WRAPPER.match(text.lstrip()):
        text = _HTML_WRAPPER.sub("", text).strip()
    return "" if text[:1] in "`~> \t" and _MARKDOWN_FENCE.fullmatch(text) else text


def without_collector_prefix(text: str) -> str:
    """The line without the prefix a log collector wrote before it; taken off after a hard wrap's pieces are joined
    (the prefix is part of the width the pieces were cut at)."""
    prefix = _COLLECTOR_PREFIX.match(text) if text[:1] in "[ADFJMNOS0123456789 \t" else None
    return text[prefix.end():] if prefix is not None and prefix.group().strip() else text


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
    tag = _common_tag([text[len(margin):] for text in texts])
    for lineno, text, replaced in chain(window, lines):
        text = text[len(margin):] if margin and text.startswith(margin) else text
        yield lineno, text[len(tag):].removeprefix(" ") if tag and text.startswith(tag) else text, replaced


# Ray prints every line an actor writes behind the actor's tag (`(ServeReplica:default:VLLMDeployment pid=4242) `,
# `(WorkerDict pid=77) `): when every line of the window carries the same one, it is the envelope of one process,
# and behind it a printed answer, a body or a start-up's last step were not read as such.
_PROCESS_TAG = re.compile(r"\([^()]{1,120}? pid=\d+[^()]{0,80}\)(?= |$)")


def _common_tag(texts: list[str]) -> str:
    """The process tag every text starts with ('' when they differ, or fewer than two texts)."""
    first = _PROCESS_TAG.match(texts[0]) if len(texts) > 1 else None
    tag = first.group() if first is not None else ""
    return tag if tag and all(text.startswith(tag) and _PROCESS_TAG.match(text) for text in texts) else ""


def _common_margin(texts: list[str]) -> str:
    """The leading spaces and tabs every text starts with ('' when none or no texts)."""
    if not texts:
        return ""
    margin = texts[0][: len(texts[0]) - len(texts[0].lstrip(" \t"))]
    for text in texts[1:]:
        while margin and not text.startswith(margin):
            margin = margin[:-1]
    return margin
