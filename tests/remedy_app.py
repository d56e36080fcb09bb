"""The running app as the remedy tests drive it: `chainlit run app.py` (bench.apps) with a fault in its settings,
/api/diagnostics polled as the panel polls it, and POST /api/remedies/apply and /undo sent with the admin's
cookie and the app's own Origin, as the panel's "Apply fix" and "Undo" send them (issue 13)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.apps import AppServer, start_app
from tests.conftest import need_engine

APPLY, UNDO = "/api/remedies/apply", "/api/remedies/undo"
USER = "alice"
USER_PASSWORD = "remedy-user-password"
# vLLM's own start decides (no preflight), and a failed start stays failed for the panel (no automatic retry).
NO_SHORTCUTS = {"CHAT_PREFLIGHT": "0", "CHAT_MAX_RESTARTS": "0"}


@asynccontextmanager
async def running_app(data_dir: Path, **env: str) -> AsyncIterator[AppServer]:
    need_engine()
    server = start_app(data_dir, chat_user=USER, user_password=USER_PASSWORD, **{**NO_SHORTCUTS, **env})
    try:
        await server.wait_http(180)
        yield server
    finally:
        server.stop()


@asynccontextmanager
async def admin_http(app: AppServer) -> AsyncIterator[httpx.AsyncClient]:
    """The admin's browser: its login cookie, and the Origin header a page of the app sends with a POST."""
    async with httpx.AsyncClient(base_url=app.url, timeout=30, cookies=await app.admin_cookies(),
                                 headers={"Origin": app.url}) as http:
        yield http


async def wait_for(app: AppServer, what: str, test: Callable[[dict[str, Any]], Any],
                   timeout: float = 600.0) -> dict[str, Any]:
    """Poll /api/diagnostics (as the panel does) until `test(body)` is true."""
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        app._check_alive()
        body = await app.diagnostics()
        if test(body):
            return body
        await asyncio.sleep(0.5)
    raise AssertionError(f"{what} did not happen: engine {body.get('engine', {}).get('state')}, findings "
                         f"{[(f['kind'], f['resolved']) for f in body.get('findings', [])]}\n{app.log_text()[-2000:]}")


def open_finding(body: dict[str, Any], kind: str, remedy: str) -> dict[str, Any] | None:
    """The open finding of `kind` the panel would draw `remedy`'s button on."""
    return next((f for f in body["findings"] if f["kind"] == kind and not f["resolved"]
                 and any(r["id"] == remedy for r in f["remedies"])), None)


def offered(body: dict[str, Any], finding: dict[str, Any], remedy: str) -> dict[str, Any]:
    return next(r for r in finding["remedies"] if r["id"] == remedy)


async def press(http: httpx.AsyncClient, path: str, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """One click: the POST, its JSON answer (the RemedyResult) and the seconds from click to that answer."""
    clicked = time.monotonic()
    response = await http.post(path, json=payload, timeout=900)
    seconds = time.monotonic() - clicked
    assert response.status_code == 200, (path, payload, response.status_code, response.text)
    result: dict[str, Any] = response.json()
    return result, seconds


def fixed_by(body: dict[str, Any], finding_id: str, remedy: str) -> dict[str, Any]:
    """The finding once the remedy's verification succeeded: resolved, "fixed by …", its buttons gone."""
    entry = next(f for f in body["findings"] if f["id"] == finding_id)
    assert entry["resolved"] and entry["resolved_reason"].startswith(f"fixed by {remedy}"), entry
    assert entry["remedy_outcome"]["state"] == "verified" and entry["remedies"] == [], entry
    return entry


def listed(body: dict[str, Any]) -> list[tuple[str, Any, Any, str]]:
    """The overrides as the panel lists them: field, value, previous value, remedy."""
    return [(o["field"], o["value"], o["previous"], o["remedy"]) for o in body["overrides"]["overrides"]]


async def newest_command(app: AppServer, body: dict[str, Any]) -> str:
    """The command line of the newest launch, from its record as the panel's launch list opens it."""
    newest = body["launches"][0]["id"]
    async with httpx.AsyncClient(base_url=app.url, timeout=30, cookies=await app.admin_cookies()) as http:
        response = await http.get(f"/api/diagnostics/launches/{newest}")
    response.raise_for_status()
    return " ".join(response.json()["command"])
