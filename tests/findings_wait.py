"""Waiting for the app's own log tail to name a finding: shared by the fault and remedy tests."""

from __future__ import annotations

import asyncio
from typing import Any

from chainlit_app.monitor import Monitor


async def finding_of(monitor: Monitor, kind: str, timeout: float = 10.0) -> dict[str, Any]:
    """The first open finding of `kind`, waiting for the tail to catch up."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for entry in monitor.store.snapshot():
            if entry["kind"] == kind and not entry["resolved"]:
                return entry
        await asyncio.sleep(0.1)
    kinds = [(e["kind"], e["evidence"][0]["text"][:120]) for e in monitor.store.snapshot()]
    raise AssertionError(f"no {kind} finding; found {kinds}")
