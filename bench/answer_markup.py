"""How long a real Chromium page takes to show the end of an answer heavy with markdown markup, with the page
parsing it as markdown (CHAT_ANSWER_MARKUP_LIMIT=0, Chainlit's own behaviour) and with the app's limit (the
default: past 1,000 delimiters the answer is shown as text, answer_markup.py), side by side in one run.

`python -m bench.answer_markup`. The replay upstream (bench/replay.py) streams each answer at 200 tokens/s in
vLLM's chunk format, taken from the recorded real stream `tests/data/streams/smollm2_64_tokens.sse`, with every
token's text replaced by the shape measured (words, `[a]`, `**a`, ` **b**`) and a last token ` ENDMARK`: these
stand for a model caught in a loop, which no recorded stream here holds. Both apps attach to the same upstream;
one browser, one login per app. Figures only, never asserted: from the question's submit to the page showing
ENDMARK, and what that adds to the stream's own duration (tokens / rate).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from bench.apps import CHAT_USER, AppServer, start_app
from bench.browser_check import ARGS, CHROMIUM
from bench.upstream import MODEL, start_upstream
from chainlit_app.settings import PROJECT_ROOT
from chainlit_app.testing.async_pages import AsyncChatPage

RECORDED = PROJECT_ROOT / "tests" / "data" / "streams" / "smollm2_64_tokens.sse"
TOKENS = 2_000
RATE = 200.0
SHAPES = (" ab", "[a]", "**a", " **b**")
END = " ENDMARK"
SHOWN = ("() => { const m = document.querySelectorAll('.ai-message .message-content'); "
         "return m.length > 0 && m[m.length - 1].innerText.includes('ENDMARK'); }")


def write_stream(folder: Path, shape: str) -> None:
    """The recorded stream's events, every content token replaced by `shape` (the last by END)."""
    events = [json.loads(line[6:]) for line in RECORDED.read_text().splitlines() if line.startswith("data: {")]
    content = [e for e in events if e.get("choices") and e["choices"][0].get("delta", {}).get("content")]
    usage = [e for e in events if e.get("usage")]

    def chunk(text: str, finish: str | None) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(json.dumps(content[1]))
        event["choices"][0]["delta"] = {"content": text}
        event["choices"][0]["finish_reason"] = finish
        return event

    first = json.loads(json.dumps(content[0]))
    first["choices"][0]["delta"]["content"] = shape
    chunks = [first, *(chunk(shape, None) for _ in range(TOKENS - 2)), chunk(END, None), chunk("", "length")]
    folder.mkdir(parents=True, exist_ok=True)
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in [*chunks, *usage]) + "data: [DONE]\n\n"
    (folder / "shape.sse").write_text(body)


async def seconds_to_end(app: AppServer, question: str) -> float:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        await AsyncChatPage(page, app.url).login(CHAT_USER, app.user_password)  # returns once the socket is up
        await page.fill("#chat-input", question)
        started = time.perf_counter()
        await page.click("#chat-submit")
        await page.wait_for_function(SHOWN, timeout=900_000, polling=100)
        seconds = time.perf_counter() - started
        await browser.close()
    return seconds


async def measure(work: Path, shape: str) -> tuple[float, float]:
    write_stream(work / "streams", shape)
    upstream = await start_upstream(work, RATE, 0.05, streams=work / "streams")
    apps: list[AppServer] = []
    try:
        figures = []
        for limit in ("0", ""):  # markdown always, then the app's default limit
            overrides = {"CHAT_ANSWER_MARKUP_LIMIT": limit} if limit else {}
            app = start_app(work / f"app-{limit or 'default'}", CHAT_MODE="attach",
                            CHAT_VLLM_URL=upstream.url + "/v1", CHAT_API_KEY=upstream.api_key,
                            CHAT_SERVED_MODEL_NAME=MODEL, CHAT_MAX_TOKENS=str(TOKENS), **overrides)
            apps.append(app)
            await app.wait_engine(("attached",), timeout=300)
            figures.append(await seconds_to_end(app, "Repeat after me."))
        return figures[0], figures[1]
    finally:
        for app in apps:
            app.stop()
        upstream.stop()


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-answer-markup-") as tmp:
        for index, shape in enumerate(SHAPES):
            markdown, limited = asyncio.run(measure(Path(tmp) / f"shape{index}", shape))
            print(f"  {TOKENS:,} tokens of {shape!r}: markdown {markdown:.2f} s, the app's limit {limited:.2f} s",
                  flush=True)
            rows.append((shape, markdown, limited))
    stream = TOKENS / RATE
    print(f"answer of {TOKENS:,} tokens at {RATE:.0f} tokens/s (the stream alone: {stream:.1f} s); from submit to "
          "the page showing its end")
    print("shape      | as markdown (s) | past the stream | the app (s) | past the stream | ratio")
    for shape, markdown, limited in rows:
        print(f"{shape!r:10} | {markdown:15.2f} | {markdown - stream:15.2f} | {limited:11.2f} | "
              f"{limited - stream:15.2f} | {markdown / limited:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
