"""Follow a growing log file like `tail -F`, for the live diagnostics panel.

The supervisor's vLLM log grows line by line, may be truncated (copytruncate, a fresh start) or
rotated (renamed and recreated), and may not exist yet when the panel starts. Writers flush partial
lines, so a line is only handed out once its newline has arrived. Memory stays bounded: an
over-long line is cut at `max_line` bytes and the rest of it is skipped. An attached server's log may
have been redirected by Windows PowerShell (`docker logs vllm > llm.log` writes UTF-16 with a byte-order
mark): the mark at the file's start picks the encoding, UTF-8 otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from os import PathLike
from typing import Any

import aiofiles

from .byte_order import SNIFF_BYTES, UTF8, named_by_mark, sniff

MAX_LINE_BYTES = 64 * 1024


class LogFollower:
    """Async iterator over (lineno, line) of a file that keeps growing; `stop()` ends the iteration.

    Line numbers are 1-based positions in the current file; they restart at 1 after a truncation or
    a rotation. With `from_start=False` the lines already in the file are skipped (but counted).
    """

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        from_start: bool = True,
        poll_interval: float = 0.1,
        max_line: int = MAX_LINE_BYTES,
        chunk_size: int = 64 * 1024,
    ) -> None:
        self.path = os.fspath(path)
        self._from_start = from_start
        self._poll = poll_interval
        self._max_line = max_line
        self._chunk = chunk_size
        self._stopped = False
        self._wake = asyncio.Event()
        self._encoding = UTF8

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        """End `lines()` at its next step (within one poll interval)."""
        self._stopped = True
        self._wake.set()

    async def lines(self) -> AsyncIterator[tuple[int, str]]:
        """Yield complete lines (without the newline) as they are written."""
        skip_existing = not self._from_start
        while not self._stopped:
            handle = await self._open()
            if handle is None:
                return
            try:
                async for item in self._follow(handle, skip_existing):
                    yield item
            finally:
                await handle.close()
            skip_existing = False  # a rotated-in file is new: read it from its start

    async def _open(self) -> Any:
        """Open the file, waiting for it to appear; None once stopped."""
        while not self._stopped:
            try:
                return await aiofiles.open(self.path, "rb")
            except FileNotFoundError:
                await self._sleep()
        return None

    async def _follow(self, handle: Any, skip_existing: bool) -> AsyncIterator[tuple[int, str]]:
        st = os.fstat(handle.fileno())
        identity = (st.st_dev, st.st_ino)
        previous = self._encoding  # a file truncated in place goes on in its encoding without its mark
        sniffed = False  # until then every byte since the file's start is in `buf`, none handed out
        lineno, pos = 0, 0
        if skip_existing:
            self._encoding, sniffed = sniff(await handle.read(SNIFF_BYTES)), True
            await handle.seek(0)
            lineno, pos = await self._skip_to_end(handle)
        buf = bytearray()
        discarding = False  # inside the unread tail of an over-long line
        rotated = False
        while not self._stopped:
            chunk = await handle.read(self._chunk)
            if chunk:
                pos += len(chunk)
                buf += chunk
                if not sniffed:
                    head = bytes(buf[:SNIFF_BYTES])
                    self._encoding = sniff(head, previous)
                    # plain text is plain at once; a mark, or a wide file truncated in place, is judged on a
                    # first whole line or on enough bytes (a mark alone, FF FE, may be UTF-32's first half)
                    sniffed = (len(head) >= SNIFF_BYTES or self._encoding.find_newline(head) >= 0
                               or (named_by_mark(head) is None and not previous.wide))
                    if not sniffed:
                        continue
                lines, discarding = self._split(buf, discarding)
                for line in lines:
                    lineno += 1
                    yield lineno, line
                continue
            if rotated:  # the old file is read to its end and will not grow any more: hand out its last line
                if buf and not discarding:
                    yield lineno + 1, self._encoding.decode(bytes(buf))
                return
            state = await self._changed(identity, pos)
            if state == "truncated":
                await handle.seek(0)
                lineno, pos, discarding = 0, 0, False
                previous, sniffed = self._encoding, False
                buf.clear()
            rotated = state == "rotated"  # first read what the old file got before it was replaced

    def _split(self, buf: bytearray, discarding: bool) -> tuple[list[str], bool]:
        """Take complete lines out of `buf` (in place); cut and start discarding an over-long line. Only whole
        code units are ever removed, so `buf` keeps starting at a character boundary."""
        encoding = self._encoding
        unit, find, decode = encoding.unit, encoding.find_newline, encoding.decode
        lines: list[str] = []
        while True:
            # UTF-8 is the hot path (thousands of lines a second): no code-unit alignment to check
            newline = buf.find(b"\n") if unit == 1 else find(buf)
            if newline < 0:
                break
            line = bytes(buf[:newline])
            del buf[: newline + unit]
            if discarding:
                discarding = False
                continue
            lines.append(decode(line))
        whole = len(buf) - len(buf) % unit
        if discarding:
            del buf[:whole]
        elif len(buf) > self._max_line:
            cut = self._max_line - self._max_line % unit
            lines.append(decode(bytes(buf[:cut])))
            del buf[:whole]
            discarding = True
        return lines, discarding

    async def _skip_to_end(self, handle: Any) -> tuple[int, int]:
        """Count the complete lines already present and position after the last newline, so that a
        partial last line is still delivered whole once it is finished."""
        count = 0
        offset = 0
        last_newline_end = 0
        while True:
            chunk = await handle.read(1024 * 1024)  # an even size: a UTF-16 code unit never straddles two chunks
            if not chunk:
                break
            found, end = self._encoding.count_newlines(chunk)
            count += found
            if found:
                last_newline_end = offset + end
            offset += len(chunk)
        await handle.seek(last_newline_end)
        return count, last_newline_end

    async def _changed(self, identity: tuple[int, int], pos: int) -> str:
        """Wait until the file grows, shrinks or is replaced (or the follower stops). While nothing changes
        each poll is one `stat` system call in the loop: a read through aiofiles' thread at every poll was
        most of an idle app's CPU (two thread hand-offs, ten times a second)."""
        while True:
            state = self._state(identity, pos)
            if state != "same" or self._stopped:
                return state
            await self._sleep()

    def _state(self, identity: tuple[int, int], pos: int) -> str:
        """'rotated' (path gone or another inode), 'truncated' (shorter than what we read), 'grown' or 'same'."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return "rotated"
        if (st.st_dev, st.st_ino) != identity:
            return "rotated"
        if st.st_size < pos:
            return "truncated"
        return "grown" if st.st_size > pos else "same"

    async def _sleep(self) -> None:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a task's cancellation
        # when it races with the timeout, and the follower then never stops.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._poll):
                await self._wake.wait()
