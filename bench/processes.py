"""Stopping a benchmark's child process: one definition for the upstream, the app and the cluster."""

from __future__ import annotations

import subprocess
from typing import Any

REAP_TIMEOUT_S = 10.0


def stop_process(process: subprocess.Popen[Any], timeout: float) -> None:
    """SIGTERM, then SIGKILL what does not exit within `timeout` seconds, and reap it (no zombie is left to
    count in the next phase's CPU or process figures)."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=REAP_TIMEOUT_S)
