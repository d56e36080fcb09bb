"""The general mechanisms that named round 13's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the healthy shape beside it, so that a mechanism that fires
on everything fails here."""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answers import is_garbled, judge_answer
from chainlit_app.diagnostics.scripts import foreign_letters_spattered

# kimchi #794: LiteLLM's hosted_vllm provider relays vLLM's refusal; the paste breaks it inside the sentence
LITELLM_REFUSAL = [
    'Error: {"detail":"ContextWindowExceededError: Hosted_vllmException - {\\"object\\":\\"error\\",\\"message\\":'
    '\\"The input (1492905 tokens) is longer than the',
    ' model\'s context length (1048576 tokens).\\",\\"type\\":\\"BadRequestError\\",\\"param\\":null,\\"code\\":400}"}',
]
# vLLM #8805: guided JSON over Chinese text with outlines 0.0.46, the argument values escaped twice
DOUBLE_ESCAPED = ('[{"trigger": "IPO", "event_type": "\\u516c\\u53f8\\u4e0a\\u5e02", "arguments": [{"role": '
                  '"\\u4e0a\\u5e02\\u516c\\u53f8", "argument": '
                  '"\\\\\\\\u7406\\\\\\\\u601f\\\\\\\\u6c7d\\\\\\\\u8f66"}]}]')
# vLLM #546 (a commenter on 0.6.3): stats, then the preemption warning in vLLM's full words
PREEMPTED = [
    "INFO 10-28 11:16:39 metrics.py:349] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 7154.5 "
    "tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 98 reqs, GPU KV cache usage: 86.1%, CPU KV cache "
    "usage: 0.0%.",
    "WARNING 10-28 11:16:41 scheduler.py:1483] Sequence group chat-7e630abf1a8b4c8a88775b1e98a54cf2 is preempted by "
    "PreemptionMode.SWAP mode because there is not enough KV cache space. This can affect the end-to-end performance. "
    "Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_pr",
]
# spark-vllm-docker #217: Gemma 4 on vLLM 0.20.1rc, German with two foreign letters slipped in, then a loop
GERMAN_LOOP = [
    "*   **Fehl شer شer / Schдum:** Es wurde ein hoher Anteil an Schдer Verletungen bei GF-K-Stäben festgestellt.",
    "*   **Status:** Die Stäbe wurden bei der Eingang شontrolle als „nicht zu verwenden“ deklariert.",
    "*   **Plüss:** Es wurde eine fehler Schд شer " + "Scher " * 80,
]
# vLLM #1385: StarCoder completion noise after an upgrade, tokens of five scripts and U+FFFD
TOKEN_SOUP = ("alaxymrb FloatingVPNcdn问题AppointmentPods UARTapterMerArtist ALLOW запис\ufffdisnanQE}$pinkcountry상 "
              "objective AVArrayEqualsBadummyanaccs----+ooled.,Exploreroto sale occurs performsAZ Overflow COPYING "
              "rowIndexieurs这样TRAIN upperELL TablesMonth removsolutionsFixed[:iy Manager InvoiceSTDNextTokenCSRFCore "
              "magma StopflinkDISTentyHISTORYRESULTLargeDebugger PrefixIctlmutex Fields magnasectorrost Trimfreqاف")


def test_vllms_input_refusal_relayed_by_a_client_is_context_length() -> None:
    assert classify_lines(LITELLM_REFUSAL).kind == "context_length"
    assert classify_lines(LITELLM_REFUSAL[:1]).findings[0].rule == "input_longer_than_context"
    # transformers' tokenizer warning says a prompt is longer than a tokenizer's default: vLLM goes on
    assert classify_lines(["Token indices sequence length is longer than the specified maximum sequence length for "
                           "this model (5000 > 4096). Running this sequence through the model will result in "
                           "indexing errors"]).kind == HEALTHY


def test_a_stack_asking_for_a_model_vllm_does_not_serve_is_model_not_found() -> None:
    listing = ('{"object":"list","data":[{"id":"Llama3.2-1B-Instruct","object":"model","created":1731083393,'
               '"owned_by":"vllm","root":"meta-llama/Llama-3.2-1B-Instruct"}]}')
    ok = 'INFO:     192.168.1.8:39968 - "GET /v1/models HTTP/1.1" 200 OK'
    assert classify_lines([listing, ok]).kind == HEALTHY
    report = classify_lines([listing, "Unknown model served by vllm: Llama3.2-1B-Instruct", ok])
    assert report.kind == "model_not_found" and report.findings[0].rule == "unknown_model_served"


