"""A real Chromium page follows one answer streamed at 2,000 tokens/s through the app (bench check).

The app runs in attach mode on the replay upstream; the page logs in as a user would and asks. A
MutationObserver in the page notes (Date.now(), the browser's wall clock) the first moment the answer
element shows the answer's last words; the upstream notes (time.time(), the same machine's wall clock)
when it wrote the last token. The lag between the two is what a reader waits after the server is done.
Figures only (the bench never asserts times): `python -m bench.browser_check`.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright

from bench.apps import CHAT_USER, start_app
from bench.gpu_clients import question, tag_of
from bench.replay_streams import load_streams
from bench.report import Row
from bench.sections import Context
from bench.upstream import MODEL, start_upstream

CHROMIUM = os.environ.get("CHAT_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
RATE = 2000.0
TOKENS = 512  # the app's default max_tokens (the page asks with the default settings)
# Watches the answer element that appears after the question (the one at index `before`) for the answer's
# closing words, and notes the wall-clock time (ms) it first shows them.
WATCH = """([tail, before]) => {
  window.__shown = null;
  window.__first = null;
  const norm = (t) => t.replace(/\\s+/g, ' ');
  const check = () => {
    const answer = document.querySelectorAll('.ai-message .message-content')[before];
    if (window.__first === null && answer && answer.innerText.trim()) window.__first = Date.now();
    if (window.__shown === null && answer && norm(answer.innerText).includes(tail)) window.__shown = Date.now();
  };
  if (window.__observer) window.__observer.disconnect();  // the last answer's watcher would fire at once
  window.__observer = new MutationObserver(check);
  window.__observer.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def unique_tail(text: str, least: int = 24) -> str:
    """The shortest ending of `text` (spaces normalised, at least `least` characters) found once in it: the
    recorded answer repeats itself, so its last words alone may show up long before the end."""
    flat = re.sub(r"\s+", " ", text).strip()
    for size in range(least, len(flat) + 1):
        if flat.count(flat[-size:]) == 1:
            return flat[-size:]
    return flat


async def clock_offset(page: Page, samples: int = 20) -> tuple[float, float]:
    """The page's Date.now() minus this process's time.time() (ms), from the round trip with the smallest
    spread: the two clocks need not agree to the millisecond (the figure is corrected by this)."""
    best = (0.0, float("inf"))
    for _ in range(samples):
        before = time.time() * 1000
        browser = float(await page.evaluate("() => Date.now()"))
        after = time.time() * 1000
        if (after - before) / 2 < best[1]:
            best = (browser - (before + after) / 2, (after - before) / 2)
    return best


async def follow(ctx: Context) -> dict[str, Any]:
    upstream = await start_upstream(ctx.work_dir / "replay-browser", RATE, 0.05)
    app = start_app(ctx.work_dir / "app-browser", CHAT_MODE="attach", CHAT_VLLM_URL=upstream.url + "/v1",
                    CHAT_API_KEY=upstream.api_key, CHAT_SERVED_MODEL_NAME=MODEL,
                    CHAT_LOG_FILE=str(upstream.log_path))
    try:
        await app.wait_engine(("attached",), timeout=300)
        await upstream.configure(rate=RATE, max_tokens=TOKENS)
        source = load_streams(MODEL)[0]
        tail = unique_tail(source.text(TOKENS))
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            await page.goto(app.url + "/login")
            await page.fill("#email", CHAT_USER)
            await page.fill("#password", app.user_password)
            await page.click("button[type=submit]")
            await page.wait_for_selector("text=Welcome!", timeout=60_000)
            for answer in range(3):  # the first two also learn the pace; the third is measured
                await upstream.take_records()
                before = await page.locator(".ai-message .message-content").count()
                await page.evaluate(WATCH, [tail, before])
                await page.fill("#chat-input", question(f"browser-{answer}"))
                await page.click("#chat-submit")
                await page.wait_for_function("() => window.__shown !== null", timeout=60_000)
            offset_ms, spread_ms = await clock_offset(page)
            shown_ms = float(await page.evaluate("() => window.__shown")) - offset_ms
            first_ms = float(await page.evaluate("() => window.__first")) - offset_ms
            await asyncio.sleep(1.0)
            await browser.close()
        # the measured question's own request (the app's monitor may send probes of its own meanwhile)
        record = next(r for r in await upstream.take_records() if tag_of(str(r["question"])) == "browser-2")
        return {"lag_ms": shown_ms - record["last_sent_epoch"] * 1000,
                "first_lag_ms": first_ms - record["first_sent_epoch"] * 1000, "tokens": record["tokens"],
                "upstream_s": record["last_sent"] - record["first_sent"], "writes": record["writes"],
                "clock_offset_ms": offset_ms, "clock_spread_ms": spread_ms}
    finally:
        app.stop()
        upstream.stop()


async def run(ctx: Context) -> None:
    if not Path(CHROMIUM).exists():
        ctx.report.add(Row("6 GPU rates", "browser: whole text after the upstream's last token", "skipped",
                           detail=f"Chromium missing at {CHROMIUM}"))
        return
    seen = await follow(ctx)
    ctx.say(f"  browser at {RATE:.0f} tok/s: {seen}")
    ctx.report.add(Row("6 GPU rates", f"browser following 1 × {RATE:.0f} tok/s: whole text shown after the "
                       "upstream's last token", f"{seen['lag_ms']:.0f} ms", "<= 100 ms", seen["lag_ms"] <= 100,
                       f"{seen['tokens']} tokens written over {seen['upstream_s']:.2f} s in {seen['writes']} writes; "
                       f"the first text showed {seen['first_lag_ms']:.0f} ms after the upstream wrote the first token; "
                       f"the page's clock differed by {seen['clock_offset_ms']:.1f} ms "
                       f"(± {seen['clock_spread_ms']:.1f} ms), corrected"))


def main() -> int:
    from bench.machine import LoadLog
    from bench.report import Report

    report = Report()
    with tempfile.TemporaryDirectory(prefix="bench-browser-") as tmp:
        ctx = Context(full=False, work_dir=Path(tmp), report=report, load=LoadLog([]))
        asyncio.run(run(ctx))
    print(report.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
