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

from .exception_bases import BASES
from .phases import Phase
from .taxonomy import Kind

_ANY_PHASE = frozenset(Phase)
_STARTING = frozenset({Phase.BOOT, Phase.LOADING})
_SERVING = frozenset({Phase.SERVING, Phase.STOPPING})


@dataclass(frozen=True)
class ExceptionEntry:
    """Exception class names (the last dotted part) that mean `kind`; `message` narrows it further, and
    `phases` says when (an entry for a mismatch of library APIs holds while starting only)."""

    names: frozenset[str]
    kind: Kind
    hint: str
    message: re.Pattern[str] | None = None
    wrapper: bool = False  # says only that something else failed first (points back)
    phases: frozenset[Phase] = _ANY_PHASE
    symptom: bool = False  # what a client saw of a server's failure: the server's own cause, if shown, wins


def _e(names: str, kind: Kind, hint: str, message: str = "", *, wrapper: bool = False,
       phases: frozenset[Phase] = _ANY_PHASE, symptom: bool = False) -> ExceptionEntry:
    pattern = re.compile(message, re.IGNORECASE) if message else None
    return ExceptionEntry(frozenset(names.split()), kind, hint, pattern, wrapper, phases, symptom)


# The status an HTTP client's error carries in its message ("Error code: 401", "401 Client Error",
# "status_code=503", "Server error '503 Service Unavailable'"): what the server answered decides.
_HTTP_ERRORS = ("APIStatusError APIError OpenAIError HTTPStatusError HTTPError ClientResponseError RequestException "
                "ServiceUnavailableError BadGatewayError InternalServerError")


def _status(codes: str) -> str:
    return (rf"(?:error code|status(?:[_ ]code)?|http(?:/[\d.]+)?|response(?: code)?(?: was| is)?)"
            rf"\W{{0,3}}(?:{codes})\b|"
            rf"^(?:{codes}), message=|"
            rf"(?:^|[\s'\"(])(?:{codes}) (?:client error|server error|unauthorized|forbidden|not found|"
            rf"too many requests|service unavailable|bad gateway|gateway time-?out|internal server error|"
            rf"request time-?out)")


