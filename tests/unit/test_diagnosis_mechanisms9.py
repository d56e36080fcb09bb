"""The general mechanisms that named round 9's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the healthy shape beside it, so that a mechanism that fires
on everything fails here."""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, LineClassifier, classify_lines
from chainlit_app.diagnostics.answer_loops import is_looping
from chainlit_app.diagnostics.answer_reprs import read_printed_answer
from chainlit_app.diagnostics.answers import judge_answer, judge_body
from chainlit_app.diagnostics.events import EventFolder
from chainlit_app.diagnostics.exceptions import error_body
from chainlit_app.diagnostics.harmless import is_harmless
from chainlit_app.diagnostics.lineformat import parse_line
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID
from chainlit_app.diagnostics.unfinished_start import step_of
from chainlit_app.diagnostics.word_salad import is_word_salad

# free-claude-code #130 and #993: a Mistral model behind NVIDIA NIM refuses a chat template, relayed
RELAYED_400 = ("Error code: 400 - {'error': {'message': 'chat_template is not supported for Mistral tokenizers.', "
               "'type': 'BadRequestError', 'param': None, 'code': 400}}   (request_id=req_c459752f5c66)")
UPSTREAM_BLOCK = ["Upstream provider NIM returned HTTP 400.", "Category: BadRequestError",
                  "Mapped message: Invalid request sent to provider.", "", "Upstream error:",
                  '{"message":"chat_template is not supported for Mistral tokenizers.","type":"BadRequestError",'
                  '"param":null,"code":400}', "", "Request ID: req_2d1dd3b3e109"]
# jishuzhan.net 2067486672681529345: Xagent's check of a reasoning model on Xinference, max_tokens=1
XINFERENCE = ["Invalid Xinference response: {", "'id': 'chat...',", "'choices': [{", "'message': {",
              "'role': 'assistant',", "'content': '',", "'reasoning_content': 'Here'", "},",
              "'finish_reason': 'length'", "}],", "'usage': {'prompt_tokens': 11, 'completion_tokens': 1}", "}"]
# vLLM #3872: the openai client's printout of an answer of two newlines
NEWLINES = ("ChatCompletion(id='cmpl-19b57e1ef1dc41edb57f37fa9bb66151', choices=[Choice(finish_reason='stop', "
            "index=0, logprobs=None, message=ChatCompletionMessage(content='\\n\\n', role='assistant', "
            "function_call=None, tool_calls=None), stop_reason=None)], created=1712343257, "
            "model='Qwen/Qwen1.5-32B-Chat-AWQ', object='chat.completion', system_fingerprint=None, "
            "usage=CompletionUsage(completion_tokens=2, prompt_tokens=78, total_tokens=80))")
# vLLM #12096: Llama 3.2 3B on v0.6.6.post1, asked for a CV
SALAD = ("... embarked Sol existed trainer Tunisia replacing Wash Bac knowing franchise Premier sun lacked Tight "
         "circulating survived polishing policy redund Blocks visibly gorgeous(\\n freeway scan quieter colonization "
         "Wat)*( Info venues Model monitor hypertension divine inexpensive commute Forum ⊥し Legs Norm Table stakes "
         "random restn Le also，有 jul Jiang-safe Float */\\n-kg getting Nome MIT excuse Boldnat")
# zai-org/GLM-4.5 #77: the end of GLM-4.5-Air's answer on vllm-ascend
DEPLOY = ("我支持的部署平台广泛，覆盖Windows、Linux、操作系统、类操作系统，类操作系统类型、系统类型、"
          "类类型、类型类型，类型支持支持范围广泛，范围部署部署范围，"
          "部署部署部署部署部署部署部署类部署部署部署部署部署部署部署类部署部署部署，部署部署，部")
# aws-neuron-sdk #1163: the front end of a Neuron launch, for three minutes
WAITING = [f"DEBUG 05-31 01:5{m}:{s}8 client.py:191] Waiting for output from MQLLMEngine."
           for m in (2, 3, 4) for s in (0, 1, 2, 3, 4, 5)]
# LongVT #9: pydantic's line for vLLM's refusal of a max_model_len above the model's
MAX_LEN = ("Value error, User-specified max_model_len (131072) is greater than the derived max_model_len "
           "(max_position_embeddings=32768.0 or model_max_length=None in model's config.json). To allow overriding "
           "this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used "
           "with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding "
           "derived_max_model_len lead to nan. [type=value_error, input_value=ArgsKwargs((), {'model': "
           "...rocessor_plugin': None}), input_type=ArgsKwargs]")
