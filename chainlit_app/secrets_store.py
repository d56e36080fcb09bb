"""Secrets generated on first run and kept in owner-only files (never a fixed default)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from chainlit_app.private_files import private_dir, private_file


def read_or_create(path: Path, length: int = 32) -> tuple[str, bool]:
    """The secret stored at `path`, creating it (mode 0600) when missing; True when just created."""
    if path.is_file():
        private_file(path)  # an older install's copy may be readable by others
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value, False
    private_dir(path.parent)
    value = secrets.token_urlsafe(length)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")
    os.chmod(path, 0o600)
    return value, True
