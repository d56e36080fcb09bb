"""The general mechanisms of the round-21 pass (issue 11: the misses of holdout round 21, moved to dev), each on
the real lines it was written from and each beside the healthy shape that must stay quiet.

An app's debug lines for an answer whose content came back empty, a P/D-disaggregated decode node that decodes
under one token a second for requests it took over a whole stats interval earlier, a server error whose own words
name a missing API key, and transformers 5 under a vLLM written for transformers 4 (a config class vLLM refuses, a
tokenizer attribute transformers 5 removed).
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.pd_decode_stall import MECHANISM_ID, clock_seconds
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID

# vllm-ascend #13648, as the poster sanitized it (node prefixes and '...' elisions are theirs)
_TRANSFER = ("21:30:52 D0/rank1: KV cache transfer for request chatcmpl-1785850221089_unknown_request_id-8687696f "
             "took 885.13 ms ... remote_session_id=P1:16779")
_STATS = "{t} Engine 001: Avg generation throughput: {tps} tokens/s, Running: {r} reqs, Waiting: {w} reqs, Ext"


def _rules(lines: list[str]) -> list[str]:
    return [finding.rule for finding in classify_lines(lines).findings]


def test_server_error_naming_a_missing_api_key_is_auth() -> None:
    report = classify_lines(['ai-api  | 8:40AM ERR Server error error="missing or malformed API Key" ip=127.0.0.1 '
                             'latency="364.984µs" method=GET status=500 url=/readyz'])  # LocalAI #3655
    assert report.kind == "auth"
    # a flag or setting that mentions the key is no error
    assert classify_lines(["INFO: starting with --api-key set; requests without it get 401"]).kind == HEALTHY


def test_transformers5_under_an_older_vllm_is_version_mismatch() -> None:
    config = ["TypeError: Invalid type of HuggingFace config.",  # vLLM #36236
              "Expected type: <class 'vllm.transformers_utils.configs.qwen3_5_moe.Qwen3_5MoeConfig'>",
              "but found type: <class 'transformers.models.qwen3_5_moe.configuration_qwen3_5_moe."
              "Qwen3_5MoeTextConfig'>"]
    assert classify_lines(config).kind == "version_mismatch"
    tokenizer = ['(APIServer pid=98439)     raise AttributeError(f"{self.__class__.__name__} has no attribute {key}")',
                 "(APIServer pid=98439) AttributeError: Qwen2Tokenizer has no attribute all_special_tokens_extended. "
                 "Did you mean: 'num_special_tokens_to_add'?"]  # rllm #388
    assert classify_lines(tokenizer).kind == "version_mismatch"
    # another attribute a tokenizer lacks is no release change
    other = RULES_BY_ID["tokenizer_attribute_removed_in_transformers5"]
    assert not other.pattern.search("AttributeError: Qwen2Tokenizer has no attribute chat_template_kwargs")


def test_app_debug_lines_for_empty_content() -> None:
    report = classify_lines(["[DEBUG][LLM] ⚠️ EMPTY CONTENT - checking reasoning fallback",  # SpeakMCP PR #793
                             "[DEBUG][LLM] Empty response details: { finish_reason: 'stop', ... }",
                             "[DEBUG][LLM] ⏳ Network error - retrying in 4 seconds... (attempt 3/4)"])
    assert report.kind == "empty_output"
    assert "client_words_for_empty_answer" in [finding.rule for finding in report.findings]
    # a normal finish with content, and prose about the fallback, stay quiet
    assert classify_lines(["[DEBUG][LLM] Response details: { finish_reason: 'stop', content_length: 412 }",
                           "checking reasoning fallback is enabled"]).kind == HEALTHY


def test_decode_node_stalled_a_whole_interval_after_the_transfer() -> None:
    lines = [_TRANSFER, _STATS.format(t="21:31:02", tps="0.1", r=1, w=0)]
    assert MECHANISM_ID in _rules(lines)
    assert classify_lines(lines).kind == "slow_or_stalled"
    assert MECHANISM_ID in _rules([_TRANSFER, _STATS.format(t="21:31:12", tps="0.0", r=2, w=0)])


def test_decode_node_healthy_shapes_stay_quiet() -> None:
    # decoding at speed, a request that arrived late in the interval, an idle node, and no clock time at all
    for stats in (_STATS.format(t="21:31:02", tps="38.4", r=1, w=0), _STATS.format(t="21:30:55", tps="0.3", r=1, w=0),
                  _STATS.format(t="21:31:02", tps="0.0", r=0, w=0), _STATS.format(t="", tps="0.1", r=1, w=0)):
        assert MECHANISM_ID not in _rules([_TRANSFER, stats]), stats
    # a stats report without any KV transfer before it says nothing by itself
    assert MECHANISM_ID not in _rules([_STATS.format(t="21:31:02", tps="0.1", r=1, w=0)])


def test_clock_seconds() -> None:
    assert clock_seconds("21:30:52 D0/rank1: KV cache transfer") == 21 * 3600 + 30 * 60 + 52
    assert clock_seconds("INFO 02-12 15:00:36 [monitor.py:34] x") == 15 * 3600 + 36
    assert clock_seconds("no time here, took 885.13 ms") is None
