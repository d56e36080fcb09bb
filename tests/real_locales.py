"""Real locales for tests that need a program to speak a user's language (a Chinese bash, a GBK Python):
built with glibc's localedef from the locale sources Debian's `locales` package installs, into a folder the
test owns (LOCPATH), so nothing on the machine changes. Building one takes about 4 s."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCES = Path("/usr/share/i18n/locales")


def built_locale(folder: Path, name: str) -> dict[str, str]:
    """An environment whose programs run in locale `name` (`zh_CN.UTF-8`, `zh_CN.GBK`): skips the test when
    localedef or the locale's source is missing."""
    source, _, charset = name.partition(".")
    if shutil.which("localedef") is None or not (SOURCES / source).exists():
        pytest.skip(f"localedef or the {source} locale source is missing (Debian's `locales` package)")
    if not (folder / name).exists():
        subprocess.run(["localedef", "-i", source, "-f", charset, str(folder / name)], check=True,
                       capture_output=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONUTF8", "PYTHONIOENCODING", "LC_"))}
    return {**env, "LOCPATH": str(folder), "LANG": name, "LC_ALL": name, "LANGUAGE": ""}
