"""The app's own log: its format, set once by whichever runs first (the interpreter-start hook or app.py),
and its redaction: every record of every logger (ours, Chainlit's, uvicorn's, SQLAlchemy's) has its
message, traceback and stack masked as it is made, whatever handler later writes it."""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any

from chainlit_app.diagnostics.redact import SecretSource, redact, secrets_of

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_QUIET = ("httpx", "httpcore", "httpx2", "httpcore2")  # one INFO line per HTTP request otherwise
# uvicorn's access formatter reads its record's args by position: those are redacted one by one.
_POSITIONAL_ARGS = frozenset({"uvicorn.access"})

_sources: dict[str, SecretSource] = {}
_installed = False


def configure_logging() -> None:
    """INFO to stdout, as Chainlit's command line configures it (a no-op once the root logger has handlers),
    and every record redacted."""
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format=LOG_FORMAT)
    for name in _QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    install_redaction()


def mask_also(name: str, source: SecretSource) -> None:
    """Mask these literals in every log record from now on (a function is asked at each record: the
    engine's key changes at every launch). A later source of the same name replaces the earlier one."""
    _sources[name] = source


def known_secrets() -> tuple[str, ...]:
    found: list[str] = []
    for source in list(_sources.values()):
        with contextlib.suppress(Exception):  # a source that fails must not stop the log
            found.extend(secrets_of(source))
    return tuple(found)


def redact_record(record: logging.LogRecord) -> None:
    """Mask the record's message, traceback and stack in place."""
    secrets = known_secrets()
    if record.name in _POSITIONAL_ARGS and isinstance(record.args, tuple):
        record.args = tuple(redact(arg, secrets) if isinstance(arg, str) else arg for arg in record.args)
        return
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text, secrets)
    if record.stack_info:
        record.stack_info = redact(record.stack_info, secrets)
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: logging itself reports it when the record is written
        return
    cleaned = redact(message, secrets)
    if cleaned != message:
        record.msg, record.args = cleaned, None


def install_redaction() -> None:
    """Wrap the log record factory once: each record is redacted when it is made."""
    global _installed
    if _installed:
        return
    base = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = base(*args, **kwargs)
        redact_record(record)
        return record

    logging.setLogRecordFactory(factory)
    _installed = True