EXCEPTIONS: tuple[ExceptionEntry, ...] = (
    # memory
    _e("OutOfMemoryError CudaOutOfMemoryError ObjectStoreFullError", Kind.OUT_OF_MEMORY,
       Msg("exception.OutOfMemoryError.out_of_memory")),
    _e("MemoryError", Kind.OUT_OF_MEMORY, Msg("exception.MemoryError.out_of_memory")),
    # sockets: the errno says which (torch's TCPStore and ZeroMQ print it their own way)
    _e("OSError DistNetworkError ZMQError ZMQBindError RuntimeError", Kind.PORT_IN_USE,
       Msg("exception.OSError.port_in_use"),
       r"\[Errno (?:98|48|10048)\]|address already in use|EADDRINUSE|errno: 98\b"),
    # clients of the server: openai, httpx, requests, aiohttp (timeouts before connections: subclasses)
    _e("APITimeoutError ReadTimeout WriteTimeout PoolTimeout ReadTimeoutError TimeoutException Timeout "
       "ServerTimeoutError TimeoutError RayChannelTimeoutError GetTimeoutError", Kind.SLOW_OR_STALLED,
       Msg("exception.APITimeoutError.slow_or_stalled")),
    _e("RateLimitError QueueOverflowError MaxQueuedTokensError", Kind.SLOW_OR_STALLED,
       Msg("exception.RateLimitError.slow_or_stalled")),
    _e("ContextWindowExceededError", Kind.CONTEXT_LENGTH,
       Msg("exception.ContextWindowExceededError.context_length")),
    _e("APIConnectionError ConnectError ConnectTimeout ConnectionRefusedError ClientConnectorError "
       "ServerDisconnectedError RemoteProtocolError NewConnectionError MaxRetryError ConnectionError "
       "ProtocolError ChunkedEncodingError IncompleteRead NetworkError ReadError WriteError CloseError "
       "ClientConnectionError ClientOSError ClientPayloadError ServerConnectionError RemoteDisconnected "
       "NameResolutionError gaierror UnsupportedProtocol InvalidURL MissingSchema InvalidSchema ProxyError",
       Kind.CONNECTION,
       Msg("exception.APIConnectionError.connection")),
    _e("AuthenticationError PermissionDeniedError", Kind.AUTH,
       Msg("exception.AuthenticationError.auth")),
    _e("NotFoundError VLLMNotFoundError LoRAAdapterNotFoundError", Kind.MODEL_NOT_FOUND,
       Msg("exception.NotFoundError.model_not_found")),
    # model source and files (before the HTTP statuses: the hub's errors are HTTP errors too)
    _e("HFValidationError RepositoryNotFoundError GatedRepoError RevisionNotFoundError EntryNotFoundError "
       "LocalEntryNotFoundError OfflineModeIsEnabled HfHubHTTPError LocalTokenNotFoundError", Kind.STARTUP_FAILURE,
       Msg("exception.HFValidationError.startup_failure")),
    _e("SafetensorError HeaderTooLarge UnpicklingError", Kind.STARTUP_FAILURE,
       Msg("exception.SafetensorError.startup_failure")),
    # an HTTP client's error: the status it carries (the model hub's answers are about the model's files)
    _e(_HTTP_ERRORS, Kind.STARTUP_FAILURE,
       Msg("exception.http.startup_failure"),
       r"huggingface\.co|hf\.co/|hf-mirror|modelscope"),
    _e(_HTTP_ERRORS, Kind.AUTH, Msg("exception.http.auth"),
       _status("401|403")),
    _e(_HTTP_ERRORS, Kind.MODEL_NOT_FOUND,
       Msg("exception.http.model_not_found"),
       _status("404")),
    _e(_HTTP_ERRORS, Kind.SLOW_OR_STALLED,
       Msg("exception.http.slow_or_stalled"),
       _status("408|429|504")),
    _e(_HTTP_ERRORS, Kind.CONNECTION,
       Msg("exception.http.connection"),
       _status("502|503"), symptom=True),
    _e(_HTTP_ERRORS, Kind.ENGINE_ERROR, Msg("exception.http.engine_error"),
       _status("500"), symptom=True),
    _e("InternalServerError", Kind.ENGINE_ERROR, Msg("exception.InternalServerError.engine_error"),
       symptom=True),
    # a gateway's class names for a status (LiteLLM's ServiceUnavailableError, BadGatewayError): the name says it
    _e("ServiceUnavailableError BadGatewayError", Kind.CONNECTION,
       Msg("exception.ServiceUnavailableError.connection"), symptom=True),
    _e("GatewayTimeoutError", Kind.SLOW_OR_STALLED,
       Msg("exception.GatewayTimeoutError.slow_or_stalled"), symptom=True),
    # text
    _e("UnicodeDecodeError UnicodeEncodeError UnicodeError", Kind.DECODE_ERROR,
       Msg("exception.UnicodeDecodeError.decode_error")),
    _e("TemplateError TemplateSyntaxError UndefinedError TemplateNotFound TemplateRuntimeError "
       "SecurityError ChatTemplateResolutionError", Kind.CHAT_TEMPLATE,
       Msg("exception.TemplateError.chat_template")),
    # builds that do not fit together
    _e("ImportError ModuleNotFoundError NVMLLibraryMismatchError", Kind.VERSION_MISMATCH,
       Msg("exception.ImportError.version_mismatch")),
    _e("OutOfResources", Kind.VERSION_MISMATCH,
       Msg("exception.OutOfResources.version_mismatch")),
    # the message's structure: a library's API or binary is not the one the caller was written for
    _e("AttributeError", Kind.VERSION_MISMATCH,
       Msg("exception.AttributeError.version_mismatch"),
       r"^module '[\w.]+' has no attribute"),
    _e("OSError RuntimeError", Kind.VERSION_MISMATCH,
       Msg("exception.OSError.version_mismatch"),
       r"cannot open shared object file|undefined symbol|Symbol not found|DLL load failed|GLIBC\w*_[\d.]+'? not found|"
       r"invalid ELF header|wrong ELF class"),
    _e("NotImplementedError", Kind.VERSION_MISMATCH,
       Msg("exception.NotImplementedError.version_mismatch"),
       r"not (?:yet )?supported (?:on|for|with|by) (?:the current platform|this (?:platform|device|GPU)|CPU|ROCm|"
       r"XPU|TPU|HPU|NPU|Neuron)|requires x86 with AVX|AVX-?512",
       phases=_STARTING),
    _e("TypeError", Kind.VERSION_MISMATCH,
       Msg("exception.TypeError.version_mismatch"),
       r"unexpected keyword argument|takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+|"
       r"missing \d+ required (?:positional|keyword-only) argument|got multiple values for (?:keyword )?argument",
       phases=_STARTING),
    # wrappers: the cause was printed before
    _e("EngineDeadError AsyncEngineDeadError EngineGenerateError", Kind.ENGINE_ERROR,
       Msg("exception.EngineDeadError.engine_error"), wrapper=True),
)


