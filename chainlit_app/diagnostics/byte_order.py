"""Which encoding a log's first bytes name: Windows PowerShell 5 redirects `docker logs vllm > llm.log` as UTF-16
with a byte-order mark (UTF-32 is rarer, and its little-endian mark starts like UTF-16's, so it is tried first).
Shared by the reader of a pasted or saved file and by the live tail, which also needs each encoding's newline.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass


@dataclass(frozen=True)
class LineEncoding:
    """A codec and its newline; the newline's length is the code unit, and a newline only counts on a unit boundary
    (a UTF-16 0x0A byte inside another character is not one)."""

    codec: str = "utf-8"
    newline: bytes = b"\n"
    mark: bytes = b""

    @property
    def unit(self) -> int:
        return len(self.newline)

    @property
    def wide(self) -> bool:
        return self.unit > 1

    def find_newline(self, data: bytes | bytearray, start: int = 0) -> int:
        """The first newline at a code-unit boundary at or after `start` (a boundary itself), or -1."""
        newline, unit = self.newline, self.unit
        index = data.find(newline, start)
        while index % unit and index >= 0:
            index = data.find(newline, index + 1)
        return index

    def count_newlines(self, data: bytes) -> tuple[int, int]:
        """(newlines in `data`, offset just after the last one or 0); `data` starts on a unit boundary and holds
        whole units. Decoding counts them exactly: a newline character is one code unit in UTF-16 and UTF-32."""
        if not self.wide:
            return data.count(b"\n"), data.rfind(b"\n") + 1
        count = data.decode(self.codec, errors="replace").count("\n")
        index = data.rfind(self.newline)
        while index % self.unit and index >= 0:
            index = data.rfind(self.newline, 0, index + self.unit - 1)
        return count, index + self.unit if index >= 0 else 0

    def decode(self, data: bytes) -> str:
        return data.decode(self.codec, errors="replace").lstrip("\ufeff").rstrip("\r")

    def looks_like(self, data: bytes) -> bool:
        """True when `data` (starting on a unit boundary) reads as this encoding's text of a log: most characters
        are ASCII, so most units are zero but for their low byte; at least one in four must be (a log's timestamps,
        levels and paths are). UTF-8 text read in units has none."""
        if not self.wide:
            return True
        low = self.newline.index(b"\n")  # where a unit's own byte sits: first in little-endian, last in big
        units = [data[i : i + self.unit] for i in range(0, len(data) - len(data) % self.unit, self.unit)]
        if not units:
            return True
        ascii_like = sum(1 for u in units if not any(u[:low] + u[low + 1 :]))
        return ascii_like * 4 >= len(units)


UTF8 = LineEncoding()
_WIDE = (
    LineEncoding("utf-32-le", b"\n\x00\x00\x00", codecs.BOM_UTF32_LE),
    LineEncoding("utf-32-be", b"\x00\x00\x00\n", codecs.BOM_UTF32_BE),
    LineEncoding("utf-16-le", b"\n\x00", codecs.BOM_UTF16_LE),
    LineEncoding("utf-16-be", b"\x00\n", codecs.BOM_UTF16_BE),
)
# Bytes enough to tell: the longest mark, and a few characters after it to check the mark is not chance.
SNIFF_BYTES = 64


def named_by_mark(head: bytes) -> LineEncoding | None:
    """The wide encoding whose byte-order mark `head` starts with (UTF-32's before UTF-16's), or None."""
    return next((e for e in _WIDE if head.startswith(e.mark)), None)


def sniff(head: bytes, previous: LineEncoding = UTF8) -> LineEncoding:
    """The encoding of a file whose first bytes are `head`. A mark counts unless what follows contradicts it: a
    newline byte that is no newline of that encoding (bytes FF FE before UTF-8 text are garbage, not UTF-16). A
    file truncated in place has no mark any more while its writer goes on in the same encoding: then the
    `previous` one stays if the bytes fit it."""
    wide = named_by_mark(head)
    if wide is not None:
        body = head[len(wide.mark) :]
        return wide if wide.find_newline(body) >= 0 or b"\n" not in body else UTF8
    if not previous.wide or not head:
        return UTF8
    fits = previous.find_newline(head) >= 0 or (b"\n" not in head and previous.looks_like(head))
    return previous if fits else UTF8
