"""LogFollower on real files: appends, partial lines, truncation, rotation, late files, long lines."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from chainlit_app.diagnostics import LogFollower
from tests.timing import assert_within


class Collector:
    """Runs a follower in the background and records what it yields, with arrival times."""

    def __init__(self, follower: LogFollower) -> None:
        self.follower = follower
        self.lines: list[tuple[int, str]] = []
        self.times: list[float] = []
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for item in self.follower.lines():
            self.lines.append(item)
            self.times.append(time.monotonic())

    async def wait_for(self, count: int, timeout: float = 3.0) -> list[tuple[int, str]]:
        deadline = time.monotonic() + timeout
        while len(self.lines) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return list(self.lines)

    async def close(self) -> None:
        self.follower.stop()
        await asyncio.wait_for(self.task, 2.0)


Follow = Callable[..., Collector]


@pytest.fixture
async def follow() -> AsyncIterator[Follow]:
    collectors: list[Collector] = []

    def start(path: Path, *, from_start: bool = True, max_line: int = 64 * 1024) -> Collector:
        collector = Collector(LogFollower(path, from_start=from_start, max_line=max_line))
        collectors.append(collector)
        return collector

    yield start
    for collector in collectors:
        await collector.close()


def _append(path: Path, data: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(data)
        fh.flush()


async def test_appended_lines_arrive_within_half_a_second(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("first\nsecond\n")
    c = follow(log)
    assert await c.wait_for(2) == [(1, "first"), (2, "second")]
    written = time.monotonic()
    _append(log, "INFO:     Application startup complete.\n")
    lines = await c.wait_for(3)
    assert lines[2] == (3, "INFO:     Application startup complete.")
    assert_within(c.times[2] - written, 0.5, "an appended line reaching the follower")


async def test_partial_line_is_held_until_its_newline(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("")
    c = follow(log)
    _append(log, "ERROR: [Errno 98] error while ")
    await asyncio.sleep(0.4)
    assert c.lines == []
    _append(log, "attempting to bind on address\r\nnext\n")
    assert await c.wait_for(2) == [
        (1, "ERROR: [Errno 98] error while attempting to bind on address"),
        (2, "next"),
    ]


async def test_waits_for_a_file_that_does_not_exist_yet(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "later.log"
    c = follow(log)
    await asyncio.sleep(0.3)
    log.write_text("hello\n")
    assert await c.wait_for(1) == [(1, "hello")]


async def test_truncation_restarts_from_the_top(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("old 1\nold 2\nold 3\n")
    c = follow(log)
    await c.wait_for(3)
    log.write_text("")  # truncate in place (same inode), as a fresh server start or copytruncate does
    await asyncio.sleep(0.3)
    _append(log, "new 1\n")
    lines = await c.wait_for(4)
    assert lines[3] == (1, "new 1")


async def test_rotation_switches_to_the_new_file(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("a\n")
    c = follow(log)
    await c.wait_for(1)
    _append(log, "b\nlast words")  # the old file ends with an unfinished line
    await asyncio.sleep(0.3)
    os.rename(log, tmp_path / "vllm.log.1")
    log.write_text("fresh 1\nfresh 2\n")
    lines = await c.wait_for(5)
    assert lines == [(1, "a"), (2, "b"), (3, "last words"), (1, "fresh 1"), (2, "fresh 2")]


async def test_lines_written_just_before_a_rotation_are_not_lost(tmp_path: Path, follow: Follow) -> None:
    """The follower sleeps between polls; what the old file got in the last one is still read before it
    moves to the new file (the crash's last lines are the ones that matter)."""
    log = tmp_path / "vllm.log"
    log.write_text("a\n")
    c = follow(log)
    await c.wait_for(1)
    _append(log, "Traceback (most recent call last):\nRuntimeError: boom\n")
    os.rename(log, tmp_path / "vllm.log.1")  # at once, within one poll interval
    log.write_text("fresh 1\n")
    lines = await c.wait_for(4)
    assert lines == [(1, "a"), (2, "Traceback (most recent call last):"), (3, "RuntimeError: boom"), (1, "fresh 1")]


async def test_from_end_skips_but_counts_existing_lines(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("one\ntwo\nthr")
    c = follow(log, from_start=False)
    await asyncio.sleep(0.3)
    assert c.lines == []
    _append(log, "ee\nfour\n")
    assert await c.wait_for(2) == [(3, "three"), (4, "four")]


async def test_overlong_line_is_cut_and_the_rest_skipped(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("")
    c = follow(log, max_line=1000)
    _append(log, "x" * 5000)
    await asyncio.sleep(0.3)
    _append(log, "y" * 5000 + "\nafter\n")
    lines = await c.wait_for(2)
    assert lines == [(1, "x" * 1000), (2, "after")]


async def test_undecodable_bytes_are_replaced(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"ok \xff\xfe end\n")
    c = follow(log)
    assert await c.wait_for(1) == [(1, "ok \ufffd\ufffd end")]


async def test_stop_ends_the_iteration_promptly(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("x\n")
    follower = LogFollower(log, poll_interval=5.0)
    seen: list[tuple[int, str]] = []

    async def consume() -> None:
        async for item in follower.lines():
            seen.append(item)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.2)
    started = time.monotonic()
    follower.stop()
    await asyncio.wait_for(task, 2.0)
    assert_within(time.monotonic() - started, 1.0, "stop during a 5 s poll sleep")  # stop wakes the sleep
    assert seen == [(1, "x")] and follower.stopped


def _append_bytes(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)
        fh.flush()


# U+0A05 then U+1200 puts the bytes 0A 00 at an odd offset in UTF-16-LE: not a newline, half of two characters.
WIDE_TEXT = "CUDA 显存不足 \u0a05\u1200 ok"


@pytest.mark.parametrize(("codec", "mark"), [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")])
async def test_utf16_log_from_windows_powershell_is_read_as_text(
    tmp_path: Path, follow: Follow, codec: str, mark: bytes
) -> None:
    """`docker logs vllm > llm.log` in Windows PowerShell writes UTF-16 with a byte-order mark."""
    log = tmp_path / "llm.log"
    log.write_bytes(b"")
    c = follow(log)
    await asyncio.sleep(0.2)
    _append_bytes(log, mark + "INFO start\r\n".encode(codec))
    assert await c.wait_for(1) == [(1, "INFO start")]
    data = f"{WIDE_TEXT}\r\nERROR last\r\n".encode(codec)
    _append_bytes(log, data[:7])  # a writer may flush half a character
    await asyncio.sleep(0.3)
    _append_bytes(log, data[7:])
    assert await c.wait_for(3) == [(1, "INFO start"), (2, WIDE_TEXT), (3, "ERROR last")]


async def test_utf16_log_from_end_counts_existing_lines(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "llm.log"
    log.write_bytes(b"\xff\xfe" + f"one\r\n{WIDE_TEXT}\r\nthr".encode("utf-16-le"))
    c = follow(log, from_start=False)
    await asyncio.sleep(0.3)
    assert c.lines == []
    _append_bytes(log, "ee\r\nfour\r\n".encode("utf-16-le"))
    assert await c.wait_for(2) == [(3, "three"), (4, "four")]


async def test_utf16_overlong_line_keeps_the_characters_after_it(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "llm.log"
    log.write_bytes(b"\xff\xfe")
    c = follow(log, max_line=1003)  # cut at 1,002 bytes, the 2-byte mark included: 500 characters
    _append_bytes(log, ("显" * 3000).encode("utf-16-le"))
    await asyncio.sleep(0.3)
    _append_bytes(log, ("存" * 10 + "\nafter 不足\n").encode("utf-16-le"))
    assert await c.wait_for(2) == [(1, "显" * 500), (2, "after 不足")]


async def test_utf8_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "llm.log"
    log.write_bytes("\ufeffINFO 显存\nnext\n".encode())
    c = follow(log)
    assert await c.wait_for(2) == [(1, "INFO 显存"), (2, "next")]


async def test_bytes_ff_fe_before_utf8_text_are_no_utf16_mark(tmp_path: Path, follow: Follow) -> None:
    """A mark counts only when what follows it reads as that encoding: otherwise every line would wait forever
    for a UTF-16 newline."""
    log = tmp_path / "llm.log"
    log.write_bytes(b"\xff\xfe garbage\nINFO real line 1\nERROR real line 2\n")
    c = follow(log)
    _append(log, "ERROR later\n")
    lines = await c.wait_for(4)
    assert [text for _, text in lines[1:]] == ["INFO real line 1", "ERROR real line 2", "ERROR later"]


async def test_utf32_mark_is_not_taken_for_utf16s(tmp_path: Path, follow: Follow) -> None:
    log = tmp_path / "llm.log"
    log.write_bytes("\ufeffINFO start of a UTF-32 log\nERROR 显存不足 then more text\n".encode("utf-32-le"))
    c = follow(log)
    assert await c.wait_for(2) == [(1, "INFO start of a UTF-32 log"), (2, "ERROR 显存不足 then more text")]


async def test_utf16_log_truncated_in_place_goes_on_in_utf16(tmp_path: Path, follow: Follow) -> None:
    """copytruncate: the writer keeps its encoding, and the file has no mark any more."""
    log = tmp_path / "llm.log"
    log.write_bytes(b"\xff\xfe" + "INFO one before the cut\nINFO two before the cut\n".encode("utf-16-le"))
    c = follow(log)
    assert len(await c.wait_for(2)) == 2
    with log.open("r+b") as fh:
        fh.truncate(0)
    await asyncio.sleep(0.3)
    _append_bytes(log, "INFO three after the cut, still UTF-16\nINFO four\n".encode("utf-16-le"))
    lines = await c.wait_for(4)
    assert lines[2:] == [(1, "INFO three after the cut, still UTF-16"), (2, "INFO four")]
