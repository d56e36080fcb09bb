"""The general mechanisms that named round 14's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the healthy shape beside it, so that a mechanism that fires
on everything fails here."""

from __future__ import annotations

from pathlib import Path

from chainlit_app.diagnostics import HEALTHY, classify_file, classify_lines
from chainlit_app.diagnostics.logprob_pieces import without_logprobs
from chainlit_app.diagnostics.prefill_starvation import PrefillStarvation

DEV = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"

# vLLM PR #2918: a healthy chat completion printed with its logprobs, cut by the excerpt inside the tokens
LOGPROBS_LINE = (DEV / "healthy" / "round14a_pr2918_chat_completion_logprobs_llama2_7b_finish_stop.log").read_text()
# blazux/qwen3.8-Flash-DGX #9: decoding requests starved while a long prompt is prefilled
CRAWL = ("(APIServer pid=1) INFO 09-07 06:35:40 [loggers.py:310] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
         "Avg generation throughput: 0.9 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 63.7%, "
         "Prefix cache hit rate: 85.1%")
PREFILL = ("(APIServer pid=1) INFO 09-07 06:35:50 [loggers.py:310] Engine 000: Avg prompt throughput: 7408.7 tokens/s, "
           "Avg generation throughput: 20.4 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 64.0%, "
           "Prefix cache hit rate: 85.1%")
DECODING = CRAWL.replace("generation throughput: 0.9", "generation throughput: 41.3")


def test_logprobs_token_pieces_are_not_read_as_the_answer() -> None:
    assert "tokens=" in LOGPROBS_LINE and "tokens=" not in without_logprobs(LOGPROBS_LINE)
    assert classify_lines(LOGPROBS_LINE.splitlines()).kind == HEALTHY
    # only the structure goes: what follows its closing bracket is still read
    closed = "text='Hi', logprobs=Logprobs(tokens=['▁H', 'i'], top_logprobs=[{'▁H': -0.1}]), usage=None"
    assert without_logprobs(closed) == "text='Hi', , usage=None"
    body = '{"content":"Hi","logprobs":{"content":[{"token":"Hi","bytes":[72,105]}]},"finish_reason":"stop"}'
    assert without_logprobs(body) == '{"content":"Hi",,"finish_reason":"stop"}'
    assert without_logprobs("logprobs=None and no structure") == "logprobs=None and no structure"


def test_decoding_starved_behind_a_long_prefill_is_slow() -> None:
    report = classify_lines([CRAWL, PREFILL])
    assert report.kind == "slow_or_stalled" and report.root is not None
    assert report.root.rule == "decode_behind_prefill"
    # the healthy shapes beside it: a crawling report the next one does not explain (a request that arrived late),
    # and a big prefill after a normal decoding report
    assert classify_lines([CRAWL, DECODING]).kind == HEALTHY
    assert classify_lines([DECODING, PREFILL]).kind == HEALTHY
    watch = PrefillStarvation()
    assert watch.observe(2, 0.0, 0.9) is None and watch.observe(2, 7408.7, 20.4) == (2, 0.9)
    assert watch.observe(2, 0.0, 0.9) is None and watch.observe(2, 7408.7, 20.4) is None  # once per log


def test_round14_rules_on_their_real_lines() -> None:
    cases = {
        "Error: 400 'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum context length "
        "is      64001 tokens and your request has 24235 input tokens (64000 > 64001 - 24235). None":
            ("context_length", "context_too_long"),
        "openai.APIStatusError: Error code: 405 - {'detail': 'Method Not Allowed'}":
            ("connection", "reported_status_method_not_allowed"),
        "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
        "https://www.modelscope.cn/api/v1/models/gpt2/revisions?EndTime=1706391065":
            ("model_not_found", "hf_repo_missing"),
        "ERROR 06-24 15:31:46 engine.py:389] Cache directory not found: /data/.cache/huggingface. Please use "
        "`cache_dir` argument or set `HF_HUB_CACHE` environment variable.": ("model_not_found", "hf_cache_missing"),
        "Failed to get device capability: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
        "multiprocessing, you must use the 'spawn' start method.": ("startup_failure", "cuda_reinit_in_fork"),
        "vllm 0.17.1 requires torch==2.10.0, but you have torch 2.8.0 which is incompatible.":
            ("version_mismatch", "installed_versions_conflict"),
    }
    for line, (kind, rule_id) in cases.items():
        report = classify_lines([line])
        assert (report.kind, report.root.rule if report.root else None) == (kind, rule_id), line
    # healthy shapes: vLLM's own access line for a GET on a POST route, pip's success line, a hub 404 for a file
    assert classify_lines(['INFO:     127.0.0.1:5000 - "GET /v1/chat/completions HTTP/1.1" 405 Method Not Allowed']
                          ).kind == HEALTHY
    assert classify_lines(["Successfully installed torch-2.8.0 vllm-0.17.1"]).kind == HEALTHY


def test_whole_logs_of_round14_read_by_phase_and_rule() -> None:
    # AsyncLLMEngine's background-loop callback runs only once the engine serves: a cut traceback after it is
    # the engine's, not the start-up's
    wrapped = next(DEV.glob("engine_error/round14b_gh8100_*.log"))
    assert classify_file(wrapped).kind == "engine_error"
    # a fatal signal after CUDA was re-initialised in a forked worker: the start-up's setting, not the engine
    forked = next(DEV.glob("startup_failure/round14a_trl6679_*.log"))
    report = classify_file(forked)
    assert report.kind == "startup_failure" and report.root is not None and report.root.rule == "cuda_reinit_in_fork"
