"""`python -m bench.replay`: an OpenAI-compatible upstream that replays recorded vLLM streams at GPU rates.

Why: on this CPU vLLM makes 27 tokens/s for one answer, so the app's own cost hides behind the engine.
This server has no model: `/v1/chat/completions` (stream) answers with a recorded real vLLM stream
(bench/replay_streams.py), cut to the request's `max_tokens`, in vLLM 0.32's chunk format, grouped by
the request's `stream_interval` as vLLM groups, after a first-token delay and at a per-request token
rate (both set at start or through `POST /replay/config`). `/health`, `/version`, `/v1/models` and a
`/metrics` page with vLLM's counters let the app attach to it as to vLLM (`CHAT_MODE=attach`).

It must cost little, or on two cores the figures measure the upstream: bodies are encoded once per
(length, interval); one clock task walks the open streams every `tick` seconds and writes each
stream's due chunks as one slice of its body (tokens due within one tick leave in one write, as
vLLM's API server also writes what its engine step produced together). A client that closes its
connection ends its stream at once (counted as aborted). `GET /replay/stats` gives, per request,
when it arrived and when its first and last tokens were written (time.monotonic(), the same clock
in every process on Linux), keyed by the last user message, and the server's own CPU seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.replay_streams import PLACEHOLDER_ID, STREAMS_DIR, Encoded, RecordedStream, load_streams

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}


@dataclass
class Pace:
    """What each new request gets: seconds until its first token, tokens a second after it."""

    first_token_delay: float = 0.05
    rate: float = 200.0
    stream_interval: int = 1  # vLLM's --stream-interval: the least a request gets
    max_tokens: int = 0  # answers no longer than this (0: the recording's length), for clients that send none


@dataclass
class Active:
    """One stream being sent."""

    writer: asyncio.StreamWriter
    encoded: Encoded
    body: bytes
    first_at: float
    rate: float
    record: dict[str, Any]
    done: asyncio.Event = field(default_factory=asyncio.Event)
    next: int = 0

    def due_at(self) -> float:
        return self.first_at + (self.encoded.tokens_at[self.next] - 1) / self.rate


class ReplayServer:
    def __init__(self, streams: list[RecordedStream], model: str, api_key: str | None, pace: Pace,
                 tick: float = 0.002) -> None:
        self.streams = streams
        self.model = model
        self.api_key = api_key
        self.pace = pace
        self.tick = tick
        self.active: list[Active] = []
        self.records: list[dict[str, Any]] = []
        self.generated = 0
        self._wake = asyncio.Event()

    # -- the clock: one task writes every stream's due chunks --------------------------------------
    async def clock(self) -> None:
        while True:
            if not self.active:
                self._wake.clear()
                await self._wake.wait()
            now = time.monotonic()
            still: list[Active] = []
            for stream in self.active:
                if stream.writer.transport.is_closing():
                    self._end(stream, aborted=True)
                    continue
                if now >= stream.due_at():
                    self._send_due(stream, now)
                if stream.next < len(stream.encoded.ends):
                    still.append(stream)
            self.active = still
            await asyncio.sleep(self.tick)

    def _send_due(self, stream: Active, now: float) -> None:
        ends, tokens_at = stream.encoded.ends, stream.encoded.tokens_at
        first = stream.next
        last = first
        while last < len(ends) and (last == first or stream.first_at + (tokens_at[last] - 1) / stream.rate <= now):
            last += 1
        start = ends[first - 1] if first else 0
        payload = stream.body[start:ends[last - 1]]
        frame = b"%x\r\n%b\r\n" % (len(payload), payload)
        if last == len(ends):
            frame += b"0\r\n\r\n"
        epoch = time.time()  # before the write: a process descheduled after it would stamp the token late
        stream.writer.write(frame)
        sent = tokens_at[last - 1] - (tokens_at[first - 1] if first else 0)
        self.generated += sent
        if first == 0:
            stream.record["first_sent"] = now
            stream.record["first_sent_epoch"] = epoch
        stream.record["last_sent"] = now
        stream.record["last_sent_epoch"] = epoch  # for a browser's clock (Date.now())
        stream.record["tokens"] = tokens_at[last - 1]
        stream.record["writes"] += 1
        stream.next = last
        if last == len(ends):
            self._end(stream, aborted=False)

    def _end(self, stream: Active, aborted: bool) -> None:
        stream.record["aborted"] = aborted
        stream.next = len(stream.encoded.ends)
        stream.done.set()

    # -- HTTP/1.1, just what the openai client and httpx send ------------------------------------------
    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not await self.route(method, path.partition("?")[0], headers, body, reader, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    def _reply(self, writer: asyncio.StreamWriter, status: int, body: bytes | str | dict[str, Any] | list[Any],
               content_type: str = "application/json") -> None:
        data = json.dumps(body).encode() if isinstance(body, dict | list) else (
            body.encode() if isinstance(body, str) else body)
        writer.write(b"HTTP/1.1 %d %b\r\nserver: replay\r\ncontent-type: %b\r\ncontent-length: %d\r\n\r\n%b"
                     % (status, _REASONS.get(status, "").encode(), content_type.encode(), len(data), data))

    async def route(self, method: str, path: str, headers: dict[str, str], body: bytes,
                    reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection is to be closed."""
        if path.startswith("/v1/") and self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            self._reply(writer, 401, {"error": "Unauthorized"})
        elif path == "/health":
            self._reply(writer, 200, b"")
        elif path == "/version":
            self._reply(writer, 200, {"version": "0.32.0 (bench replay)"})
        elif path == "/v1/models":
            self._reply(writer, 200, {"object": "list", "data": [
                {"id": self.model, "object": "model", "owned_by": "vllm", "root": self.model, "max_model_len": 2048}]})
        elif path == "/metrics":
            self._reply(writer, 200, self.metrics(), "text/plain; version=0.0.4")
        elif path == "/replay/stats":
            self._reply(writer, 200, {"cpu_s": time.process_time(), "generated": self.generated,
                                      "active": len(self.active), "requests": self.records})
        elif path == "/replay/reset" and method == "POST":
            self.records = []
            self._reply(writer, 200, {})
        elif path == "/replay/config" and method == "POST":
            for key, value in json.loads(body or b"{}").items():
                setattr(self.pace, key, type(getattr(self.pace, key))(value))
            self._reply(writer, 200, vars(self.pace))
        elif path == "/v1/chat/completions" and method == "POST":
            return await self.chat(json.loads(body), reader, writer)
        else:
            self._reply(writer, 404, {"error": f"no route {method} {path}"})
        await writer.drain()
        return True

    def metrics(self) -> str:
        label = f'{{model_name="{self.model}"}}'
        return (f"vllm:num_requests_running{label} {len(self.active)}\nvllm:num_requests_waiting{label} 0\n"
                f"vllm:generation_tokens_total{label} {self.generated}\n")

    async def chat(self, request: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        if request.get("model") != self.model:
            self._reply(writer, 404, {"error": {"message": f"The model `{request.get('model')}` does not exist.",
                                                "type": "NotFoundError", "code": 404}})
            return True
        messages = request.get("messages") or [{}]
        question = str(next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), ""))
        interval = max(self.pace.stream_interval, int(request.get("stream_interval") or 1))
        source = self.streams[0]
        wanted = int(request.get("max_tokens") or len(source.tokens))
        encoded = source.encoded(min(wanted, self.pace.max_tokens or wanted), interval)
        if not request.get("stream"):
            text = source.text(encoded.tokens_at[-1])
            self._reply(writer, 200, {"id": "chatcmpl-replay", "object": "chat.completion", "model": self.model,
                                      "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                   "finish_reason": "length"}]})
            return True
        now = time.monotonic()
        record = {"question": question[:200], "received": now, "first_sent": None, "last_sent": None,
                  "tokens": 0, "interval": interval, "writes": 0, "aborted": None}
        self.records.append(record)
        writer.write(b"HTTP/1.1 200 OK\r\nserver: replay\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
                     b"transfer-encoding: chunked\r\n\r\n")
        body = encoded.body.replace(PLACEHOLDER_ID.encode(), b"chatcmpl-" + secrets.token_hex(8).encode())
        stream = Active(writer, encoded, body, now + self.pace.first_token_delay, self.pace.rate, record)
        self.active.append(stream)
        self._wake.set()
        closed = asyncio.ensure_future(reader.read(1))  # b"" when the client goes away mid-stream
        waiting = asyncio.ensure_future(stream.done.wait())
        await asyncio.wait({closed, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if not stream.done.is_set():
            self._end(stream, aborted=True)
            waiting.cancel()
            return False
        closed.cancel()  # the next request's read must not race this one
        with contextlib.suppress(asyncio.CancelledError):
            await closed
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        return not record["aborted"]


async def serve(args: argparse.Namespace) -> None:
    streams = load_streams(args.model, Path(args.streams))
    server = ReplayServer(streams, args.model, args.api_key or None,
                          Pace(args.first_token_delay, args.rate, args.stream_interval, args.max_tokens), args.tick)
    listener = await asyncio.start_server(server.handle, args.host, args.port, backlog=4096)
    clock = asyncio.create_task(server.clock())
    print(f"replay upstream at http://{args.host}:{args.port} ({len(streams)} stream(s), longest "
          f"{len(streams[0].tokens)} tokens)", flush=True)
    try:
        async with listener:
            await listener.serve_forever()
    finally:
        clock.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--model", default="replay")
    parser.add_argument("--api-key", default="")
    parser.add_argument("--rate", type=float, default=200.0, help="tokens a second per answer after the first")
    parser.add_argument("--first-token-delay", type=float, default=0.05, help="seconds")
    parser.add_argument("--stream-interval", type=int, default=1, help="as vLLM's --stream-interval")
    parser.add_argument("--max-tokens", type=int, default=0, help="cap on every answer (0: none)")
    parser.add_argument("--tick", type=float, default=0.002, help="seconds between the clock's walks")
    parser.add_argument("--streams", default=str(STREAMS_DIR), help="folder of recorded .sse bodies")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
