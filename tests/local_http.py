"""A real HTTP server on 127.0.0.1 for unit tests that talk to "a server that answers like vLLM"."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JsonHandler(BaseHTTPRequestHandler):
    """Base for test handlers: JSON answers, no access log on stderr."""

    def send_json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class AttachChecksHandler(JsonHandler):
    """Answers the checks attach mode makes (`/health`, `/version`, `/v1/models` with one model `tiny`) like vLLM;
    anything else is a 404. Tests that need the chat subclass it with a `do_POST`."""

    def do_GET(self) -> None:
        if self.path == "/health":
            self.send_json(200, {})
        elif self.path == "/version":
            self.send_json(200, {"version": "0.0-test"})
        elif self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": "tiny", "object": "model"}]})
        else:
            self.send_json(404, {"error": "not found"})


async def until(what: str, check: Callable[[], Awaitable[Any]], timeout: float = 60.0) -> Any:
    """Poll `check` every half second until it returns something true (returned), or fail naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await check()
        if value:
            return value
        await asyncio.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on a free loopback port for the duration; yields http://127.0.0.1:PORT."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
