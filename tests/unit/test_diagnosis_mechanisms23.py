"""The general mechanisms of the round-23 pass (issue 11: the misses of holdout round 23, moved to dev), each on
the real lines it was written from and each beside the healthy shape that must stay quiet.

A CLI's unprefixed `Error:` line and systemd's words for a failed unit read as error lines, Go's listener and
resolver in any language, a registry's 400 for a name, a kernel fault inside a warning, sampling and grammar
frames as serving, the hub's words for a refused token, llama.cpp's template parser, reasoning with no answer in
a client's and a server's words, one letter repeated as the whole answer, nginx's error log and its access phase,
and a lower-case exception class raised in the server's own start-up.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.lineformat import parse_line
from chainlit_app.diagnostics.phases import stack_shows_serving
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID


def _rules(lines: list[str]) -> list[str]:
    return [finding.rule for finding in classify_lines(lines).findings]


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_clis_error_line_and_a_failed_unit_are_error_lines() -> None:
    for lines in (["Error: mkdir /media/brianhuster/E: permission denied"],  # Ollama #8572
                  ["Error: mkdir /home/user: permission denied",  # Ollama #9945
                   ": Main process exited, code=exited, status=1/FAILURE",
                   ": ollama.service: Failed with result 'exit-code'."],
                  ["Feb 09 18:55:00 REDACTED ollama[11630]: Error: could not create directory mkdir /var/lib/ollama: "
                   "permission denied",  # Ollama #9148
                   "Feb 09 18:55:00 REDACTED systemd[1]: ollama.service: Main process exited, code=exited, "
                   "status=1/FAILURE"]):
        assert classify_lines(lines).kind == "startup_failure", lines
    for line in ("Feb 09 18:55:00 host systemd[1]: ollama.service: Failed with result 'exit-code'.",
                 "ollama.service: Main process exited, code=killed, status=9/KILL"):
        assert parse_line(line).level == "ERROR", line
    # a clean or requested stop, lower-case and indented words, and prose about errors stay quiet
    quiet = ["Feb 09 18:55:00 host systemd[1]: ollama.service: Main process exited, code=exited, status=0/SUCCESS",
             "Feb 09 18:55:00 host systemd[1]: ollama.service: Main process exited, code=killed, status=15/TERM",
             "Feb 09 18:55:00 host systemd[1]: ollama.service: Deactivated successfully.",
             "Error handling: retries are described below", "Errors: 0", "error: the answer is 42"]
    assert classify_lines(quiet).kind == HEALTHY
    assert parse_line("    Error: quoted inside a block").level == ""


def test_gos_listener_and_resolver_in_any_language() -> None:
    turkish = ("Error: listen tcp 127.0.0.1:11434: bind: Normal olarak her yuva adresi (iletişim kuralı/ağ adresi/"
               "bağlantı noktası) için yalnızca bir kullanıma izin veriliyor.")  # Ollama #8261
    assert _root([turkish]) == ("port_in_use", "port_in_use")
    assert _root(["Error: listen tcp 0.0.0.0:11434: bind: address already in use"])[0] == "port_in_use"
    # bind's other reasons (a privileged port, an address this host does not have) are not a taken port
    pattern = RULES_BY_ID["port_in_use"].pattern
    assert not pattern.search("Error: listen tcp 0.0.0.0:80: bind: permission denied")
    assert not pattern.search("Error: listen tcp 10.0.0.9:11434: bind: cannot assign requested address")
    lookup = ('genai-stack-pull-model-1  | Error: Head "http://host.docker.internal:11434/": dial tcp: lookup '
              "host.docker.internal on 127.0.0.11:53: no such host")  # genai-stack #76
    assert _root([lookup]) == ("connection", "connection_refused")
    # a server listening, and a lookup that found its model, stay quiet
    assert classify_lines(['time=2025-01-25T11:00:00 level=INFO source=routes.go:1238 msg="Listening on '
                           '127.0.0.1:11434 (version 0.5.7)"',
                           "looking up host.docker.internal: found 192.168.65.254"]).kind == HEALTHY


def test_a_registry_refusing_the_name_is_model_not_found() -> None:
    lines = ["transferring model data", "pulling model", "pulling manifest",  # Ollama #3764
             "Error: pull model manifest: 400", "transferring model data", "creating model layer ⠴"]
    assert _root(lines) == ("model_not_found", "model_store_missing")
    assert classify_lines(["transferring model data", "creating model layer", "writing manifest",
                           "success"]).kind == HEALTHY


def test_a_kernel_fault_inside_a_warning_is_not_a_tuning_note() -> None:
    line = ("(VllmWorkerProcess pid=14578) WARNING 10-17 12:17:31 model_runner_base.py:143] Failed to pickle "
            "inputs of failed execution: CUDA error: an illegal memory access was encountered")  # vLLM #9532
    assert classify_lines([line]).kind == "engine_error"
    # a memory warning that advises stays harmless
    assert classify_lines(["WARNING 10-17 12:17:31 worker.py:10] Pin memory is not available on this "
                           "platform."]).kind == HEALTHY


def test_sampling_and_grammar_frames_place_a_traceback_in_serving() -> None:
    assert stack_shows_serving(["forward", "sample", "update_regex_vocab_mask"])  # SGLang #1556
    assert stack_shows_serving(["event_loop", "move_ready_grammar_requests"])  # SGLang #6229
    assert not stack_shows_serving(["load_model", "sample"])  # start-up frames still outweigh them
    assert not stack_shows_serving(["sampled_tokens_prepare", "init_grammar_backend"])
    lines = ['  File "/root/sglang/python/sglang/srt/model_executor/model_runner.py", line 520, in sample',
             "    sampling_info.update_regex_vocab_mask()",
             '  File "/root/sglang/python/sglang/srt/sampling/sampling_batch_info.py", line 123, in '
             "update_regex_vocab_mask",
             "    self.vocab_mask[i].fill_(1)",
             "IndexError: index 2 is out of bounds for dimension 0 with size 2"]
    assert classify_lines(lines).kind == "engine_error"
    assert classify_lines(["[TP1] Scheduler hit an exception:", "IndexError: list index out of range",
                           'File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1761, in '
                           "move_ready_grammar_requests"]).kind == "engine_error"


def test_the_hubs_refused_token_explains_its_repository_not_found() -> None:
    lines = ["[ERROR|hub.py:686] 2025-08-11 19:50:39,350 >> 401 Client Error. (Request ID: Root=1-689a498f)",
             "Repository Not Found for url: https://huggingface.co/facebook/nllb-200-distilled-1.3B/resolve/main/"
             "model.safetensors.",
             "Please make sure you specified the correct `repo_id` and `repo_type`.",
             "Invalid credentials in Authorization header"]  # silnlp #791
    assert _root(lines) == ("auth", "hf_token_refused")
    # the same answer without the words for the token is a repository that is not there
    assert classify_lines(lines[:3]).kind == "model_not_found"


def test_llama_cpps_template_parser_is_the_chat_template() -> None:
    lines = ["Unable to generate parser for this template. Automatic parser generation failed:",  # club-3090 #1250
             "While executing CallExpression at line 163, column 57"]
    assert _root(lines) == ("chat_template", "template_engine_failed")
    assert classify_lines(["srv  init: chat template, thinking = 1, tool parser: generic"]).kind == HEALTHY


def test_reasoning_with_no_answer_in_a_clients_and_a_servers_words() -> None:
    for line in ("Analysis failed: Model produced 14,735 characters of reasoning / chain-of-thought, but no "
                 "actual response content. This usually means the endpoint hit a thinking-token limit",  # llm_wiki
                 "ds4-server: thinking not closed, ignoring incomplete GLM tool calls in reasoning"):  # ds4 #1088
        assert _root([line]) == ("empty_output", "client_words_for_empty_answer"), line
    assert classify_lines(["Model produced 812 characters of reasoning and 240 characters of content",
                           "ds4-server: thinking closed after 512 tokens"]).kind == HEALTHY


def test_one_letter_repeated_as_the_whole_answer_is_garbled() -> None:
    for lines in (["GGGGGGGGGGGGGGGGGGGGGGGGG"],  # ollama-for-amd #100
                  ["bash-5.1$ lm Hello", "郦" * 100 + "^Cbash-5.1$ "]):  # llama.cpp #13430
        assert classify_lines(lines).kind == "decode_error", lines
    # a run longer than any answer (padding) is not read as garbled (the loop reading keeps it, as before)
    assert "printed_output_garbled" not in _rules(["A" * 20_000])
    # banners, a short run, and a run inside words stay quiet
    assert classify_lines(["==============================", "AAAAAAAA", "Zzzzzzzzzzzzzzzzzzzzzzzz, he slept "
                           "through the whole afternoon and woke up at six."]).kind == HEALTHY


def test_nginx_error_log_and_its_access_phase() -> None:
    line = ("vllm-qwen35-27b-proxy  | 2026/03/04 18:40:27 [error] 7#7: *2 [lua] access_by_lua(nginx.conf:40):13: "
            "method=POST uri=/v1/chat/c...")  # bifrost #1920
    assert parse_line(line).level == "ERROR"
    assert _root([line]) == ("auth", "proxy_access_phase_error")
    # nginx's notices are not errors, and an error of another phase is not the access check
    assert classify_lines(["2026/03/04 18:40:00 [notice] 1#1: start worker process 7"]).kind == HEALTHY
    assert "proxy_access_phase_error" not in _rules(
        ["2026/03/04 18:40:27 [error] 7#7: *2 [lua] content_by_lua(nginx.conf:52):3: bad body"])


def test_the_servers_own_lookup_while_starting_is_a_start_up_failure() -> None:
    prefix = "qwen1.5  | "
    lines = [prefix + "Traceback (most recent call last):",  # vLLM #3416
             prefix + '  File "/workspace/vllm/utils.py", line 176, in get_ip',
             prefix + '    s.connect(("dns.google", 80))  # Doesn\'t need to be reachable',
             prefix + "socket.gaierror: [Errno -3] Temporary failure in name resolution"]
    assert _root(lines) == ("startup_failure", "server_own_lookup_failed")
    # the same words raised in a client library are a connection the client could not make
    client = ["Traceback (most recent call last):",
              '  File "/usr/lib/python3/site-packages/httpx/_transports/default.py", line 69, in '
              "map_httpcore_exceptions",
              "    yield",
              "socket.gaierror: [Errno -3] Temporary failure in name resolution"]
    assert classify_lines(client).kind == "connection"
