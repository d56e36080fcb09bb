"""The general mechanisms that named round 17's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the shape beside it, so that a mechanism that fires on
everything, or on nothing, fails here."""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answers import judge_answer
from chainlit_app.diagnostics.queue_crawl import QueueCrawl
from chainlit_app.diagnostics.reserved_tokens import reserved_token
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID
from chainlit_app.diagnostics.version_bound_flags import VERSION_BOUND_FLAGS, bound_flags


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root is not None else ""


def test_a_template_engines_failure_in_another_server_is_the_chat_template() -> None:
    # ik_llama.cpp #693: gpt-oss's template calls strftime_now, which minja does not provide
    refusal = "ERR [validate_model_chat_template] failed to apply template: %s"
    placed = (' | ="Object is not callable: null at row 203, column 40:\\n    {{- \\"Knowledge cutoff: '
              '2024-06\\\\n\\" }}'
              '\\n    {{- \\"Current date: \\" + strftime_now(\\"%Y-%m-%d\\") + \\"\\\\n\\\\n\\" }}')
    assert _root([refusal, placed]) == ("chat_template", "template_engine_failed")
    assert _root([placed]) == ("chat_template", "template_engine_failed")
    # TGI #1870: the endpoint's 422 through the openai client
    tgi = ("UnprocessableEntityError: Error code: 422 - {'error': 'Template error: template not found', "
           "'error_type': 'template_error'}")
    assert _root([tgi]) == ("chat_template", "template_engine_failed")
    # the shapes beside it: a position in a CSV file, and a template applied fine
    assert RULES_BY_ID["template_engine_failed"].pattern.search("Expected 3 fields at row 12, column 4") is None
    assert classify_lines(["INFO applied chat template (1532 bytes) to 3 messages"]).kind == HEALTHY


def test_a_400_without_words_from_vllm_is_the_templates_refusal_weakly() -> None:
    # AutoGen #5965: Mistral on vLLM refusing an assistant message after an assistant message, with no message
    line = ("openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': '', 'type': "
            "'BadRequestError', 'param': None, 'code': 400}")
    report = classify_lines([line])
    assert report.kind == "chat_template" and report.root is not None
    assert report.root.rule == "request_refused_without_words" and report.root.role == "weak"
    # the shapes beside it: a 500 without words is not a refusal of the request, and a 400 with words is read by them
    five = line.replace("400", "500").replace("BadRequestError", "InternalServerError")
    assert _root([five])[1] != "request_refused_without_words"
    worded = line.replace("'message': ''", "'message': 'This model's maximum context length is 4096 tokens'")
    assert _root([worded])[1] != "request_refused_without_words"


def test_a_flag_of_another_release_is_a_version_mismatch_and_a_typo_is_not() -> None:
    # vLLM #18538, vllm-omni #1364, recipes #20: flags of releases other than the installed one
    for line, flag in (
        ("vllm: error: unrecognized arguments: --enable-reasoning --reasoning-parser deepseek_r1",
         "--enable-reasoning"),
        ("vllm: error: unrecognized arguments: --omni", "--omni"),
        ("vllm: error: unrecognized arguments: --tool-server demo", "--tool-server"),
    ):
        assert flag in bound_flags(line)
        assert _root(["usage: vllm [-h] {serve,complete,chat} ...", line]) == ("version_mismatch",
                                                                                "flag_of_another_release")
    # the shape beside it: ramalama #758 passes a sampling parameter no vLLM release takes as a flag, and a typo
    for typo in ("vllm: error: unrecognized arguments: --temperature 0.8",
                 "vllm: error: unrecognized arguments: --tensor-paralel-size 2"):
        assert bound_flags(typo) == []
        assert _root([typo]) == ("startup_failure", "bad_argument")
    # every entry says why its flag comes and goes
    assert all(flag.startswith("--") and len(why) > 20 for flag, why in VERSION_BOUND_FLAGS.items())


def test_decoded_tokens_still_in_byte_level_pieces_are_a_decode_error() -> None:
    # vLLM #16838: 0.8.3's V1 prompt_logprobs give 'Ġthat' where ' that' belongs
    lines = ["{", '  "430": {', '    "logprob": -0.26888129115104675,', '    "rank": 1,',
             '    "decoded_token": "\u0120that"', "  }", "},"]
    assert _root(lines) == ("decode_error", "decoded_token_in_pieces")
    # the shape beside it: the same record decoded, and a piece that is not a space marker
    assert classify_lines([line.replace("\u0120that", " that") for line in lines]).kind == HEALTHY
    assert RULES_BY_ID["decoded_token_in_pieces"].pattern.search('"decoded_token": "pp"') is None


