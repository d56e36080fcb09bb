"""The app's own log format, set once by whichever runs first: the interpreter-start hook or app.py."""

from __future__ import annotations

import logging
import sys

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_QUIET = ("httpx", "httpcore", "httpx2", "httpcore2")  # one INFO line per HTTP request otherwise


def configure_logging() -> None:
    """INFO to stdout, as Chainlit's command line configures it (a no-op once the root logger has handlers)."""
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format=LOG_FORMAT)
    for name in _QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