def test_no_vllm_where_it_runs_is_a_startup_failure() -> None:
    line = ("2023-12-21T15:25:16.536115444Z /usr/bin/python3: Error while finding module specification for "
            "'vllm.entrypoints.openai.api_server' (ModuleNotFoundError: No module named 'vllm')")
    report = classify_lines([line])
    assert report.kind == "startup_failure" and report.findings[0].rule == "vllm_not_installed"
    # a plugin or vLLM's own submodule is another rule's, not this one
    for other in ("ModuleNotFoundError: No module named 'vllm_ascend'",
                  "ModuleNotFoundError: No module named 'vllm.benchmarks.serve'"):
        assert all(f.rule != "vllm_not_installed" for f in classify_lines([other]).findings), other


def test_an_unresolvable_install_is_a_version_mismatch() -> None:
    uv = ["  × No solution found when resolving dependencies:",
          "  ╰─▶ Because vllm==0.6.5 depends on torch{platform_machine != 'aarch64'}==2.5.1 and",
          "      vllm-flash-attn>=2.6.1 depends on torch==2.4.0, we can conclude that vllm==0.6.5 and"]
    assert classify_lines(uv).kind == "version_mismatch"
    pip = ["ERROR: Cannot install vllm==0.6.5 and vllm-flash-attn==2.6.1 because these package versions have "
           "conflicting dependencies.",
           "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/"]
    assert classify_lines(pip).kind == "version_mismatch"
    assert classify_lines(["Resolved 147 packages in 2.31s", "Installed 147 packages in 812ms"]).kind == HEALTHY


def test_values_escaped_twice_are_a_decode_error_and_escapes_once_are_not() -> None:
    report = classify_lines([DOUBLE_ESCAPED])
    assert report.kind == "decode_error" and report.findings[0].rule == "escaped_unicode_in_answer"
    # JSON's own escapes (one backslash) are how a body carries Chinese: readable once parsed
    once = '{"choices":[{"message":{"content":"\\u516c\\u53f8\\u4e0a\\u5e02"},"finish_reason":"stop"}]}'
    assert classify_lines([once]).kind == HEALTHY
    # one escaped code in a line (a path, a regex) is no answer
    assert classify_lines(['pattern = "\\\\u00e9"']).kind == HEALTHY


def test_the_preemption_warning_in_full_is_slow_not_a_memory_tuning_note() -> None:
    report = classify_lines(PREEMPTED)
    assert report.kind == "slow_or_stalled" and report.findings[0].rule == "preempted_for_kv_cache"
    tuning = ("WARNING 10-28 11:15:00 config.py:1245] Possibly too large swap space. 16.00 GiB out of the 31.00 GiB "
              "total CPU memory is allocated for the swap space.")
    assert classify_lines([PREEMPTED[0], tuning]).kind == HEALTHY


def test_a_loop_with_a_few_foreign_letters_is_degenerate() -> None:
    assert foreign_letters_spattered(" ".join(GERMAN_LOOP))
    report = classify_lines(GERMAN_LOOP)
    assert report.kind == "degenerate_output", report
    # the same German prose without the loop names nothing: one language, a few slipped letters
    assert classify_lines(GERMAN_LOOP[:2]).kind == HEALTHY
    # tokens of unrelated scripts stay a decoding fault, with or without U+FFFD
    assert not foreign_letters_spattered(TOKEN_SOUP)
    assert is_garbled(TOKEN_SOUP) and is_garbled(TOKEN_SOUP.replace("\ufffd", ""))
    verdict = judge_answer(TOKEN_SOUP.replace("\ufffd", ""), "length", 256)
    assert verdict is not None and verdict.kind == "decode_error"
    # a Chinese answer naming English terms is two scripts, neither slipped nor garbled
    assert not is_garbled("部署 vLLM 服务时，请把 --gpu-memory-utilization 设为 0.9，并检查 CUDA 版本。")


def test_a_template_iterating_a_string_is_the_chat_templates() -> None:
    report = classify_lines(["TypeError: Can only get item pairs from a mapping."])
    assert report.kind == "chat_template" and report.findings[0].rule == "template_items_of_non_mapping"


def test_dockers_allocated_port_is_port_in_use() -> None:
    line = ("Error response from daemon: failed to set up container networking: driver failed programming external "
            "connectivity on endpoint tt_studio_backend_api_dev (abf537d940c8): Bind for 0.0.0.0:8000 failed: port is "
            "already allocated")
    report = classify_lines([line])
    assert report.kind == "port_in_use" and report.findings[0].rule == "container_port_allocated"
    # the daemon's other refusals stay a container that did not start
    other = "docker: Error response from daemon: failed to create task for container: failed to create shim task"
    assert classify_lines([other]).kind == "startup_failure"
