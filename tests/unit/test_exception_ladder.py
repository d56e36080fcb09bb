"""The exception step of the ladder on lines it was not written for: a printed class is looked up with its
bases (the hierarchy of the real libraries), an HTTP client's error by the status it carries, a builtin by
the structure of its message, and a fatal signal's phase by the stack printed with it.

Every line below is real: copied from the public thread named beside it or from a corpus file.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import httpx2
import jinja2
import openai
import pytest

from chainlit_app.diagnostics import HEALTHY, Kind, classify_file
from chainlit_app.diagnostics.exception_bases import BASES
from chainlit_app.diagnostics.exceptions import ancestry, lookup, lookup_exception
from chainlit_app.diagnostics.phases import Phase
from chainlit_app.diagnostics.whole_log import classify_lines

DEV = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev"


@pytest.mark.parametrize(
    ("printed", "message", "kind"),
    [
        # no entry names these classes: their bases do
        ("httpx.ReadError", "", Kind.CONNECTION),
        ("httpcore.ReadError", "", Kind.CONNECTION),  # keyed by module: httpx has a ReadError too
        ("aiohttp.client_exceptions.ClientConnectorDNSError", "", Kind.CONNECTION),
        ("ConnectionResetError", "[Errno 54] Connection reset by peer", Kind.CONNECTION),  # vLLM #2484
        ("jinja2.exceptions.TemplateAssertionError", "", Kind.CHAT_TEMPLATE),
        # the most specific class decides, not the table's order: a timeout is not a refused connection,
        # and the hub's errors are about the model's files although they are HTTP and connection errors too
        ("httpx.ReadTimeout", "", Kind.SLOW_OR_STALLED),
        ("huggingface_hub.errors.GatedRepoError", "", Kind.STARTUP_FAILURE),
        ("huggingface_hub.errors.OfflineModeIsEnabled", "", Kind.STARTUP_FAILURE),
    ],
)
def test_a_printed_class_is_named_through_its_bases(printed: str, message: str, kind: Kind) -> None:
    entry = lookup(ancestry(printed), message)
    assert entry is not None and entry.kind == kind, ancestry(printed)


def test_the_bases_table_holds_the_real_hierarchies() -> None:
    assert BASES["ReadError"].split()[:2] == ["NetworkError", "TransportError"]  # httpx
    assert "APIConnectionError" in BASES["APITimeoutError"].split()  # openai
    assert "TemplateSyntaxError" in BASES["TemplateAssertionError"].split()  # jinja2
    assert "ConnectionError" in BASES["ConnectionResetError"].split()  # builtins


def test_live_exceptions_use_the_same_table() -> None:
    url = "http://127.0.0.1:8000/v1/chat/completions"
    cases: list[tuple[BaseException, Kind]] = [
        (httpx.ReadError("", request=httpx.Request("POST", url)), Kind.CONNECTION),
        (openai.APITimeoutError(request=httpx2.Request("POST", url)), Kind.SLOW_OR_STALLED),  # openai's own httpx
        (jinja2.TemplateAssertionError("no loop", 1), Kind.CHAT_TEMPLATE),
    ]
    for exc, kind in cases:
        entry = lookup_exception(exc)
        assert entry is not None and entry.kind == kind, type(exc)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # vllm-project/aibrix #1357: a proxy's httpx raise_for_status
        ("httpx.HTTPStatusError: Client error '404 Not Found' for url 'http://192.168.0.130:8000/v1/chat/completions'",
         Kind.MODEL_NOT_FOUND),
        # PaddlePaddle/ERNIE #1031
        ("openai.RateLimitError: Error code: 429 - {'error': {'code': 'rpm_rate_limit_exceeded', 'message': "
         "'Rate limit reached for RPM', 'type': 'rate_limit_exceeded'}, 'id': 'as-wbx23eriqh'}", Kind.SLOW_OR_STALLED),
        # vLLM #1492: the old openai client's error for a 500
        ("openai.error.APIError: Invalid response object from API: 'Internal Server Error' "
         "(HTTP response code was 500)", Kind.ENGINE_ERROR),
    ],
)
def test_an_http_clients_error_is_named_by_its_status(line: str, kind: Kind) -> None:
    report = classify_lines([line])
    assert report.kind == kind.value
    assert report.root is not None and report.root.basis == "exception_type"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # a deployment note on vLLM 0.20.2 imported with torch 2.7.1 (the dtype is newer than the torch)
        ("AttributeError: module 'torch' has no attribute 'float4_e2m1fn_x2'", Kind.VERSION_MISMATCH),
        # FlashML-org/FreeToken #246 (the same message as vLLM #12498's title): a GPU too old for the kernel
        ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: "
         "65536. Reducing block sizes or `num_stages` may help.", Kind.VERSION_MISMATCH),
    ],
)
def test_message_structure_and_module_named_exceptions(line: str, kind: Kind) -> None:
    report = classify_lines([line])
    assert report.kind == kind.value
    assert report.root is not None and report.root.basis == "exception_type"


def test_an_exception_from_a_libraries_exc_module_is_never_healthy() -> None:
    # a public deployment note: torch.compile failing on a Tesla P100 under vLLM (two lines as posted)
    lines = [
        "[rank0]: torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "[rank0]: RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU "
        "compiler, which is used as the",
    ]
    assert classify_lines(lines[:1]).kind != HEALTHY
    assert classify_lines(lines).kind == Kind.VERSION_MISMATCH.value


def test_an_api_mismatch_in_a_call_means_versions_only_while_starting() -> None:
    # unnamed/serving/gh27973...: the same TypeError before and after the server said it serves
    line = ("(APIServer pid=1533093) TypeError: Ernie45ReasoningParser.__init__() got an unexpected keyword argument "
            "'chat_template_kwargs'")
    assert lookup(ancestry("TypeError"), line, Phase.BOOT) is not None
    assert classify_lines([line]).kind == Kind.VERSION_MISMATCH.value
    serving = ["INFO:     Application startup complete.", line]
    assert classify_lines(serving).kind == Kind.ENGINE_ERROR.value


def test_a_fatal_banner_between_native_frames_is_a_crash_while_serving() -> None:
    report = classify_file(DEV / "engine_error" / "gh44780_kv_offloading_native_long_context_segfault_swap_blocks.log")
    assert report.kind == Kind.ENGINE_ERROR.value
    assert report.root is not None and "Segfault encountered" in report.root.text


def test_the_stack_printed_with_a_fatal_signal_settles_its_phase() -> None:
    capture = classify_file(DEV / "startup_failure" / "gh3053_sigsegv_during_cuda_graph_capture.log")
    assert capture.kind == Kind.STARTUP_FAILURE.value  # capture_model runs only while starting
    assert capture.root is not None and "SIGSEGV" in capture.root.text
    # without a stack the excerpt says nothing of its phase: native code runs once the model is loaded
    bare = classify_lines(["*** SIGSEGV received at time=1709021359 on cpu 44 ***"])
    assert bare.kind == Kind.ENGINE_ERROR.value


def test_a_scheduler_dump_shows_the_engine_was_serving() -> None:
    report = classify_file(DEV / "engine_error" / "gh20558_dump_scheduler_output_for_model_execution.log")
    assert report.kind == Kind.ENGINE_ERROR.value


def test_one_report_of_requests_waiting_at_zero_tokens_is_a_stall() -> None:
    # dev/slow_or_stalled/gh338...: vLLM #338's one stats line, 3 pending, none running, 0 tokens/s
    line = ("INFO 07-06 09:05:55 scheduler.py:254] Throughput: 0.0 tokens/s, Running: 0 reqs, Swapped: 0 reqs, "
            "Pending: 3 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: 0.0%")
    assert classify_lines([line]).kind == Kind.SLOW_OR_STALLED.value
    # prompts still admitted: no stall yet (a constructed line in vLLM 0.32's stats format, as in test_classifier)
    served = ("(APIServer pid=1) INFO 11-30 14:20:10 [loggers.py:335] Engine 000: Avg prompt throughput: 3.1 "
              "tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 1 reqs, "
              "CPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%")
    assert classify_lines([served]).kind == HEALTHY


# Lines in vLLM 0.32's own words (its source under .venv-vllm), where no public thread quoted one yet.
_RESET_FAILED = ("RuntimeError: Failed to reset KV cache even when all the running requests are preempted and moved "
                 "to the waiting queue. This is likely due to the presence of running requests waiting for remote KV "
                 "transfer, which is not supported yet.")
_CONFIG_CONFLICT = ("ValueError: Fast prefill optimization for KV sharing is not compatible with EAGLE as EAGLE "
                    "requires correct logits for all tokens while fast prefill gives incorrect logits for prompt "
                    "tokens.")


def test_an_errors_own_words_place_an_excerpt_without_markers() -> None:
    assert classify_lines([_RESET_FAILED]).kind == Kind.ENGINE_ERROR.value  # running requests: serving
    assert classify_lines([_CONFIG_CONFLICT]).kind == Kind.STARTUP_FAILURE.value  # settings that do not fit


def test_a_class_raised_only_for_requests_places_an_excerpt_in_serving() -> None:
    line = "vllm.exceptions.VLLMValidationError: Mixing raw image and embedding inputs is not allowed"  # chat_utils
    assert classify_lines([line]).kind == Kind.ENGINE_ERROR.value


def test_a_raised_error_that_says_deprecated_is_no_harmless_warning() -> None:
    # config/model.py: the %s is vLLM's own placeholder, printed as is by a logger that formats nothing
    line = ("ValueError: The quantization method %s is deprecated and will be removed in future versions of vLLM. "
            "To bypass, set `--allow-deprecated-quantization`.")
    assert classify_lines([line]).kind == Kind.STARTUP_FAILURE.value
    # a healthy dev log's warning stays harmless (recorded with this machine's vLLM 0.32)
    warning = ("/work/main/.venv-vllm/lib/python3.11/site-packages/vllm/entrypoints/openai/api_server.py:24: "
               "DeprecationWarning: `vllm.entrypoints.openai.api_server` is deprecated and will likely beunsupported "
               "in a future version. Use the corresponding function from")
    assert classify_lines([warning]).kind == HEALTHY


def test_a_stream_the_excerpt_cut_is_judged_by_its_text_so_far() -> None:
    import json

    from chainlit_app.diagnostics.answers import StreamAssembler

    # the answer recorded on this machine (dev/degenerate_output/recorded_cpu_smollm2_body_weekday_loop_length.log),
    # sent as stream chunks whose last one never came
    body = json.loads((DEV / "degenerate_output" / "recorded_cpu_smollm2_body_weekday_loop_length.log").read_text())
    text = body["choices"][0]["text"]
    streams = StreamAssembler()
    for start in range(0, len(text), 16):
        chunk = {"id": "cmpl-1", "choices": [{"index": 0, "delta": {"content": text[start:start + 16]},
                                              "finish_reason": None}]}
        assert streams.add(chunk, line=start) is None
    flushed = streams.flush()
    assert [verdict.kind for verdict, _line in flushed] == [Kind.DEGENERATE_OUTPUT]
    # an unfinished stream with nothing wrong in it yet says nothing
    streams.add({"id": "cmpl-2", "choices": [{"index": 0, "delta": {"content": "Paris is the capital"}}]})
    assert streams.flush() == []


def test_a_status_a_client_saw_yields_to_the_servers_own_cause() -> None:
    # two real lines put one after the other as a client's and a server's output would be
    client = ("openai.error.APIError: Invalid response object from API: 'Internal Server Error' "
              "(HTTP response code was 500)")  # vLLM #1492
    server = ("(EngineCore pid=12244) ERROR 07-15 21:01:01 [core.py:1240] RuntimeError: Worker failed with error "
              "'CUDA error: an illegal memory access was encountered")  # dev/engine_error
    alone = classify_lines([client])
    assert alone.kind == Kind.ENGINE_ERROR.value and alone.root is not None and alone.root.role == "weak"
    report = classify_lines([client, server])
    assert report.root is not None and report.root.line == 2  # the server's line is the cause, not the 500
    # a client's traceback cut inside its HTTP transport (vLLM #2484) is a lost connection, not a start-up error
    assert classify_file(DEV / "connection" / "gh2484_httpx_readerror_connection_reset_by_peer.log").kind == \
        Kind.CONNECTION.value


def test_a_loggers_message_keeps_its_name_over_the_stack_it_prints() -> None:
    # Xinference's `logger.exception("cannot connect to supervisor")`: the message, then its traceback (cut)
    report = classify_file(DEV / "connection" / "xinference2970_worker_cannot_connect_supervisor.log")
    assert report.kind == Kind.CONNECTION.value
    assert report.root is not None and "cannot connect to supervisor" in report.root.text


def test_frames_a_paste_wrapped_or_curled_still_show_where_the_failure_ran() -> None:
    # arctic-inference #151: four workers' tracebacks interleaved, a frame path wrapped mid-word by the paste
    wrapped = classify_file(DEV / "engine_error" /
                            "arcticinference151_interleaved_workers_broadcast_valueerror_suffix_spec.log")
    assert wrapped.kind == Kind.ENGINE_ERROR.value
    # vLLM #739: `“api_server”,line 56, in generate` (curled quotes), then the tokenizer's AttributeError: the
    # class the message names owns the failure, and the frame says it ran for a request
    curled = classify_file(DEV / "decode_error" / "gh739_qwen7b_api_server_tokenizer_byte_decoder.log")
    assert curled.kind == Kind.DECODE_ERROR.value
    assert curled.root is not None and curled.root.basis == "raised_in"


def test_more_line_formats_keep_level_and_process() -> None:
    from chainlit_app.diagnostics.lineformat import parse_line, strip_ansi, unwrap_docker_json

    # dev/slow_or_stalled/gh5484...: Ray's colour code pasted without its ESC
    ray = strip_ansi("[36m(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught "
                     "collective operation timeout")
    assert parse_line(ray).process == "RayWorkerWrapper pid=4009"
    # a Go service's structured log line (slog's JSON handler, as printed in a public book chapter)
    slog = ('{"time":"2024-03-18T11:29:23.00000000+00:00","level":"ERROR","msg":"listen tcp :4000: bind: address '
            'already in use"}')
    assert parse_line(unwrap_docker_json(slog)).level == "ERROR"
    assert classify_lines([slog]).kind == Kind.PORT_IN_USE.value
    # a response body is no log line: it stays a body
    body = '{"object":"error","message":"The model `gpt-4` does not exist.","type":"NotFoundError","code":404}'
    assert unwrap_docker_json(body) == body
    # one dev line (dev/engine_error) behind the prefixes other collectors add (put there here, not posted so)
    message = "RuntimeError: Worker failed with error 'CUDA error: an illegal memory access was encountered"
    line = f"(EngineCore pid=12244) ERROR 07-15 21:01:01 [core.py:1240] {message}"
    for prefix in ("2025-04-07T09:11:20.833720466Z stdout F ", "> ", "[pod/vllm-0/vllm] "):
        parsed = parse_line(prefix + line)
        assert (parsed.level, parsed.process, parsed.message) == ("ERROR", "EngineCore pid=12244", message)
    assert parse_line('ts=2025-04-07T09:11:20Z level=error msg="engine failed"').level == "ERROR"


def test_a_ray_worker_that_died_is_never_healthy() -> None:
    # a public RL training log (verl on Ray), as printed by the raylet
    line = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To "
            "troubleshoot the problem, check the logs for the dead worker. RayTask ID: "
            "ffffffffffffffffc90bbe1574830f10a33b147c01000000 Worker ID: f7ea96b1e8e804f578390a97c97d6bf")
    report = classify_lines([line])
    assert report.kind == Kind.ENGINE_ERROR.value  # no phase shown: a crash of native code while serving
    assert report.root is not None and report.root.basis == "phase"


def test_no_implementation_on_this_hardware_is_a_build_that_does_not_fit() -> None:
    # vLLM 0.32's own words (v1/attention/backends/cpu_attn.py, a complete literal)
    line = "NotImplementedError: FP8 KV cache on CPU requires x86 with AVX-512 or AMX."
    assert classify_lines([line]).kind == Kind.VERSION_MISMATCH.value
    # while serving the same class says nothing of the build: the phase decides
    assert classify_lines(["INFO:     Application startup complete.", line]).kind == Kind.ENGINE_ERROR.value
