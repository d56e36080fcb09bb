"""A gRPC status (Triton's clients and its vLLM backend, XLA on a TPU, any gRPC service in front of vLLM) read as
the HTTP status it stands for, so the one exception table's HTTP entries decide it as they decide a status code.

The mapping is gRPC's own, documented code by code in google/rpc/code.proto ("HTTP Mapping: 503 Service
Unavailable"). Three shapes carry a status: `UNAVAILABLE: message` (Triton's and XLA's status strings),
`[StatusCode.UNAVAILABLE] message` (tritonclient's InferenceServerException) and `status = StatusCode.UNAVAILABLE`
(grpcio's _InactiveRpcError, whose `details = "…"` follows on the next line). OK is no failure.
"""

from __future__ import annotations

import re

HTTP_STATUS: dict[str, int] = {
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INVALID_ARGUMENT": 400,
    "DEADLINE_EXCEEDED": 504,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "PERMISSION_DENIED": 403,
    "RESOURCE_EXHAUSTED": 429,
    "FAILED_PRECONDITION": 400,
    "ABORTED": 409,
    "OUT_OF_RANGE": 400,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DATA_LOSS": 500,
    "UNAUTHENTICATED": 401,
}
_NAMES = "|".join(sorted(HTTP_STATUS, key=len, reverse=True))
_STATUS = re.compile(rf"^\s*(?:\[StatusCode\.(?P<bracketed>{_NAMES})\]\s*:?|(?P<bare>{_NAMES}):|"
                     rf"status = StatusCode\.(?P<field>{_NAMES})\b)\s*(?P<message>.*)$")
# lower-case words every shape above holds: the prefilter's needles for them
NEEDLES = ("statuscode.", *(f"{name.lower()}:" for name in HTTP_STATUS))


def as_http_status(message: str) -> tuple[int, str] | None:
    """(the HTTP status, the status's own message) for a line that carries a gRPC status, else None."""
    found = _STATUS.match(message)
    if found is None:
        return None
    name = found.group("bracketed") or found.group("bare") or found.group("field")
    return HTTP_STATUS[name], found.group("message").strip() or name
