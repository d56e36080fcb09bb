"""The log classifier's rule behaviours a user relies on: the rule table is complete and each rule matches its
own examples, the root cause is the earliest real cause, wrappers never win, harmless warnings stay quiet,
tracebacks count by their exception line, and access/stats lines read as the request-level faults they show.
Streaming, files, JSON, redaction and speed are in test_classifier_io.py; the labelled corpus in test_corpus.py."""

from __future__ import annotations

import pytest

from chainlit_app.diagnostics import HEALTHY, KINDS, RULES, Kind, Rule, classify_lines
from chainlit_app.diagnostics.lineformat import parse_line
from chainlit_app.diagnostics.phases import Phase
from chainlit_app.diagnostics.prefilter import interesting
from chainlit_app.diagnostics.rules import Context, literal_needles, most_specific
from tests.classifier_lines import OOM, WRAPPER


def match_rule(message: str, phase: Phase = Phase.BOOT) -> Rule | None:
    """The rule the classifier would pick for an ordinary line in this phase."""
    return most_specific(RULES, message, Context(phase))


# --- rule table hygiene ------------------------------------------------------------------------


def test_every_kind_has_title_fix_and_rules() -> None:
    assert set(KINDS) == set(Kind)
    for info in KINDS.values():
        assert info.title and info.explanation and len(info.fix) >= 2
        assert info.severity in ("critical", "error", "warning")
    # a looping answer is named by the answer judge (answers.py), a failed history write by the data layer
    # (history_writes.py), every other kind by at least one rule
    assert {r.kind for r in RULES} | {Kind.DEGENERATE_OUTPUT, Kind.HISTORY_WRITE_FAILED, Kind.DEGRADED} == set(Kind)


def test_fix_texts_avoid_the_corrected_claims() -> None:
    text = " ".join(" ".join((i.explanation, *i.fix)) for i in KINDS.values()).lower()
    for wrong in ("--enable-moe", "moe-expert-parallel", "50051", "grpc", "paddle2hf", "vocab 250002"):
        assert wrong not in text


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_examples_match_their_rule_and_pass_the_prefilter(rule: Rule) -> None:
    assert rule.needles, "every alternative of a pattern needs a literal for the pre-filter"
    assert rule.examples, "each rule documents at least one real-looking line"
    context = Context(  # the conditions the rule states, met as a real log would meet them
        min(rule.phases),
        exception_type=rule.exception_types[0] if rule.exception_types else "",
        raised_in=f"vllm/{rule.raised_in[0]}" if rule.raised_in else "",
        level=rule.levels[0] if rule.levels else "",
    )
    for example in rule.examples:
        message = parse_line(example).message
        assert rule.pattern.search(message), example
        assert rule.check is None or rule.check(message), example  # what the pattern cannot say holds too
        assert interesting(example.lower()), example
        matched = most_specific(RULES, message, context)
        assert matched is not None and matched.kind == rule.kind, (example, matched and matched.id)


def test_literal_needles_are_taken_from_every_alternative() -> None:
    assert literal_needles(r"No available memory|# GPU blocks: 0\b") == (
        "no available memory",
        "# gpu blocks: 0",
    )
    assert literal_needles(r"(?:a|b)x") == ()  # no literal outside the group: not pre-filterable
    assert literal_needles(r"foo.{0,200}barbaz|quux?z") == ("barbaz", "quu")  # the optional x ends the run


# --- root cause selection ----------------------------------------------------------------------


def test_wrapper_alone_only_gives_its_fallback_kind() -> None:
    report = classify_lines([WRAPPER])
    assert report.kind == "startup_failure"
    assert report.findings[0].role == "wrapper"


def test_wrapper_never_decides_even_when_printed_before_the_cause() -> None:
    # multi-process logs interleave: the API server's wrapper can land above the engine's error
    report = classify_lines([WRAPPER, "INFO 11-30 14:00:02 [core.py:1] shutting engine", OOM])
    assert report.kind == "out_of_memory"
    assert report.findings[0].line == 3
    assert [f.kind for f in report.findings[1:]] == ["startup_failure"]
    assert not report.findings[1].root


def test_root_cause_before_wrapper_and_consequences_listed_after() -> None:
    lines = [
        "INFO 11-30 14:00:00 [api_server.py:1] vLLM API server version 0.32.0",
        OOM,
        WRAPPER,
        "(APIServer pid=42) RuntimeError: Engine process failed to start. See stack trace for the root "
        "cause.",
    ]
    report = classify_lines(lines)
    assert report.kind == "out_of_memory"
    assert [(f.line, f.root) for f in report.findings] == [(2, True), (3, False), (4, False)]