PROSE = ("Homer Simpson is a safety inspector at the Springfield Nuclear Power Plant. He has worked there for many "
         "years, and in that time he has learned how to sleep at his desk, how to eat a dozen donuts before lunch and "
         "how to avoid the attention of Mr. Burns, who never remembers his name.")


def test_a_chat_template_refusal_is_named_wherever_it_is_relayed() -> None:
    for lines in ([RELAYED_400], UPSTREAM_BLOCK):
        report = classify_lines(lines)
        assert report.kind == "chat_template" and report.root is not None
        assert report.root.rule == "chat_template_refused"
    # vLLM's refusal of a template sent with a request without --trust-request-chat-template
    rule = RULES_BY_ID["chat_template_refused"]
    assert all(rule.pattern.search(example) for example in rule.examples)
    # start-up notes about the template are not refusals
    for line in ("INFO 01-01 00:00:00 [serving_chat.py:80] Using supplied chat template: {% for m in messages %}",
                 "WARNING 01-01 00:00:00 [api_server.py:900] Detected the chat template content format to be "
                 "'openai'. You can set `--chat-template-content-format` to override this."):
        assert classify_lines([line]).kind == HEALTHY


def test_a_body_behind_a_label_is_read_as_a_body() -> None:
    folder = EventFolder()
    body = folder.body(RELAYED_400, 1)
    assert body is not None and isinstance(body.data, dict) and "error" in body.data  # the note after it is not JSON
    report = classify_lines(XINFERENCE)
    assert report.kind == "empty_output" and report.root is not None
    assert "reasoning" in report.root.hint  # the hint names the reasoning parser
    # any other text before a brace stays a line: vLLM's arguments are no body (and still mark the start)
    assert EventFolder().body("non-default args: {'model': 'Qwen/Qwen3-0.6B'}", 1) is None
    # a labelled line cut inside its body opens nothing: the traceback after it is still read
    cut = ["Upstream error: {'detail': 'upstream failed", "Traceback (most recent call last):",
           '  File "/x/vllm/transformers_utils/detokenizer.py", line 10, in decode_sequence_inplace',
           "    new_tokens = convert_prompt_ids_to_tokens(tokenizer, ids)",
           "IndexError: list index out of range"]
    report = classify_lines(cut)  # named by where it was raised, which only the frames show
    assert report.kind == "decode_error" and report.root is not None and report.root.basis == "raised_in"


def test_an_error_object_relayed_without_its_envelope_is_an_error() -> None:
    bare: dict[str, object] = {"message": "something the rules do not know", "type": "BadRequestError",
                               "param": None, "code": 400}
    found = error_body(bare)
    assert found is not None and "BadRequestError" in found[0] and found[1].startswith("status code 400")
    report = classify_lines(['{"message":"something the rules do not know","type":"BadRequestError","code":400}'])
    assert report.kind != HEALTHY
    # a document with a message but no error type or error status is not an error
    assert error_body({"message": "hello", "code": 200}) is None and error_body({"message": "hi"}) is None


def test_the_openai_librarys_printed_answer_is_judged_as_an_answer() -> None:
    answer = read_printed_answer(NEWLINES)
    assert answer is not None and answer.text == "\n\n" and answer.finish_reason == "stop"
    assert answer.completion_tokens == 2
    report = classify_lines([NEWLINES])
    assert report.kind == "empty_output" and report.root is not None and report.root.rule.startswith(
        "openai_answer_repr")
    fine = NEWLINES.replace("content='\\n\\n'", "content='Paris is the capital of France.'")
    assert classify_lines([fine]).kind == HEALTHY
    tools = NEWLINES.replace("content='\\n\\n'", "content=None").replace(
        "tool_calls=None", "tool_calls=[ChatCompletionMessageToolCall(id='c1', function=Function(name='f'))]")
    assert classify_lines([tools]).kind == HEALTHY  # an answer that calls a tool has no text, rightly


def test_words_without_grammar_are_a_degenerate_answer() -> None:
    assert is_word_salad(SALAD) and not is_word_salad(PROSE)
    report = classify_lines([SALAD])
    assert report.kind == "degenerate_output" and report.root is not None and report.root.rule == "word_salad"
    verdict = judge_answer(SALAD, "length", 128)
    assert verdict is not None and verdict.kind.value == "degenerate_output"
    assert judge_answer(SALAD, "stop", 128) is None  # an answer that ended on its stop token is not read so
    # lists are not salad: names (all capitals, separated), CPU flags (no capitals), identifiers
    names = ", ".join(["France", "Germany", "Italy", "Spain", "Portugal", "Austria", "Belgium", "Poland"] * 6)
    flag_row = "fpu vme de pse tsc msr pae mce cx apic sep mtrr pge mca cmov pat clflush "
    flags = flag_row * 3
    assert not is_word_salad(names) and not is_word_salad(flags)
    assert classify_lines([PROSE]).kind == HEALTHY


