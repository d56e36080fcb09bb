"""The running app in attach mode against a server whose /version first answers with text (a proxy's
page, a server still starting), then with JSON: the engine becomes usable and the version shows up.
No vLLM is needed: the server is a small local HTTP server."""

from __future__ import annotations

import asyncio
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from bench.apps import AppServer, start_app
from tests.local_http import JsonHandler, serving

VERSION = "0.32.0-odd-proxy"


class TextFirstVersion(JsonHandler):
    """/version answers three times with an HTML page, then with vLLM's JSON."""

    version_calls = 0

    def do_GET(self) -> None:
        if self.path == "/version":
            TextFirstVersion.version_calls += 1
            if TextFirstVersion.version_calls <= 3:
                body = b"<html><body>502 Bad Gateway</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_json(200, {"version": VERSION})
        elif self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": "tiny", "object": "model"}]})
        elif self.path in ("/health", "/metrics"):
            self.send_json(200, {})
        else:
            self.send_json(404, {"error": "not found"})

    def do_POST(self) -> None:
        """Chat completions answer as vLLM's do (the app's idle probe asks for one token)."""
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/v1/chat/completions":
            self.send_json(200, {"object": "chat.completion", "model": "tiny", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "OK"}, "finish_reason": "length"}]})
        else:
            self.send_json(404, {"error": "not found"})


def _handler() -> type[BaseHTTPRequestHandler]:
    TextFirstVersion.version_calls = 0
    return TextFirstVersion


async def _attached_and_versioned(app: AppServer) -> dict[str, object]:
    """Waits until the app's engine is attached, then until the panel shows the server's version."""
    state = await app.wait_engine(("attached",), timeout=120, poll=0.5)  # raises on "failed"
    assert state == "attached"
    deadline = time.monotonic() + 60
    engine: dict[str, object] = {}
    while time.monotonic() < deadline:
        engine = (await app.diagnostics())["engine"]
        if engine.get("version") == VERSION:
            break
        await asyncio.sleep(0.5)
    return engine


def test_text_from_version_does_not_end_attach_modes_checks(tmp_path: Path) -> None:
    with serving(_handler()) as url:
        app = start_app(tmp_path / "data", CHAT_MODE="attach", CHAT_VLLM_URL=url + "/v1", CHAT_PRELAUNCH="0")
        try:
            engine = asyncio.run(_attached_and_versioned(app))
            assert engine["state"] == "attached", engine
            assert engine["version"] == VERSION, f"the probe loop stopped asking /version: {engine}"
            assert TextFirstVersion.version_calls > 3
        finally:
            app.stop()