def test_earliest_decisive_cause_wins_over_later_ones() -> None:
    lines = [
        "ERROR 10-16 05:20:48 registry.py:264] ImportError: /x/flash_attn_2_cuda.so: undefined symbol: "
        "_ZN3c10",
        # a custom architecture: one a current vLLM implements would read version_mismatch too (rules_releases)
        "ValueError: Model architectures ['MyCustomForCausalLM'] are not supported for now.",
    ]
    assert classify_lines(lines).kind == "version_mismatch"
    assert classify_lines(lines[::-1]).kind == "startup_failure"


def test_weak_signal_decides_only_without_a_decisive_one() -> None:
    weak = "WARNING 10-10 10:22:05 _custom_ops.py:18] Failed to import from vllm._C with ImportError('x')"
    port = "OSError: [Errno 98] Address already in use"
    assert classify_lines([weak]).kind == "version_mismatch"
    assert classify_lines([weak, port]).kind == "port_in_use"


# --- harmless lines and lifecycle --------------------------------------------------------------

HARMLESS_LINES = [
    "(APIServer pid=4100) WARNING 11-30 14:00:01 [system_utils.py:255] Found ulimit of 20000 and failed to "
    "automatically increase with error current limit exceeds maximum limit. This can cause fd limit errors "
    "like "
    "`OSError: [Errno 24] Too many open files`. Consider increasing with ulimit -n",
    "(Worker pid=4210) WARNING 11-30 14:00:17 [cpu_worker.py:114] libtcmalloc is not found in LD_PRELOAD. "
    "For "
    "best performance, please follow the section `set LD_PRELOAD`",
    "(Worker pid=4210) WARNING 11-30 14:00:17 [weight_utils.py:812] Attempted to load weight "
    "model.embed_tokens.weight with dtype torch.float32 into parameter with dtype torch.bfloat16",
    "/x/vllm/entrypoints/openai/api_server.py:24: DeprecationWarning: `vllm.entrypoints.openai.api_server` "
    "is "
    "deprecated and will likely beunsupported in a future version.",
    "WARNING 02-20 18:36:00 config.py:1148] Possibly too large swap space. 4.00 GiB out of the 7.75 GiB "
    "total "
    "CPU memory is allocated for the swap space.",
    "WARNING 01-21 01:28:57 cache_engine.py:96] Using 'pin_memory=False' as WSL is detected. This may slow "
    "down the performance.",
    "(EngineCore pid=4150) INFO 11-30 14:01:18 [shm_broadcast.py:466] No available shared memory broadcast "
    "block found in 60 seconds. This typically happens when some processes are hanging or doing some "
    "time-consuming work (e.g. compilation).",
]


def test_harmless_warnings_raise_nothing() -> None:
    assert classify_lines(HARMLESS_LINES).findings == []
    # the warm-up shared-memory wait stays quiet however often it repeats before start-up completes
    loading = "(EngineCore pid=4150) INFO 11-30 14:00:05 [cpu_model_runner.py:68] Starting to load model /m..."
    assert classify_lines([loading, *[HARMLESS_LINES[-1]] * 6]).findings == []


def test_a_prompt_quoted_in_a_request_line_is_not_evidence() -> None:
    """Older vLLMs log the user's prompt at INFO; a question about an error must not raise that error."""
    lines = [
        "INFO 11-30 14:00:01 [logger.py:39] Received request chatcmpl-1: prompt: '<|user|>Why do I get "
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB?', params: SamplingParams(n=1)",
        "INFO 11-30 14:00:01 [engine.py:310] Added request chatcmpl-1.",
    ]
    report = classify_lines(lines)
    assert report.findings == []


def test_shared_memory_wait_after_startup_is_a_stall() -> None:
    # the harmless reasons the message lists (compilation, quantization) belong to start-up: while serving,
    # the first wait is the stall, reported once
    lines = ["INFO:     Application startup complete.", HARMLESS_LINES[-1], HARMLESS_LINES[-1]]
    report = classify_lines(lines)
    assert report.kind == "slow_or_stalled"
    assert [f.line for f in report.findings] == [2]
    # an excerpt that shows no phase at all, only the wait: posted because the engine hung
    assert classify_lines([HARMLESS_LINES[-1]]).kind == "slow_or_stalled"


def test_errors_printed_during_an_intentional_stop_are_ignored() -> None:
    lines = [
        "INFO:     Application startup complete.",
        "(APIServer pid=1) INFO 11-30 14:05:00 [launcher.py:254] [shutdown] API server: shutdown triggered",
        "(APIServer pid=1) ERROR 11-30 14:05:00 [async_llm.py:906] AsyncLLM output_handler failed.",
        "(APIServer pid=1) ERROR 11-30 14:05:00 [async_llm.py:906] "
        "vllm.v1.engine.exceptions.EngineDeadError: "
        "EngineCore encountered an issue. See stack trace (above) for the root cause.",
    ]
    assert classify_lines(lines).kind == HEALTHY
    # the same wrapper without a stop: reported (as a failure while serving)
    assert classify_lines([lines[0], lines[2]]).kind == "engine_error"


