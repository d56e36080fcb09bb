"""Owner-only folders (0700) and files (0600) for what holds conversations, secrets and logs.

The data folder keeps chat.db (every conversation), the generated admin password and the auth secret;
the log folder keeps vLLM's logs (model paths, requests). Created with the default umask they were
readable by every user of the machine. Folders are created owner-only, and folders of ours that exist
with looser modes (an older install) are tightened once, with a log line that says so.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # settings imports users -> secrets_store -> this module
    from chainlit_app.settings import Settings

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


def private_dir(path: Path, tighten: bool = True) -> Path:
    """Create `path` and its missing parents owner-only; with `tighten`, an existing folder that group or
    others may enter is made 0700 (False for a folder that may be shared, such as a custom log file's)."""
    missing: list[Path] = []
    folder = path
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        try:
            os.mkdir(created, DIR_MODE)
        except FileExistsError:  # made meanwhile by another process: tightened below like any other
            continue
        os.chmod(created, DIR_MODE)  # a umask such as 0o277 would have left it unusable; 0o022 is harmless
    if tighten:
        tighten_mode(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """An existing file made owner-only when group or others may read it; a missing one is left alone."""
    if path.exists():
        tighten_mode(path, FILE_MODE)
    return path


def open_private(path: Path) -> int:
    """Open `path` for appending, created 0600 when missing (an existing one is tightened); a descriptor."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    tighten_mode(path, FILE_MODE)
    return fd


def tighten_mode(path: Path, mode: int) -> bool:
    """Set `mode` when the current one lets group or others in; True when it changed. A file we may not
    change (someone else's) is logged with the command that fixes it, and left as it is."""
    try:
        current = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return False
    if not current & _OTHERS:
        return False
    try:
        os.chmod(path, mode)
    except OSError as exc:
        log.warning("%s is readable by other users (mode %o) and could not be changed (%s); run: chmod %o %s",
                    path, current, exc.strerror, mode, path)
        return False
    log.warning("%s was readable by other users (mode %o); now owner-only (%o)", path, current, mode)
    return True


def secure_storage(settings: Settings) -> None:
    """The app's folders owner-only before anything is written to them: the data folder (history,
    secrets, files, models) and the log folder (its vLLM logs, kept there unless CHAT_LOG_FILE says
    otherwise). Files already in them from an older install are tightened too."""
    data_dir = private_dir(settings.storage.data_dir)
    for name in ("chat.db", "chat.db-wal", "chat.db-journal", "chat.db-shm", "admin_password", "auth_secret"):
        private_file(data_dir / name)
    private_dir(data_dir / "files")
    if settings.logging.log_file is None or settings.logging.log_dir.exists():
        log_dir = private_dir(settings.logging.log_dir)
        for old in log_dir.glob("*.log*"):
            private_file(old)
