"""gRPC's statuses, as a real grpcio client prints them, are read as the HTTP statuses gRPC maps them to (issue 11:
never `healthy` while an error is in sight; before, `status = StatusCode.UNAVAILABLE` and `DEADLINE_EXCEEDED:`
read healthy). Real parts: a grpcio server on loopback that refuses or stalls a call, a client that meets it, and
the client's own error text fed to the classifier as a log.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import pytest

from chainlit_app.diagnostics import classify_lines
from chainlit_app.diagnostics.grpc_status import HTTP_STATUS, as_http_status

grpc = pytest.importorskip("grpc")


def test_the_table_names_every_status_grpc_has_but_ok() -> None:
    assert set(HTTP_STATUS) == {code.name for code in grpc.StatusCode} - {"OK"}


def _handler(behaviour: Callable[[Any], bytes]) -> Any:
    def call(_request: bytes, context: Any) -> bytes:
        return behaviour(context)

    base: Any = grpc.GenericRpcHandler

    class Generic(base):
        def service(self, _details: Any) -> Any:
            return grpc.unary_unary_rpc_method_handler(call)

    return Generic()


@pytest.fixture
def server() -> Iterator[Callable[[Callable[[Any], bytes]], str]]:
    started: list[Any] = []

    def serve(behaviour: Callable[[Any], bytes]) -> str:
        running = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[_handler(behaviour)])
        port = running.add_insecure_port("127.0.0.1:0")
        running.start()
        started.append(running)
        return f"127.0.0.1:{port}"

    yield serve
    for running in started:
        running.stop(grace=None)


def _error_text(target: str, timeout: float = 10) -> list[str]:
    """What the client prints for the failed call: str() of grpcio's error, line by line."""
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
        with pytest.raises(grpc.RpcError) as failed:
            call(b"", timeout=timeout)
    return str(failed.value).splitlines()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_call_to_a_port_nothing_listens_on_is_a_connection_failure() -> None:
    lines = _error_text(f"127.0.0.1:{_closed_port()}")
    assert any("StatusCode.UNAVAILABLE" in line for line in lines), lines
    assert classify_lines(lines).kind == "connection", lines


def test_a_refused_call_is_an_access_failure(server: Callable[[Callable[[Any], bytes]], str]) -> None:
    def refuse(context: Any) -> bytes:
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "token lacks access to the model")
        return b""

    lines = _error_text(server(refuse))
    assert classify_lines(lines).kind == "auth", lines


def test_a_call_past_its_deadline_is_a_stall(server: Callable[[Callable[[Any], bytes]], str]) -> None:
    def stall(_context: Any) -> bytes:
        time.sleep(3)
        return b""

    lines = _error_text(server(stall), timeout=0.5)
    assert any("DEADLINE_EXCEEDED" in line for line in lines), lines
    assert classify_lines(lines).kind == "slow_or_stalled", lines


@pytest.mark.parametrize("line", ["status = StatusCode.OK", "INFO: UNAVAILABLE models are skipped",
                                  "The NOT_FOUND constant is 5"])
def test_no_status_where_no_failure_is_carried(line: str) -> None:
    assert as_http_status(line) is None
