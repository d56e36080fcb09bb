"""`python -m bench.replay_fidelity`: how close the replay upstream's stream is to a recorded vLLM stream.

* format: the replay's chunks for the recorded 64-token answer at stream_interval 4, against what
  vLLM 0.32 sent for it (recorded), event by event (id, creation time and fingerprint masked);
* chunk sizes: bytes per SSE event and characters per token, recorded 1024-token stream vs replay;
* timing: one answer read with httpx at 200 and 2,000 tokens/s: the gaps between network reads and
  how late each token arrived against its schedule (first-token delay + (i − 1) / rate), beside the
  recorded vLLM stream's gaps (on this CPU vLLM makes about 5 to 27 tokens/s, so its gaps are longer
  and only their regularity compares).
"""

from __future__ import annotations

import asyncio
import itertools
import re
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.gpu_figures import percentile
from bench.replay_streams import STREAMS_DIR, RecordedStream
from bench.upstream import MODEL, start_upstream


def _mask(body: bytes) -> list[bytes]:
    body = re.sub(rb"chatcmpl-[0-9a-f]{16}", b"ID", body)
    body = re.sub(rb'"created":\d+', b'"created":0', body)
    body = re.sub(rb'"(model|system_fingerprint)":"[^"]*"', rb'"\1":"X"', body)
    return body.split(b"\n\n")


def _gaps(times: list[float]) -> str:
    gaps = [b - a for a, b in itertools.pairwise(times)]
    mean = statistics.mean(gaps)
    return (f"gaps p50 {statistics.median(gaps) * 1000:.2f} ms, p95 {percentile(gaps, 0.95) * 1000:.2f} ms, "
            f"coefficient of variation {statistics.pstdev(gaps) / mean:.2f}")


async def timing(rate: float, tokens: int) -> str:
    with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp:
        upstream = await start_upstream(Path(tmp), rate, 0.05)
        try:
            await upstream.configure(rate=rate, max_tokens=tokens)
            body = {"model": MODEL, "stream": True, "max_tokens": tokens,
                    "messages": [{"role": "user", "content": "[fidelity] story"}]}
            arrivals: list[float] = []
            headers = {"Authorization": f"Bearer {upstream.api_key}"}
            async with httpx.AsyncClient(timeout=60) as http, http.stream(
                    "POST", upstream.url + "/v1/chat/completions", json=body, headers=headers) as response:
                async for _data in response.aiter_raw():
                    arrivals.append(time.monotonic())
            record = (await upstream.take_records())[-1]
            cpu = (await upstream.call("/replay/stats"))["cpu_s"]
        finally:
            upstream.stop()
    first = record["first_sent"]
    late = [arrival - (first + i / rate) for i, arrival in enumerate(arrivals)] if len(arrivals) == tokens + 1 else []
    return (f"{rate:.0f} tok/s, {tokens} tokens: {len(arrivals)} reads, {_gaps(arrivals)}"
            + (f"; lateness against the schedule p50 {statistics.median(late) * 1000:.2f} ms, "
               f"p95 {percentile(late, 0.95) * 1000:.2f} ms" if late else " (reads merged; no per-token lateness)")
            + f"; upstream CPU for the whole process so far {cpu:.2f} s")


def main() -> int:
    source = RecordedStream.load(STREAMS_DIR / "smollm2_64_tokens.sse", MODEL)
    recorded4 = (STREAMS_DIR / "smollm2_64_tokens_interval4.sse").read_bytes()
    same = _mask(source.encoded(64, 4).body) == _mask(recorded4)
    print(f"format: 64 tokens at stream_interval 4, replay vs vLLM 0.32: {'identical' if same else 'DIFFERENT'} "
          f"event by event ({len(_mask(recorded4)) - 1} events; id, created, model, fingerprint masked)")
    long_path = STREAMS_DIR / "smollm2_1024_tokens.sse"
    recorded = long_path.read_bytes()
    long = RecordedStream(recorded, "smollm2-135m-instruct")
    replayed = long.encoded(len(long.tokens), 1).body
    sizes = [len(e) for e in recorded.split(b"\n\n") if e]
    print(f"chunk sizes: recorded {len(recorded)} bytes in {len(sizes)} events (median {statistics.median(sizes):.0f} "
          f"bytes), replay {len(replayed)} bytes; {len(''.join(long.tokens)) / len(long.tokens):.2f} chars per token")
    times = [float(line.split()[0]) for line in long_path.with_suffix(".times").read_text().splitlines()]
    print(f"recorded vLLM (CPU, {len(long.tokens) / (times[-1] - times[0]):.1f} tok/s): {_gaps(times[1:-1])}")
    for rate, tokens in ((200.0, 256), (2000.0, 1024)):
        print("replay " + asyncio.run(timing(rate, tokens)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
