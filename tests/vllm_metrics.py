"""What vLLM's own /metrics page says about requests, read with prometheus-client's parser.

vLLM 0.32 counts a request that a client abandons nowhere by name: `vllm:request_success_total` moves
only for requests that finish (its `abort` label stays put for a client's abort, FACTS.md), and
`vllm:num_requests_running` only drops. A request that produced a first token
(`vllm:time_to_first_token_seconds_count`) and left the running set without finishing was aborted, so
tests count aborts as first tokens minus finishes, plus the `abort` label should a later vLLM move it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from prometheus_client.parser import text_string_to_metric_families


@dataclass(frozen=True)
class RequestCounts:
    running: float = 0.0
    first_tokens: float = 0.0  # requests that produced their first token
    generated_tokens: float = 0.0
    finished: dict[str, float] = field(default_factory=dict)  # vllm:request_success_total by finished_reason

    @property
    def finished_normally(self) -> float:
        """Requests that ended on their own: stop, length, error, repetition (everything but abort)."""
        return sum(n for reason, n in self.finished.items() if reason != "abort")

    def aborted_since(self, before: RequestCounts) -> float:
        """Requests started since `before` that are neither running nor finished on their own."""
        started = self.first_tokens - before.first_tokens
        ended = self.finished_normally - before.finished_normally
        return started - ended - (self.running - before.running)


def parse_request_counts(text: str) -> RequestCounts:
    running = first = generated = 0.0
    finished: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "vllm:num_requests_running":
                running += sample.value
            elif sample.name == "vllm:time_to_first_token_seconds_count":
                first += sample.value
            elif sample.name == "vllm:generation_tokens_total":
                generated += sample.value
            elif sample.name == "vllm:request_success_total":
                reason = sample.labels.get("finished_reason", "")
                finished[reason] = finished.get(reason, 0.0) + sample.value
    return RequestCounts(running, first, generated, finished)


def read_request_counts(base_url: str) -> RequestCounts:
    """GET <base_url>/metrics (open without the API key) and parse it."""
    response = httpx.get(base_url.rstrip("/") + "/metrics", timeout=10.0)
    response.raise_for_status()
    return parse_request_counts(response.text)