def test_a_cjk_word_six_times_in_a_row_loops() -> None:
    assert is_looping(DEPLOY)
    report = classify_lines(["聊天接口响应：", DEPLOY])
    assert report.kind == "degenerate_output"
    assert judge_body({"choices": [{"message": {"content": DEPLOY}, "finish_reason": "length"}]}) is not None
    sentence = "我们支持多种部署方式，包括容器部署和裸机部署，部署前请先检查驱动版本，然后按照文档逐步完成安装与配置。"
    assert not is_looping(sentence) and classify_lines(["聊天接口响应：", sentence]).kind == HEALTHY


def test_a_start_that_ends_waiting_for_its_engine_is_unfinished() -> None:
    report = classify_lines(WAITING)
    assert report.kind == "slow_or_stalled" and report.root is not None
    assert report.root.rule == "start_ends_waiting_for_engine" and report.root.basis == "phase"
    assert step_of("(APIServer pid=300606) DEBUG 09-02 17:29:16 [utils.py:777] Waiting for 1 local, 0 remote core "
                   "engine proc(s) to start.") is not None
    # an idle server that served already prints the same poll: no finding
    served = ["INFO:     Application startup complete.", *WAITING]
    assert classify_lines(served).kind == HEALTHY
    # the live monitor never reads the end of a log
    live = LineClassifier()
    assert not [f for i, line in enumerate(WAITING, 1) for f in live.feed(line, i)] and not live.finish()


def test_pydantic_value_error_is_raised_not_the_warning_it_quotes() -> None:
    assert not is_harmless(parse_line(MAX_LEN))
    report = classify_lines([MAX_LEN])
    assert report.kind == "startup_failure" and report.root is not None
    assert report.root.rule == "max_model_len_invalid"
    # the warning vLLM prints when VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lets it go on stays harmless
    warning = ("WARNING 01-01 00:00:00 [config.py:3600] User-specified max_model_len (131072) is greater than the "
               "derived max_model_len (max_position_embeddings=32768). VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used "
               "with extreme caution.")
    assert is_harmless(parse_line(warning)) and classify_lines([warning]).kind == HEALTHY
    # a refusal in pydantic's shape that no rule knows is still an exception: a start-up failure by its phase
    unknown = ("  Value error, Invalid repository ID or local directory specified: 'x' [type=value_error, "
               "input_value=ArgsKwargs((), {'model': 'x'}), input_type=ArgsKwargs]")
    odd = unknown.replace("Invalid repository ID or local directory specified: 'x'", "the frobnicator is unset")
    assert classify_lines([unknown]).kind == "model_not_found"  # hf_repo_missing's words, in pydantic's shape
    found = classify_lines([odd])
    assert found.kind == "startup_failure" and found.root is not None and found.root.basis == "phase"


def test_the_hubs_answers_for_a_model_that_is_not_there() -> None:
    local = ("huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or "
             "'namespace/repo_name': '/root/DeepSeek-V2-Lite'. Use `repo_type` argument if needed.")  # vllm-ascend #135
    missing = ("b.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-69aa2f29) Repository Not "
               "Found for url: https://huggingface.co/Qwen/Qwen3.5-27B-AWQ/resolve/main/config.json.")  # vast-ai #128
    gated = ("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: "
             "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json")  # OPEA #2237
    assert classify_lines([local]).kind == "model_not_found"
    assert classify_lines([missing]).kind == "model_not_found"  # the hub answers 401 for a missing repo too
    assert classify_lines([gated]).kind == "auth"


def test_refusals_in_a_launchers_and_a_callers_words() -> None:
    ports = ["2025-12-03 15:04:54.398666+08:00 - gpustack.cmd.prerun - ERROR - Port 5432 required for service "
             "'postgres' is not available."]
    assert classify_lines(ports).kind == "port_in_use"
    assert classify_lines(["INFO: Port 5432 is available, starting postgres"]).kind == HEALTHY
    signature = ("ERROR - [warmup] async failed after 2.6761 seconds. Error: EngineArgs.__init__() got an unexpected "
                 "keyword argument 'task'")
    assert classify_lines([signature]).kind == "version_mismatch"
    # LangChain's token counter falling back to a default encoding is no missing model
    fallback = ("2023-11-30 14:52:33,802 - openai.py[line:578] - WARNING: Warning: model not found. Using cl100k_base "
                "encoding.")
    assert classify_lines([fallback]).kind == HEALTHY
