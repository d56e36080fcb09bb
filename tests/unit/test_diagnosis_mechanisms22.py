"""The general mechanisms of the round-22 pass (issue 11: the misses of holdout round 22, moved to dev), each on
the real lines it was written from and each beside the healthy shape that must stay quiet.

Ollama's own words for a model it cannot fit or cannot find, a structured log's event and an agent's words for an
empty answer, a client's unterminated-JSON stream error, vLLM's renderer frames in a chat-template traceback, an
assertion in an engine's native code, SGLang's serving frames, Ollama's /api/chat reply from before done_reason,
an answer printed field by field, and an empty content field beside one sampled token.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answer_fields import ONE_TOKEN_ID
from chainlit_app.diagnostics.answer_fields import RULE_ID as FIELDS_ID
from chainlit_app.diagnostics.answer_loops import writes_next_turns
from chainlit_app.diagnostics.phases import stack_shows_serving
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID

_TIMINGS = "llama_print_timings:      sample time =       0.81 ms /     {n} runs   (    0.81 ms per token,  1239.16 " \
           "tokens per second)"
_OLLAMA_REPLY = ['{', '    "model": "gemma:7b-instruct-fp16",', '    "created_at": "2024-03-01T11:17:53.3907871Z",',
                 '    "message": {', '        "role": "assistant",', '        "content": ""', '    },',
                 '    "done": true{extra}', '}']


def _rules(lines: list[str]) -> list[str]:
    return [finding.rule for finding in classify_lines(lines).findings]


def _reply(extra: str = "") -> list[str]:
    return [line.replace("{extra}", extra) for line in _OLLAMA_REPLY]


def test_ollamas_memory_check_is_out_of_memory() -> None:
    pulled = ["writing manifest", "success",  # Ollama #10920, after the pull
              "Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)"]
    assert classify_lines(pulled).kind == "out_of_memory"
    # Continue #9668: the same words in a 500's body outweigh the status
    report = ["Provider: ollama", "Status Code: 500", "",
              '"model requires more system memory (19.3 GiB) than is available (14.8 GiB)"']
    assert classify_lines(report).kind == "out_of_memory"
    # the memory a healthy load reports stays quiet
    assert classify_lines(['level=INFO source=server.go:135 msg="system memory" total="15.5 GiB" '
                           'free="14.8 GiB" free_swap="0 B"']).kind == HEALTHY


def test_a_manifest_the_registry_does_not_have_is_model_not_found() -> None:
    for lines in (["pulling manifest ", "Error: pull model manifest: file does not exist"],  # Ollama #2292
                  ["Error: pull model manifest: file does not exist"]):  # rag_chatbot #1
        assert classify_lines(lines).kind == "model_not_found"
    # a pull that finds its manifest is no match
    assert classify_lines(["pulling manifest ", "verifying sha256 digest ", "writing manifest ",
                           "success "]).kind == HEALTHY


def test_event_and_agent_words_for_an_empty_answer() -> None:
    for line in ("WARNING markdown_vault_mcp.summarizer: summarize_empty_response model=gpt-5-mini "
                 "finish_reason=length",  # markdown-vault-mcp #919
                 "Assistant returned empty stop after retry cap; try switching models or `/shake images` to remove "
                 "archived frames"):  # oh-my-pi #7465
        assert "client_words_for_empty_answer" in _rules([line]), line
        assert classify_lines([line]).kind == "empty_output"
    # an event with content, and a tool's empty result, stay quiet
    assert classify_lines(["INFO markdown_vault_mcp.summarizer: summarize_response model=gpt-5-mini "
                           "finish_reason=stop chars=812",
                           "search tool returned empty results for 'foo'"]).kind == HEALTHY


def test_a_clients_unterminated_json_from_a_stream_is_decode_error() -> None:
    line = "LLM stream returned invalid JSON: Unterminated string starting at: line 1 column ..."  # maw #123
    assert classify_lines([line]).kind == "decode_error"
    assert "stream_chunk_cut" in _rules([line])
    # the same json error from a tool call's arguments is not a stream's
    rule = RULES_BY_ID["stream_chunk_cut"]
    assert not rule.pattern.search("Failed to parse tool arguments: Unterminated string starting at: line 1 column 9")


def test_vllms_render_chat_frames_are_the_chat_template() -> None:
    prefix = "(APIServer pid=18801) ERROR 03-01 13:30:11 [serving.py:214] "
    lines = [prefix + "Traceback (most recent call last):",  # vLLM #35679, cut before the exception line
             prefix + '  File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/chat_completion/'
                      'serving.py", line 201, in warmup',
             prefix + "    await self._preprocess_chat(",
             prefix + '  File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/engine/serving.py", '
                      'line 995, in _preprocess_chat',
             prefix + "    (conversation,), (engine_prompt,) = await renderer.render_chat_async(",
             prefix + '  File "/usr/local/lib/python3.12/dist-packages/vllm/renderers/base.py", line 755, in '
                      'render_chat_async',
             prefix + "    for conv, prompt in await asyncio.gather(*rendered):"]
    report = classify_lines(lines)
    assert report.kind == "chat_template"
    # named where it was raised (the renderer's frames in its own stack), not by a frame found elsewhere; shown at
    # the innermost line the cut traceback has, the one its text quotes
    assert report.root is not None and report.root.basis == "raised_in" and report.root.line == len(lines)
    assert report.root.text.strip() in lines[-1]
    # the renderer on the stack of an error the tokenizer raised under it while serving: the tokenizer's, as before
    tokenizer = [*lines[:6], prefix + '  File "/x/transformers/tokenization_utils_base.py", line 3000, in encode',
                 prefix + "SomeOddError: token id out of range"]
    assert classify_lines(["INFO:     Application startup complete.", *tokenizer]).kind == "decode_error"
    # a line that names the renderer without a frame of it stays quiet
    assert classify_lines(["INFO 03-01 13:30:12 [serving.py:220] Chat warm-up: render_chat_async took 0.21 s"]
                          ).kind == HEALTHY


def test_an_assertion_in_native_code_is_the_engines_failure() -> None:
    lines = ["26.12.467.002 I srv  log_server_r: done request: POST /v1/chat/completions 10.1.1.11 200",
             r"E:\AI-models\llm-server-build\src-njannasch\ggml\src\ggml.c:1808: GGML_ASSERT(obj_new) failed"]
    assert classify_lines(lines).kind == "engine_error"
    assert "native_assertion_serving" in _rules(lines)
    # the macro named without a failure (a build option, a source line) is no match
    for rule_id in ("native_assertion_serving", "native_assertion_starting"):
        pattern = RULES_BY_ID[rule_id].pattern
        assert not pattern.search("#define GGML_ASSERT(x) if (!(x)) ggml_abort(__FILE__, __LINE__, #x)")
        assert not pattern.search("AssertionError: expected 2 outputs")


def test_sglang_decode_frames_place_a_traceback_in_serving() -> None:
    assert stack_shows_serving(["_draft_extend_for_decode", "init_forward_metadata"])  # sglang #33892
    assert stack_shows_serving(["run_scheduler_process", "event_loop_overlap", "get_next_batch_to_run"])
    # frames that run while starting outweigh them, and a forward's metadata alone says nothing
    assert not stack_shows_serving(["load_model", "_draft_extend_for_decode"])
    assert not stack_shows_serving(["init_forward_metadata", "capture_one_batch_size"])
    lines = ["[DP0 TP0 EP0] Scheduler hit an exception: Traceback (most recent call last):",
             '  File ".../srt/speculative/multi_layer_eagle_worker_v2.py", line 850, in _draft_extend_for_decode',
             "    self.draft_runner_list[step].attn_backend.init_forward_metadata(forward_batch)",
             '  File ".../srt/layers/attention/flashattention_backend.py", line 674, in init_forward_metadata',
             "    seq_lens_cpu.max().item()",
             "RuntimeError: max(): Expected reduction dim to be specified for input.numel() == 0."]
    assert classify_lines(lines).kind == "engine_error"


def test_ollama_reply_before_done_reason_with_empty_content() -> None:
    assert classify_lines(_reply()).kind == "empty_output"  # Ollama #2861
    # a stream's last object is empty after the tokens it counts; a reply with text is an answer
    assert classify_lines(_reply(', "eval_count": 282')).kind == HEALTHY
    with_text = [line.replace('"content": ""', '"content": "Hello! How can I help?"') for line in _reply()]
    assert classify_lines(with_text).kind == HEALTHY


def test_an_answer_printed_field_by_field() -> None:
    content = ("content: '\\n\\n<think>\\n\\n</think>\\n\\nPONG<|endoftext|><|im_start|>user\\nWhat is the capital "
               "of France?\\n</think>\\n\\nParis.\\n\\n'")  # spotlight PR #32, the "before" response
    report = classify_lines([content, "finish_reason: length"])
    assert report.kind == "degenerate_output"
    assert FIELDS_ID in _rules([content, "finish_reason: length"])
    # the answer that stopped where it should, and either field alone, stay quiet
    assert classify_lines(["content: '\\n\\n<think>\\n\\n</think>\\n\\nPONG'", "finish_reason: stop"]).kind == HEALTHY
    assert classify_lines([content]).kind == HEALTHY
    assert classify_lines(["finish_reason: length"]).kind == HEALTHY


def test_writes_next_turns_after_its_end_of_sequence_token() -> None:
    assert writes_next_turns("PONG<|endoftext|><|im_start|>user\nWhat is the capital of France?\n\nParis.")
    assert writes_next_turns("Done.</s>\nUSER: and now?")
    # a user turn quoted without the token before it, and the token alone, are no match
    assert not writes_next_turns("The template reads: <|im_start|>user\nhello")
    assert not writes_next_turns("PONG<|endoftext|>")


def test_empty_content_beside_one_sampled_token() -> None:
    lines = ['"content": "",', "", "Llama.generate: prefix-match hit",  # llama-cpp-python #1020
             "llama_print_timings:        load time =   28360.02 ms", _TIMINGS.format(n=1)]
    assert classify_lines(lines).kind == "empty_output"
    assert ONE_TOKEN_ID in _rules(lines)
    # either alone, and an empty field beside a longer generation, stay quiet
    assert classify_lines(lines[:1]).kind == HEALTHY
    assert classify_lines(lines[1:]).kind == HEALTHY
    assert classify_lines([*lines[:4], _TIMINGS.format(n=26)]).kind == HEALTHY
