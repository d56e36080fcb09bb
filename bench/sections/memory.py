"""Figure 5: the app's own memory (the chainlit process, without its vLLM), idle and under 32 sessions."""

from __future__ import annotations

from bench.apps import AppServer
from bench.report import Row
from bench.sections import Context

SECTION = "5 memory"
TARGET_MB = 300  # megabytes, as the issue states it


def mib(value: float) -> float:
    return value / 2**20


def sample(ctx: Context, app: AppServer, key: str) -> float:
    """Record the chainlit process' RSS now under `key` (bytes)."""
    rss = float(app.rss_bytes())
    ctx.facts[key] = rss
    return rss


def run(ctx: Context) -> None:
    idle = ctx.facts.get("rss_idle_spawn")
    if idle is not None:
        ctx.report.add(Row(
            SECTION, "app RSS idle (spawn mode, no session)", f"{idle / 1e6:.0f} MB ({mib(idle):.0f} MiB)",
            f"<= {TARGET_MB} MB", idle / 1e6 <= TARGET_MB,
            f"vLLM's own process group beside it: {mib(ctx.facts.get('engine_rss', 0)):.0f} MiB",
        ))
    attach_idle = ctx.facts.get("rss_idle_attach")
    peak = ctx.facts.get("rss_peak_32_bytes")
    after = ctx.facts.get("rss_after_load_attach")
    if attach_idle is not None and peak:
        ctx.report.add(Row(
            SECTION, "app RSS with 32 sessions streaming (peak)", f"{peak / 1e6:.0f} MB ({mib(peak):.0f} MiB)",
            detail=f"same app idle before the load {mib(attach_idle):.0f} MiB, after the load and all sessions "
            f"closed {mib(after or 0):.0f} MiB (attach mode on the shared vLLM)",
        ))