# Classes raised only while a request is handled: such an exception shows the server was serving.
SERVING_ONLY = frozenset({
    "VLLMClientError", "VLLMValidationError", "VLLMNotFoundError", "VLLMUnprocessableEntityError", "VLLMServerError",
    "GenerationError", "EngineGenerateError", "EngineDeadError", "AsyncEngineDeadError", "RequestValidationError",
    # a client's error carrying the server's answer: the server was up and answering
    "APIStatusError", "HTTPStatusError", "ClientResponseError",
})


@dataclass(frozen=True)
class RaisedInEntry:
    """A path fragment of the innermost vLLM/transformers frame, what it means, and in which phases."""

    fragments: tuple[str, ...]
    kind: Kind
    hint: str
    phases: frozenset[Phase] = _ANY_PHASE
    anywhere: bool = False  # anywhere on the stack, not only in the innermost frame
    function: str = ""  # the innermost frame's function must be this one ('<module>': code run on import)
    symptom: bool = False  # a client's view of the server: the server's own cause, if shown, wins


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
    # vLLM's renderers (0.16 on) render a conversation in render_chat(_async), and may tokenize there too: only
    # when it is the innermost frame (after the tokenizer's entries), as in vLLM #35679's chat warm-up traceback,
    # cut before its exception line.
    RaisedInEntry((" render_chat",), Kind.CHAT_TEMPLATE, Msg("raised_in.chat_utils")),
    RaisedInEntry(("model_loader", "weight_utils", "model_executor/models/", "modeling_", "configuration_",
                   "config.py", "configs/", "arg_utils", "transformers_utils"), Kind.STARTUP_FAILURE,
                  Msg("raised_in.model_loader"), _STARTING),
    # A client's transport (its exception line cut off by the excerpt): the request did not get through.
    RaisedInEntry(("httpcore/", "httpx/", "urllib3/", "requests/adapters", "aiohttp/", "openai/_base_client"),
                  Kind.CONNECTION, Msg("raised_in.httpcore_"), symptom=True),
    # transformers binds optional packages (kernels, deepspeed, peft, bitsandbytes) in its integrations modules;
    # their module-level code is the same on every machine, so raising there on import means the installed
    # package does not fit this transformers (odysseus #191: kernels' LayerRepository refusing transformers' call)
    RaisedInEntry(("transformers/integrations/",), Kind.VERSION_MISMATCH, Msg("raised_in.integrations_import"),
                  function="<module>"),
    RaisedInEntry(("attention/backends", "attention/ops", "v1/attention", "flash_attn", "xformers", "triton",
                   "_custom_ops", "platforms/"), Kind.VERSION_MISMATCH,
                  Msg("raised_in.attention_backends"),
                  _STARTING),  # start-up runs every kernel once (profiling, capture): one failing later is a crash
)