# --- tracebacks --------------------------------------------------------------------------------


def test_traceback_code_lines_do_not_count_only_the_exception_does() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/x/vllm/worker/worker.py", line 10, in determine_num_available_blocks',
        '    if "CUDA out of memory" in str(err):',
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "ValueError: Model architectures ['FooBarForCausalLM'] are not supported for now.",
    ]
    report = classify_lines(lines)
    assert report.kind == "startup_failure"
    assert [f.line for f in report.findings] == [5]


def test_prefixed_v1_traceback_reports_the_exception_line() -> None:
    prefix = "(EngineCore_DP0 pid=123) ERROR 11-30 14:00:01 [core.py:700] "
    lines = [
        prefix + "EngineCore failed to start.",
        prefix + "Traceback (most recent call last):",
        prefix + '  File "/x/vllm/v1/engine/core.py", line 506, in run_engine_core',
        prefix + '    raise ValueError("No available memory for the cache blocks. "',
        prefix + "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens "
        "that can be stored in KV cache (7344).",
    ]
    report = classify_lines(lines)
    assert report.kind == "out_of_memory"
    assert report.findings[0].line == 5 and report.findings[0].root
    assert report.findings[1].kind == "startup_failure" and report.findings[1].line == 1


def test_chained_exception_keeps_the_first_cause() -> None:
    lines = [
        "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name': '/no/such/dir'.",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/x/transformers/utils/hub.py", line 595, in cached_files',
        '    raise OSError(f"{e}") from e',
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file",
    ]
    report = classify_lines(lines)
    # the path that is not there (model_not_found), not the hub's "couldn't connect" raised from it
    assert report.kind == "model_not_found" and report.findings[0].line == 1


# --- request-level heuristics and stalls -------------------------------------------------------


def _access(status: str, path: str = "/v1/chat/completions") -> str:
    return f'INFO:     127.0.0.1:5555 - "POST {path} HTTP/1.1" {status}'


def test_bare_400_means_chat_template_until_a_chat_succeeded() -> None:
    assert classify_lines([_access("400 Bad Request")]).kind == "chat_template"
    assert classify_lines([_access("200 OK"), _access("400 Bad Request")]).kind == "context_length"
    assert classify_lines([_access("400 Bad Request", "/v1/completions")]).kind == "context_length"


def test_access_status_codes() -> None:
    assert classify_lines([_access("401 Unauthorized")]).kind == "auth"
    assert classify_lines([_access("404 Not Found")]).kind == "model_not_found"
    assert classify_lines([_access("404 Not Found", "/v1//models")]).kind == "connection"
    assert classify_lines([_access("200 OK"), _access("200 OK")]).kind == HEALTHY


def _stats(running: int, waiting: int, prompt: float, gen: float, kv: float = 1.0) -> str:
    return (
        f"(APIServer pid=1) INFO 11-30 14:20:10 [loggers.py:335] Engine 000: Avg prompt throughput: {prompt} "
        f"tokens/s, Avg generation throughput: {gen} tokens/s, Running: {running} reqs, Waiting: {waiting} "
        f"reqs, CPU KV cache usage: {kv}%, Prefix cache hit rate: 0.0%"
    )


def test_stall_needs_a_streak_of_stats_lines() -> None:
    stuck = _stats(1, 0, 0.0, 0.0)
    assert classify_lines([stuck, stuck]).kind == HEALTHY
    report = classify_lines([stuck, stuck, stuck, stuck])
    assert report.kind == "slow_or_stalled" and [f.line for f in report.findings] == [3]
    assert classify_lines([stuck, stuck, _stats(1, 0, 0.0, 40.0), stuck]).kind == HEALTHY


def test_requests_waiting_while_none_runs() -> None:
    idle = _stats(0, 5, 0.0, 0.0)
    assert classify_lines([idle, idle]).kind == "slow_or_stalled"
    assert classify_lines([_stats(0, 0, 0.0, 0.0)] * 5).kind == HEALTHY
    assert classify_lines([_stats(4, 0, 20.0, 230.0)] * 5).kind == HEALTHY


def test_full_kv_cache_is_reported_once() -> None:
    full = _stats(8, 0, 10.0, 100.0, kv=99.5)
    report = classify_lines([full, full, full, full])
    assert report.kind == "slow_or_stalled"
    assert len(report.findings) == 1

