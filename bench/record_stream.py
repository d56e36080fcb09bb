"""`python -m bench.record_stream`: record real vLLM token streams for the replay upstream (bench/replay.py).

Starts the demo vLLM exactly as the bench's bare vLLM (the app's command line), sends the bench's story
prompt, and writes each raw SSE body to tests/data/streams/ beside a `.times` file (seconds since the
request was sent, one line per received network read, with its byte count): the replay serves the
bodies, and the fidelity figure compares its chunks with these. Long answers use vLLM's `ignore_eos`
(the model's own words, never cut short by an end of text); one short answer is recorded with
`stream_interval` 4, to compare the replay's grouped chunks with vLLM's own.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.apps import BareVllm
from bench.sections.streaming import PROMPT, chat_params

STREAMS = Path(__file__).resolve().parents[1] / "tests" / "data" / "streams"
# (file stem, max_tokens, ignore_eos, stream_interval)
RECORDINGS = (("smollm2_1024_tokens", 1024, True, 1), ("smollm2_64_tokens_interval4", 64, False, 4))


async def record(base_url: str, api_key: str, model: str, max_tokens: int, ignore_eos: bool,
                 interval: int) -> tuple[bytes, list[tuple[float, int]]]:
    params = chat_params(max_tokens, 2048)
    body = {"model": model, "stream": True, "stream_options": {"include_usage": True}, **params.request(PROMPT)}
    if ignore_eos:
        body["ignore_eos"] = True
    if interval > 1:
        body["stream_interval"] = interval
    raw = bytearray()
    reads: list[tuple[float, int]] = []
    async with httpx.AsyncClient(timeout=600.0) as http:
        sent = time.monotonic()
        async with http.stream("POST", base_url + "/v1/chat/completions", json=body,
                               headers={"Authorization": f"Bearer {api_key}"}) as response:
            response.raise_for_status()
            async for data in response.aiter_raw():
                reads.append((time.monotonic() - sent, len(data)))
                raw += data
    return bytes(raw), reads


async def main() -> int:
    with tempfile.TemporaryDirectory(prefix="record-") as tmp:
        bare = BareVllm(Path(tmp))
        await bare.start()
        try:
            print(f"vLLM healthy after {await bare.wait_healthy():.1f} s", flush=True)
            engine = bare.supervisor
            for stem, max_tokens, ignore_eos, interval in RECORDINGS:
                raw, reads = await record(engine.base_url, engine.api_key, engine.spec.served_model_name,
                                          max_tokens, ignore_eos, interval)
                (STREAMS / f"{stem}.sse").write_bytes(raw)
                (STREAMS / f"{stem}.times").write_text("".join(f"{at:.6f} {size}\n" for at, size in reads))
                print(f"{stem}: {len(raw)} bytes in {len(reads)} reads over {reads[-1][0]:.1f} s", flush=True)
        finally:
            await bare.stop()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
