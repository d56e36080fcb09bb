"""EngineClient: the HTTP client of one vLLM server (/health, /v1/models, /version, /metrics) and its readers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families


def normalise_base_url(url: str) -> str:
    """`http://h:8000`, `http://h:8000/`, `http://h:8000/v1` and `.../v1/` all mean the same server."""
    url = url.strip().rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    if "://" not in url:
        url = "http://" + url
    return url


@dataclass
class MetricsSnapshot:
    """The few figures the panel shows, read from vLLM's Prometheus text."""

    running: float = 0.0
    waiting: float = 0.0
    kv_cache_usage: float = 0.0
    prompt_tokens_total: float = 0.0
    generation_tokens_total: float = 0.0
    ttft_sum: float = 0.0
    ttft_count: float = 0.0
    raw: dict[str, float] = field(default_factory=dict)

    @property
    def mean_ttft(self) -> float | None:
        return self.ttft_sum / self.ttft_count if self.ttft_count else None


_GAUGES = {
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:kv_cache_usage_perc": "kv_cache_usage",
    "vllm:gpu_cache_usage_perc": "kv_cache_usage",
    "vllm:prompt_tokens_total": "prompt_tokens_total",
    "vllm:generation_tokens_total": "generation_tokens_total",
    "vllm:time_to_first_token_seconds_sum": "ttft_sum",
    "vllm:time_to_first_token_seconds_count": "ttft_count",
}


def parse_metrics(text: str) -> MetricsSnapshot:
    """Sum each series over its labels (one engine, possibly several label sets)."""
    snap = MetricsSnapshot()
    sums: dict[str, float] = {}
    # vLLM's page is mostly histogram buckets we do not read; parsing only our series costs a tenth.
    wanted = "\n".join(line for line in text.splitlines()
                       if line and line[0] != "#" and line.partition("{")[0].partition(" ")[0] in _GAUGES)
    for family in text_string_to_metric_families(wanted + "\n"):
        for sample in family.samples:
            if sample.name in _GAUGES and not math.isnan(sample.value):
                sums[sample.name] = sums.get(sample.name, 0.0) + sample.value
    for name, value in sums.items():
        setattr(snap, _GAUGES[name], value)
    snap.raw = sums
    return snap


class EngineClient:
    """Small HTTP client for one server; `/v1/*` needs the key, `/health` and `/metrics` do not."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float = 3.0):
        self.base_url = normalise_base_url(base_url)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=timeout)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def health(self) -> bool:
        try:
            response = await self._client.get("/health")
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    async def models(self) -> list[str]:
        """Served model names; raises httpx.HTTPStatusError on 401 and friends."""
        response = await self._client.get("/v1/models")
        response.raise_for_status()
        return [item["id"] for item in response.json().get("data", [])]

    async def version(self) -> str | None:
        try:
            response = await self._client.get("/version")
        except httpx.HTTPError:
            return None
        if response.status_code != 200:
            return None
        try:  # a proxy's error page or an older server: "unknown", never an exception that ends a loop
            body = response.json()
        except ValueError:
            return None
        value = body.get("version") if isinstance(body, dict) else None
        return str(value) if value is not None else None

    async def metrics(self) -> MetricsSnapshot | None:
        try:
            response = await self._client.get("/metrics")
        except httpx.HTTPError:
            return None
        if response.status_code != 200:
            return None
        return parse_metrics(response.text)

    async def chat_one_token(self, model: str, prompt: str = "Say OK.", max_tokens: int = 1,
                             extra: dict[str, Any] | None = None) -> str:
        """One chat completion of one token: the cheapest proof that the server answers a chat (a /health of
        200 says only that the HTTP server runs). `extra`: more request fields (a remedy's sampling setting).
        Raises httpx.HTTPError (status errors included)."""
        response = await self._client.post("/v1/chat/completions", json={
            "model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "temperature": 0, **(extra or {}),
        })
        response.raise_for_status()
        choice = response.json()["choices"][0]
        return str(choice["message"].get("content") or "")
