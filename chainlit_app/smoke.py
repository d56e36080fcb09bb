"""`python -m chainlit_app.smoke`: does this deployment work end to end, as a user sees it?

Drives a real Chromium (Debian's) against any deployment of the app, times each step, and exits
non-zero when something a user would notice is broken, naming the diagnostics panel's open findings.
Needs Playwright: `pip install 'chainlit-vllm-console[smoke]'` (the dev extra has it too).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

PASSWORD_ENV = "CHAT_SMOKE_PASSWORD"
USER_ENV = "CHAT_SMOKE_USER"
DEFAULT_QUESTION = "What is the capital of France?"
DEFAULT_EXPECT = "Paris"
EXIT_BROKEN = 1
EXIT_USAGE = 2


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m chainlit_app.smoke", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the app's address")
    parser.add_argument("--user", default=os.environ.get(USER_ENV, "admin"), help=f"login name (or {USER_ENV})")
    parser.add_argument("--password", default=None, help=f"password (better: {PASSWORD_ENV}, kept out of ps)")
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--expect", default=DEFAULT_EXPECT, help="text the answer must contain (any case)")
    parser.add_argument("--admin", action="store_true",
                        help="also open the diagnostics panel and require no open error finding")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    parser.add_argument("--screenshots", type=Path, default=None,
                        help="save a screenshot of each step here (on failure: ./smoke-results otherwise)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds each step may take")
    parser.add_argument("--chromium", default=None, help="the Chromium to drive (default: Debian's)")
    return parser.parse_args(argv)


def _usage_error(message: str, as_json: bool) -> int:
    print(json.dumps({"ok": False, "failure": message}) if as_json else f"smoke: {message}",
          file=sys.stdout if as_json else sys.stderr)
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    password = args.password if args.password is not None else os.environ.get(PASSWORD_ENV)
    if not password:
        return _usage_error(f"no password: pass --password or set {PASSWORD_ENV}", args.json)
    try:
        from playwright.sync_api import sync_playwright

        from chainlit_app.testing.browser import MissingChromium, launch_options
        from chainlit_app.testing.smoke_steps import SmokeOptions, run_smoke
    except ImportError as exc:
        return _usage_error(f"Playwright is missing ({exc}): pip install 'chainlit-vllm-console[smoke]'", args.json)
    try:
        launch = launch_options(args.chromium)
    except MissingChromium as exc:
        return _usage_error(str(exc), args.json)
    options = SmokeOptions(args.url.rstrip("/"), args.user, password, args.question, args.expect, args.admin,
                           args.timeout, args.screenshots)
    console: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
            page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
            report = run_smoke(page, options, console)
        finally:
            browser.close()
    body = report.to_json()
    print(json.dumps(body, ensure_ascii=False) if args.json else render(body))
    return 0 if report.ok else EXIT_BROKEN


def render(body: dict[str, Any]) -> str:
    lines = [f"smoke check of {body['url']} as {body['user']}"]
    elapsed = 0.0
    for step in body["steps"]:
        elapsed += step["seconds"]
        mark = "ok  " if step["ok"] else "FAIL"
        lines.append(f"  {mark} {step['name']:<16} {step['seconds']:7.2f} s  (at {elapsed:6.2f} s)"
                     + (f"  {step['detail']}" if step["detail"] else ""))
    for finding in body["open_findings"]:
        lines.append(f"  open finding: {finding['kind']} ({finding['severity']}): {finding['title']}")
        if finding["evidence"]:
            lines.append(f"      evidence: {finding['evidence'][:200]}")
    if body["ok"]:
        lines.append(f"PASS in {body['total_seconds']:.2f} s")
    else:
        lines.append(f"FAIL: {body['failure']}")
        if body["screenshot"]:
            lines.append(f"  screenshot: {body['screenshot']}  console: {body['console']}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
