"""The general mechanisms that named round 16's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the shape beside it, so that a mechanism that fires on
everything, or on nothing, fails here."""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answers import is_garbled
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID
from chainlit_app.diagnostics.rules_callers import count_not_below_limit
from chainlit_app.diagnostics.special_tokens import special_token_run
from chainlit_app.diagnostics.unfinished_start import step_of


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root is not None else ""


# olmOCR #177: the pipeline relays the inference server's 400 inside a bytes literal
OLMOCR = ("<class 'ValueError'> - Got BadRequestError from server: b'{\"object\":\"error\",\"message\":\"Multimodal "
          "prompt is too long after expanding multimodal tokens. After expanding len(req.origin_input_ids_unpadded)="
          "5192 => 6153 >= 5489.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}', skipping this response")


def test_a_prompt_refused_with_its_figures_compared_is_context_length() -> None:
    assert count_not_below_limit("6153 >= 5489") and count_not_below_limit("got 5,000 > 4,096")
    assert _root([OLMOCR]) == ("context_length", "prompt_too_long_figures")
    # the shapes beside it: the same words with the count below the limit, and with no figures at all
    assert not count_not_below_limit("Prompt is too long after expanding: 4000 >= 5489")
    below = OLMOCR.replace("6153 >= 5489", "4153 >= 5489")
    assert RULES_BY_ID["prompt_too_long_figures"].check is not None
    assert not RULES_BY_ID["prompt_too_long_figures"].check(below)
    assert classify_lines(["The prompt is too long to show here, printing its first 200 characters."]).kind == HEALTHY


def test_a_gateways_model_response_empty_is_an_empty_answer() -> None:
    # FastGPT #2245 (an SSE error event) and #3882 (a pretty-printed JSON body with the error code)
    sse = "2024-08-05 00:42:54 [Error] 2024-08-04 16:42:54 sse error: LLM model response empty"
    assert _root([sse]) == ("empty_output", "client_words_for_empty_answer")
    body = ["{", '  "message": "chat:LLM_model_response_empty"', "}"]
    assert _root(body) == ("empty_output", "client_words_for_empty_answer")
    # the shape beside it: a response that is not empty, and a setting's name
    assert classify_lines(["[Info] LLM model response received: 512 tokens"]).kind == HEALTHY
    assert RULES_BY_ID["client_words_for_empty_answer"].pattern.search("allow_empty_model_response=False") is None


def test_the_hubs_403_is_authorisation() -> None:
    # llm2vec #36: a gated repository whose access the token was not granted
    line = ("HTTPError: 403 Client Error: Forbidden for url: "
            "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json")
    assert _root([line]) == ("auth", "hf_forbidden")
    # the shape beside it: a 403 from another host is not the hub's (a gateway's 403 stays the status reading)
    other = line.replace("https://huggingface.co/", "https://api.example.com/")
    assert RULES_BY_ID["hf_forbidden"].pattern.search(other) is None
    assert _root([other])[1] != "hf_forbidden"


def test_a_templates_role_refusal_is_the_chat_template() -> None:
    # cindy #3583: three 400 bodies; the first refuses a parameter, the next two are the Qwen template's own words
    lines = [
        '{"error":{"message":"Unexpected reasoning effort high. Supported types are xhigh (default), medium, and '
        'low.","type":"BadRequestError","param":null,"code":400}}',
        '{"error":{"message":"Unexpected message role.","type":"BadRequestError","param":null,"code":400}}',
    ]
    assert _root(lines) == ("chat_template", "template_role_refused")
    # the shape beside it: the parameter refusal alone is an error response no rule names (weak, by phase)
    kind, rule_id = _root(lines[:1])
    assert kind == "engine_error" and rule_id != "template_role_refused"


def test_a_model_store_without_the_model_is_model_not_found() -> None:
    # OpenLLM #894: BentoML's store holds no model under the name OpenLLM asked for
    lines = [
        "fs.errors.ResourceNotFound: resource 'vllm-mistral--garrulus/latest' not found",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        'File "/opt/conda/lib/python3.11/site-packages/bentoml/_internal/store.py", line 95, in list',
        "raise NotFound(",
        "bentoml.exceptions.NotFound: no Models with name 'vllm-mistral--garrulus' found",
    ]
    assert _root(lines) == ("model_not_found", "model_store_missing")
    # the shape beside it: the store listing models it found
    assert RULES_BY_ID["model_store_missing"].pattern.search("found 2 models with name 'mistral'") is None


