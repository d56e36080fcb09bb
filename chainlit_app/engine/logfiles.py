"""The server's log file: one per launch, previous launches kept as .1, .2, ... (bounded).

Start-up progress is read with the phase markers the diagnosis uses (`diagnostics/phases.py`).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from chainlit_app.diagnostics.phases import is_progress, marker_for
from chainlit_app.private_files import private_dir, private_file

_PREFIX = re.compile(
    r"^(\(\w+ pid=\d+\)\s*)?((INFO|WARNING|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d\s+(\[[^\]]*\]\s*)?|INFO:\s+)"
)


LAUNCH_BANNER = "# chat console: launching "
# Where the app's own progress texts ("connecting to URL") stop being fit for everyone: the first word
# with a slash, a backslash or a colon-slash (a path or a URL), with the preposition before it.
_PLACE = re.compile(r"(?:\s+(?:at|to|from|in|on|of|for|under))*\s+\S*[/\\].*$", re.IGNORECASE | re.DOTALL)


def launch_banner(shown_argv: list[str]) -> bytes:
    """The first line of every launch's log: the command (key-free), so a reader sees what ran."""
    return f"{LAUNCH_BANNER}{' '.join(shown_argv)}\n".encode()


def launched_argv(path: Path) -> list[str] | None:
    """The command a log's launch banner names (None when the log has none)."""
    try:
        with path.open(errors="replace") as handle:
            first = handle.readline()
    except OSError:
        return None
    return first[len(LAUNCH_BANNER):].split() if first.startswith(LAUNCH_BANNER) else None


def rotate(path: Path, keep: int) -> None:
    """Shift path -> path.1 -> path.2 ..., dropping the oldest beyond `keep` files in all."""
    private_dir(path.parent, tighten=False)  # created 0700; an existing folder may be shared (CHAT_LOG_FILE)
    oldest = path.with_name(f"{path.name}.{keep - 1}")
    with contextlib.suppress(FileNotFoundError):
        if keep > 1:
            oldest.unlink()
    for index in range(keep - 2, 0, -1):
        src = path.with_name(f"{path.name}.{index}")
        if src.exists():
            os.replace(src, path.with_name(f"{path.name}.{index + 1}"))
    if path.exists():
        if keep > 1:
            os.replace(path, path.with_name(f"{path.name}.1"))
        else:
            path.unlink()
    for index in range(1, keep):  # our earlier launches' logs, written before they were owner-only
        private_file(path.with_name(f"{path.name}.{index}"))


def read_tail(path: Path, max_lines: int = 30, max_bytes: int = 64 * 1024) -> list[str]:
    """The last lines of a file without reading all of it."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    if size > max_bytes and lines:
        lines = lines[1:]
    return lines[-max_lines:]


def latest_progress(lines: list[str]) -> str | None:
    """The newest start-up progress line, without its log prefix, for the 'starting' notice."""
    for line in reversed(lines):
        if is_progress(line):
            return _PREFIX.sub("", line).strip()[:200]
    return None


def phase_only(progress: str) -> str:
    """What users who are not admins see of a start-up progress text: the phase a vLLM line marks (boot,
    loading, serving), or the app's own text cut before the first path or URL. The full line names
    folders, model paths and addresses: admins read it in the panel."""
    marker = marker_for(progress)
    if marker is not None:
        return marker.phase.label
    return _PLACE.sub("", progress).strip()