def exception_name(printed: str) -> str:
    """The class name of a printed exception type ('torch.OutOfMemoryError' -> 'OutOfMemoryError')."""
    return printed.rsplit(".", 1)[-1]


def ancestry(printed: str) -> list[str]:
    """A printed exception type and its bases, most specific first (`exception_bases.BASES`: a log
    prints only the name; the module part tells apart two libraries' classes of one name)."""
    name = exception_name(printed)
    bases = BASES.get(printed) or BASES.get(printed.split(".", 1)[-1]) or BASES.get(name, "")
    return [name, *bases.split()]


def lookup(names: list[str] | tuple[str, ...], message: str = "", phase: Phase | None = None
           ) -> ExceptionEntry | None:
    """The entry for the most specific of `names` (the exception's class, then its bases) that an entry
    names with its message condition and phase holding; entries of one class are tried in table order."""
    for name in dict.fromkeys(exception_name(n) for n in names):
        for entry in EXCEPTIONS:
            if name in entry.names and (entry.message is None or entry.message.search(message)) \
                    and (phase is None or phase in entry.phases):
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


# The class an AttributeError or TypeError names owns the failure: "'QWenTokenizer' object has no attribute
# 'byte_decoder'", "Ernie45ReasoningParser.__init__() got an unexpected keyword argument".
_OWNER = re.compile(r"'(?P<a>\w+)' object (?:has no attribute|is not)|^(?P<b>[A-Z]\w+)\.\w+\(\) (?:got|takes|missing)")


def owner_of(message: str) -> str:
    """The class an exception's message names as the one that failed ('' when none), for `raised_in` when
    the excerpt shows no frame of it."""
    m = _OWNER.search(message)
    return (m.group("a") or m.group("b") or "").lower() if m else ""


def raised_in(innermost: str, stack: str, phase: Phase) -> RaisedInEntry | None:
    """What the code an exception was raised in says, in this phase: the innermost frame of the serving
    stack's own code, or for some entries any frame of the stack."""
    for entry in RAISED_IN:
        where = stack if entry.anywhere else innermost
        if where and phase in entry.phases and any(f in where for f in entry.fragments) \
                and (not entry.function or f" {entry.function}" in where):
            return entry
    return None


def error_body(data: dict[str, object]) -> tuple[str, str] | None:
    """(names to look up, message) of a JSON error response: vLLM's `{"object": "error", "type":
    "BadRequestError", "code": 400, ...}`, OpenAI's `{"error": {"type": ..., "code": ...}}` and the like; None for
    any other document. The status becomes a message the HTTP client entries read ('status code 503')."""
    inner = data.get("error")
    error = inner if isinstance(inner, dict) else data if data.get("object") == "error" or _bare_error(data) else None
    if error is None:
        return (("HTTPStatusError", str(inner)) if isinstance(inner, str) and inner.strip() else None)
    kind = error.get("type")
    code = error.get("code") if error.get("code") is not None else data.get("status")
    message = str(error.get("message") or "")
    status = f"status code {code}: " if isinstance(code, int) or (isinstance(code, str) and code.isdigit()) else ""
    names = f"{kind} HTTPStatusError" if isinstance(kind, str) and kind.isidentifier() else "HTTPStatusError"
    return names, f"{status}{message}"


def _bare_error(data: dict[str, object]) -> bool:
    """An error object relayed without its envelope (a proxy's `Upstream error: {"message": …, "type":
    "BadRequestError", "code": 400}`): a message beside an exception's type or an HTTP error status."""
    kind, code = data.get("type"), data.get("code")
    named = isinstance(kind, str) and kind.endswith(("Error", "Exception"))
    status = isinstance(code, int) and 400 <= code <= 599
    return isinstance(data.get("message"), str) and (named or status)