def test_a_vllm_class_refusing_a_keyword_is_a_version_mismatch_in_any_phase() -> None:
    # BentoVLLM #38: BentoML builds the service while it serves; vLLM 0.4.1 renamed `served_model`
    lines = [
        "2024-04-25T00:29:30-0600 [ERROR] [entry_service:bentovllm-llama3-8b-insruct-service:1] Initializing "
        "service error",
        "Traceback (most recent call last):",
        '  File "/home/admin/BentoVLLM/llama3-8b-instruct/bentovllm_openai/utils.py", line 77, in __init__',
        "    self.openai_serving_completion = OpenAIServingCompletion(",
        "TypeError: OpenAIServingCompletion.__init__() got an unexpected keyword argument 'served_model'",
    ]
    serving = ['INFO:     127.0.0.1:51234 - "POST /v1/completions HTTP/1.1" 200 OK', *lines]
    assert _root(serving) == ("version_mismatch", "vllm_class_keyword_refused")
    # while starting, the older start-up-only reading (a call refusing a keyword) says the same
    assert _root(lines)[0] == "version_mismatch"
    # the shape beside it: the caller's own class refusing a keyword is not vLLM's API
    own = "TypeError: MyService.__init__() got an unexpected keyword argument 'served_model'"
    assert RULES_BY_ID["vllm_class_keyword_refused"].pattern.search(own) is None


def test_a_token_id_without_a_piece_is_a_decode_error() -> None:
    # Intern-S1 #19: generated ids beyond the vocabulary decode to None and the join fails
    line = "TypeError: sequence item 139: expected str instance, NoneType found"
    report = classify_lines([line])
    assert report.kind == "decode_error" and report.root is not None
    assert report.root.rule == "token_id_without_piece" and report.root.role == "weak"
    # the shape beside it: another TypeError of a join names nothing by this rule
    other = "TypeError: sequence item 0: expected str instance, int found"
    assert RULES_BY_ID["token_id_without_piece"].pattern.search(other) is None


def test_special_tokens_kept_in_decoded_text_are_a_decode_error() -> None:
    # vLLM PR #56211: beam search's decoded text before skip_special_tokens was respected
    line = "<s>" + "[STREAMING_PAD]" * 12 + "[STREAMING_WORD] spoke in" + "[STREAMING_PAD]" * 3 + "[STREAMING_WORD] the"
    assert special_token_run(line) == "[STREAMING_PAD]"
    assert is_garbled(line)
    assert _root([line]) == ("decode_error", "special_tokens_kept")
    # the shapes beside it: markers that vary (a log's own prefixes) or stand once per turn (a printed prompt)
    assert special_token_run("[ERROR][ENGINE_CORE][RANK_0][GPU_1] step failed") is None
    prompt = "<|im_start|>system You are helpful.<|im_end|><|im_start|>user Hi<|im_end|><|im_start|>assistant"
    assert special_token_run(prompt) is None
    assert classify_lines([prompt]).kind == HEALTHY


def test_a_start_that_stops_on_the_workers_ready_lines_is_unfinished() -> None:
    # lm-evaluation-harness #3093: accelerate launch with vLLM TP=4, the last lines the excerpt shows
    ready = ("(VllmWorkerProcess pid={}) INFO 06-29 19:49:29 multiproc_worker_utils.py:215] Worker ready; awaiting "
             "tasks")
    lines = [ready.format(pid) for pid in (1876891, 1876887, 1876892)]
    step = step_of(lines[-1])
    assert step is not None and step.id == "start_ends_workers_ready"
    assert _root(lines) == ("slow_or_stalled", "start_ends_workers_ready")
    # the shape beside it: the driver's next step logged after the ready lines means the start went on
    went_on = [*lines, "INFO 06-29 19:49:31 utils.py:841] Found nccl from library libnccl.so.2",
               "INFO 06-29 19:49:35 model_runner.py:1014] Loading model weights took 33.9 GB"]
    assert classify_lines(went_on).kind == HEALTHY


def test_a_folder_without_a_file_the_server_needs_is_model_not_found() -> None:
    # MiniCPM (OpenBMB's vLLM fork, iceflame89/vllm #4): the local snapshot lacks the processor's config
    lines = ["OSError: /u01/xxx", "/.cache/modelscope/hub/OpenBMB/MiniCPM-Llama3-V-2_5 does not appear to have a file "
             "named preprocessor_config.json. Checkout"]
    assert _root(lines) == ("model_not_found", "model_files_missing")
    # round 15's wording of the same boundary: the config was read, the weights are not there
    weights = ("(RayWorkerVllm pid=1) ERROR 04-24 ray_utils.py:44] RuntimeError: Cannot find any model weights with "
               "'meta-llama/CodeLlama-7b-Instruct-hf'")
    assert _root([weights]) == ("model_not_found", "model_files_missing")
