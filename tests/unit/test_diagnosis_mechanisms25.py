"""The general mechanism of the round-25 pass (issue 11: the one miss of holdout round 25, moved to dev), on the
real lines it was written from, beside the shape that must still be named.

One running request that holds nearly the whole KV cache is a freeze only while it is decoding (an answer that
never stops grows its blocks report after report); a request whose prompt is being prefilled holds its prompt's
blocks, and a long prompt may fill the cache on a healthy server.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines

_V1 = ("[loggers.py:123] Engine 000: Avg prompt throughput: {p} tokens/s, Avg generation throughput: {g} tokens/s, "
       "Running: {r} reqs, Waiting: 0 reqs, GPU KV cache usage: {kv}%, Prefix cache hit rate: {hit}%")


def test_one_request_prefilling_a_long_prompt_into_a_full_cache_is_no_freeze() -> None:
    # discuss.vllm.ai #1863: the cache climbs 11.7 -> 99.3 % under load; the last report has one request, prefilling
    lines = [_V1.format(p="600.0", g="77.2", r=5, kv="11.7", hit="99.2"),
             _V1.format(p="2297.1", g="422.2", r=10, kv="94.9", hit="92.5"),
             _V1.format(p="800.0", g="255.0", r=1, kv="99.3", hit="93.1")]
    assert classify_lines(lines).kind == HEALTHY
    # the same report with no prompt admitted: one answer alone filled the cache while decoding (vllm #1879's shape)
    decoding = [*lines[:2], _V1.format(p="0.0", g="255.0", r=1, kv="99.3", hit="93.1")]
    report = classify_lines(decoding)
    assert report.kind == "slow_or_stalled"
    assert report.root is not None and report.root.rule == "one_request_fills_kv_cache"
