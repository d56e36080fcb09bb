"""One exception table for the whole app: exception type -> failure kind, most specific class first.

Used for exceptions read from a log (only the printed class name is known) and for exceptions the chat
catches itself (the whole class hierarchy is known). In the spirit of httpx's exception mapping, the
table is ordered from the most specific class to the most general one and the first entry that names
the exception or one of its base classes wins, so `openai.APITimeoutError` (a subclass of
`APIConnectionError`) is a timeout, not a refused connection.

A second table says what the module an exception was raised in means when its type says nothing
(a `ValueError` raised inside the tokenizer while serving is a decode error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chainlit_app.i18n import Msg

from .phases import Phase
from .taxonomy import Kind

_ANY_PHASE = frozenset(Phase)
_STARTING = frozenset({Phase.BOOT, Phase.LOADING})
_SERVING = frozenset({Phase.SERVING, Phase.STOPPING})


@dataclass(frozen=True)
class ExceptionEntry:
    """Exception class names (the last dotted part) that mean `kind`; `message` narrows it further."""

    names: frozenset[str]
    kind: Kind
    hint: str
    message: re.Pattern[str] | None = None
    wrapper: bool = False  # says only that something else failed first (points back)


def _e(names: str, kind: Kind, hint: str, message: str = "", *, wrapper: bool = False) -> ExceptionEntry:
    pattern = re.compile(message, re.IGNORECASE) if message else None
    return ExceptionEntry(frozenset(names.split()), kind, hint, pattern, wrapper)


EXCEPTIONS: tuple[ExceptionEntry, ...] = (
    # memory
    _e("OutOfMemoryError CudaOutOfMemoryError", Kind.OUT_OF_MEMORY,
       Msg("exception.OutOfMemoryError")),
    _e("MemoryError", Kind.OUT_OF_MEMORY, Msg("exception.MemoryError")),
    # sockets: the errno says which
    _e("OSError", Kind.PORT_IN_USE, Msg("exception.OSError"),
       r"\[Errno (?:98|48|10048)\]|address already in use"),
    # clients of the server: openai, httpx, requests, aiohttp (timeouts before connections: subclasses)
    _e("APITimeoutError ReadTimeout WriteTimeout PoolTimeout ReadTimeoutError TimeoutException "
       "ServerTimeoutError TimeoutError RayChannelTimeoutError GetTimeoutError", Kind.SLOW_OR_STALLED,
       Msg("exception.APITimeoutError")),
    _e("APIConnectionError ConnectError ConnectTimeout ConnectionRefusedError ClientConnectorError "
       "ServerDisconnectedError RemoteProtocolError NewConnectionError MaxRetryError ConnectionError "
       "ProtocolError ChunkedEncodingError IncompleteRead", Kind.CONNECTION,
       Msg("exception.APIConnectionError")),
    _e("AuthenticationError PermissionDeniedError", Kind.AUTH,
       Msg("exception.AuthenticationError")),
    _e("NotFoundError", Kind.MODEL_NOT_FOUND,
       Msg("exception.NotFoundError")),
    _e("InternalServerError", Kind.ENGINE_ERROR, Msg("exception.InternalServerError")),
    # model source and files
    _e("HFValidationError RepositoryNotFoundError GatedRepoError RevisionNotFoundError EntryNotFoundError "
       "LocalEntryNotFoundError OfflineModeIsEnabled", Kind.STARTUP_FAILURE,
       Msg("exception.HFValidationError")),
    _e("SafetensorError HeaderTooLarge UnpicklingError", Kind.STARTUP_FAILURE,
       Msg("exception.SafetensorError")),
    # text
    _e("UnicodeDecodeError UnicodeEncodeError UnicodeError", Kind.DECODE_ERROR,
       Msg("exception.UnicodeDecodeError")),
    _e("TemplateError TemplateSyntaxError UndefinedError TemplateNotFound TemplateRuntimeError "
       "SecurityError", Kind.CHAT_TEMPLATE,
       Msg("exception.TemplateError")),
    # builds that do not fit together
    _e("ImportError ModuleNotFoundError", Kind.VERSION_MISMATCH,
       Msg("exception.ImportError")),
    # wrappers: the cause was printed before
    _e("EngineDeadError AsyncEngineDeadError EngineGenerateError", Kind.ENGINE_ERROR,
       Msg("exception.EngineDeadError"), wrapper=True),
)


@dataclass(frozen=True)
class RaisedInEntry:
    """A path fragment of the innermost vLLM/transformers frame, what it means, and in which phases."""

    fragments: tuple[str, ...]
    kind: Kind
    hint: str
    phases: frozenset[Phase] = _ANY_PHASE
    anywhere: bool = False  # anywhere on the stack, not only in the innermost frame


RAISED_IN: tuple[RaisedInEntry, ...] = (
    # First: the tokenizer's own code renders templates, so a failure under apply_chat_template is the
    # template's, wherever it was raised.
    RaisedInEntry(("chat_utils", "chat_template"), Kind.CHAT_TEMPLATE,
                  Msg("raised_in.chat_utils"), anywhere=True),
    RaisedInEntry(("detokeniz", "tokenizer", "tokenization_"), Kind.DECODE_ERROR,
                  Msg("raised_in.detokeniz"),
                  _SERVING),
    RaisedInEntry(("tokenizer", "tokenization_"), Kind.STARTUP_FAILURE,
                  Msg("raised_in.tokenizer"), _STARTING),
    RaisedInEntry(("model_loader", "weight_utils", "model_executor/models/", "modeling_", "configuration_",
                   "config.py", "configs/", "arg_utils", "transformers_utils"), Kind.STARTUP_FAILURE,
                  Msg("raised_in.model_loader"), _STARTING),
    RaisedInEntry(("attention/backends", "attention/ops", "v1/attention", "flash_attn", "xformers", "triton",
                   "_custom_ops", "platforms/"), Kind.VERSION_MISMATCH,
                  Msg("raised_in.attention_backends")),
)


def exception_name(printed: str) -> str:
    """The class name of a printed exception type ('torch.OutOfMemoryError' -> 'OutOfMemoryError')."""
    return printed.rsplit(".", 1)[-1]


def lookup(names: list[str] | tuple[str, ...], message: str = "") -> ExceptionEntry | None:
    """The first entry naming one of `names` (the exception's class, then its bases) whose message
    condition holds. The table order decides, so callers pass the class first."""
    wanted = {exception_name(n) for n in names}
    for entry in EXCEPTIONS:
        if entry.names & wanted and (entry.message is None or entry.message.search(message)):
            return entry
    return None


def lookup_exception(exc: BaseException) -> ExceptionEntry | None:
    """Entry for a live exception: its class hierarchy, then the exceptions it was raised from."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names = [cls.__name__ for cls in type(current).__mro__]
        entry = lookup(names, str(current))
        if entry is not None:
            return entry
        current = current.__cause__ or current.__context__
    return None


def raised_in(innermost: str, stack: str, phase: Phase) -> RaisedInEntry | None:
    """What the code an exception was raised in says, in this phase: the innermost frame of the serving
    stack's own code, or for some entries any frame of the stack."""
    for entry in RAISED_IN:
        where = stack if entry.anywhere else innermost
        if where and phase in entry.phases and any(f in where for f in entry.fragments):
            return entry
    return None