def test_a_reserved_token_in_an_unfinished_answer_is_degenerate_output() -> None:
    # vLLM #14232: Llama 3.2 1B with a LoRA adapter on TP 4 answers token soup
    text = ("TumblrgetDbprogetDb MYSQLPlay on meetup in Zh conformsTumblr\n\n\n\n\n\n\n\n"
            "<|reserved_special_token_185|>Tag movers")
    assert reserved_token(text, "length") == "<|reserved_special_token_185|>"
    # vLLM PR #13167's DeepSeek-R1 answer writes DeepSeek's own placeholder between its fragments
    assert reserved_token(".Psalm <\uff5cplace\u2581holder\u2581no\u2581791\uff5c>.", None) is not None
    verdict = judge_answer(text, "length", 16)
    assert verdict is not None and verdict.kind.value == "degenerate_output"
    body = ('{"id":"cmpl-332d","object":"text_completion","model":"model","choices":[{"index":0,"text":'
            '"TumblrgetDbprogetDb MYSQLPlay on meetup in Zh conformsTumblr\\n\\n<|reserved_special_token_185|>Tag '
            'movers","logprobs":null,"finish_reason":"length","stop_reason":null}]}')
    assert classify_lines([body]).kind == "degenerate_output"
    # the shapes beside it: a finished answer explaining tokenizers, and a name quoted in backticks
    assert reserved_token("Llama 3 keeps <|reserved_special_token_0|> for later use.", "stop") is None
    assert reserved_token("The id maps to `<|reserved_special_token_3|>` in the vocabulary", None) is None
    assert judge_answer("Paris is the capital of France.", "length", 8) is None


def test_a_queue_while_decoding_crawls_on_fast_hardware_is_slow() -> None:
    # vLLM #40350: Qwen3.5-397B NVFP4 on Blackwell, 3.0 and 9.8 tokens/s with 30 and 26 requests waiting
    stat = ("(APIServer pid=563220) INFO 05-08 12:28:{s} [loggers.py:271] Engine 000: Avg prompt throughput: {p} "
            "tokens/s, Avg generation throughput: {g} tokens/s, Running: {r} reqs, Waiting: {w} reqs, GPU KV cache "
            "usage: 13.7%, Prefix cache hit rate: 0.2%")
    lines = [stat.format(s="03", p="7641.7", g="3.0", r=5, w=30), stat.format(s="13", p="8740.2", g="9.8", r=8, w=26)]
    report = classify_lines(lines)
    assert report.kind == "slow_or_stalled" and report.root is not None
    assert report.root.rule == "queue_while_decoding_crawls" and report.root.role == "weak"
    # the shapes beside it: one such report (a burst of new prompts), the same rates without a queue, and a
    # queue beside fast decoding
    assert classify_lines(lines[:1]).kind == HEALTHY
    watch = QueueCrawl()
    assert watch.observe(5, 0, 7641.7, 3.0) is None and watch.observe(8, 0, 8740.2, 9.8) is None
    fast = [stat.format(s="03", p="7641.7", g="400.0", r=5, w=30),
            stat.format(s="13", p="8740.2", g="380.5", r=8, w=26)]
    assert classify_lines(fast).kind == HEALTHY
    # a CPU's crawl prefills no thousands a second: no hardware evidence, nothing said
    cpu = [stat.format(s="03", p="40.0", g="3.0", r=5, w=30), stat.format(s="13", p="35.0", g="2.8", r=5, w=26)]
    assert _root(cpu)[1] != "queue_while_decoding_crawls"


def test_cuda_out_of_memory_in_graph_capture_is_out_of_memory() -> None:
    # vLLM #19186: --gpu-memory-utilization too high, the worker's graph capture runs out
    prefix = "(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] "
    lines = [prefix + text for text in (
        '  File "/usr/local/lib/python3.10/site-packages/torch/cuda/graphs.py", line 84, in capture_end',
        "    super().capture_end()",
        "RuntimeError: CUDA error: out of memory",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.",
    )]
    assert _root(lines) == ("out_of_memory", "gpu_oom")
    # the shape beside it: another CUDA error while serving stays the engine's
    serving = ['INFO:     127.0.0.1:5 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
               "torch.AcceleratorError: CUDA error: OS call failed or operation not supported on this OS"]
    assert _root(serving) == ("engine_error", "cuda_error_serving")


def test_a_response_without_part_is_empty_and_model_not_exist_is_not_found() -> None:
    # generative-ai-python #280: Gemini at a 20-token limit returned a candidate without any part
    gemini = ("ValueError: The `response.text` quick accessor only works when the response contains a valid `Part`, "
              "but none was returned. Check the `candidate.safety_ratings` to see if the response was blocked.")
    assert _root([gemini]) == ("empty_output", "response_without_part")
    # OpenManus #508: the provider's 400 for a model name it does not serve
    manus = ("2025-03-12 12:55:33.118 | ERROR    | app.llm:ask_tool:260 - API error: Error code: 400 - {'error': "
             "{'message': 'Model Not Exist', 'type': 'invalid_request_error', 'param': None, 'code': "
             "'invalid_request_error'}}")
    assert _root([manus]) == ("model_not_found", "provider_model_not_exist")
    # the shapes beside them: a valid part read, and a sentence about a model that exists
    assert RULES_BY_ID["response_without_part"].pattern.search("response.text returned 12 characters") is None
    assert RULES_BY_ID["provider_model_not_exist"].pattern.search("the model existed before the update") is None
