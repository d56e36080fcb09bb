"""Start-up rules about the model: where it comes from, its files, its configuration, vLLM's arguments.

Data only: see `rules.py` for what the fields mean and how the winner is chosen. These rules come first
in the table (`rule_tables.py`): model source problems look like network/auth errors and must precede
those rules.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import STARTING, Rule, rule
from .taxonomy import Kind

MODEL_RULES: tuple[Rule, ...] = (
    rule(
        "hf_offline",
        Kind.STARTUP_FAILURE,
        r"LocalEntryNotFoundError|couldn't connect to '?https://huggingface\.co|"
        r"Cannot find the requested files in the (?:disk )?cache|"
        r"host='(?:[\w-]+\.)*(?:huggingface\.co|hf\.co|hf-mirror\.com)'|OfflineModeIsEnabled",
        hint=Msg("rule.hf_offline"),
        examples=(
            "HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /api/x",
        ),
    ),
    rule(
        "hf_repo_missing",
        # before hf_gated: the hub answers 401 for a repository that does not exist as for a gated one
        Kind.MODEL_NOT_FOUND,
        r"RepositoryNotFoundError|Repository Not Found for url|"
        r"is not a local folder and is not a valid model identifier|Invalid repository ID or local directory|"
        # ModelScope's hub (VLLM_USE_MODELSCOPE) answers an unknown model id in these words
        r"The request model:? \S+ does not exist|"
        # ModelScope's API answers 404 when asked for the revisions of an id it does not hold (vLLM #2629)
        r"404 Client Error: Not Found for url: \S*/api/v1/models/\S+/revisions",
        hint=Msg("rule.hf_repo_missing"),
        examples=(
            "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
            "https://www.modelscope.cn/api/v1/models/gpt2/revisions?EndTime=1706391065",
            "OSError: foo/bar is not a local folder and is not a valid model identifier listed on",
            "requests.exceptions.HTTPError: The request model: jarvis_vla_qwen2_vl_7b_sft does not exist!",
        ),
    ),
    rule(
        "hf_gated",
        # a gated repository answers 401 until a token with access is given: authentication, not the model
        Kind.AUTH,
        r"401 Client Error.*(?:huggingface|hf\.co)|GatedRepoError|Cannot access gated repo|gated repo|"
        r"Access to model \S+ is restricted",
        hint=Msg("rule.hf_gated"),
        examples=(
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url",
        ),
    ),
    rule(
        "hf_token_refused",
        # the hub's own words for a token it refused (expired, revoked, mistyped): a 401 for the token itself,
        # which explains the 'Repository Not Found' the same answer prints (whole_log.EXPLAINED_BY_RULES)
        Kind.AUTH,
        r"\bInvalid credentials in Authorization header\b|\bInvalid user token\b",
        hint=Msg("rule.hf_token_refused"),
        examples=("Invalid credentials in Authorization header",),  # silnlp #791 (an expired token)
    ),
    rule(
        "hf_validation",
        # the hub validates the id only when no local folder of that name exists: the path names no model
        Kind.MODEL_NOT_FOUND,
        r"HFValidationError|Repo id must be in the form",
        hint=Msg("rule.hf_validation"),
        examples=(
            "huggingface_hub.errors.HFValidationError: "
            "Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/path/does-not-exist'.",
        ),
    ),
    rule(
        "hf_cache_missing",
        # huggingface_hub's CacheNotFound: the weights were looked for in a cache folder that does not exist
        # (HF_HOME / HF_HUB_CACHE pointing at a path not mounted in the container): no copy of the model there
        Kind.MODEL_NOT_FOUND,
        r"Cache directory not found: \S+\. Please use `cache_dir` argument or set `HF_HUB_CACHE`",
        hint=Msg("rule.hf_cache_missing"),
        examples=(  # HabanaAI vllm-fork #1474
            "ERROR 06-24 15:31:46 engine.py:389] Cache directory not found: /data/.cache/huggingface. Please use "
            "`cache_dir` argument or set `HF_HUB_CACHE` environment variable.",
        ),
    ),
    rule(
        "arch_unsupported",
        Kind.STARTUP_FAILURE,
        r"architectures? \[[^\]]*\] (?:are|is) not supported|are not supported for now|"
        r"architectures? \[[^\]]*\] failed to be inspected|unknown model architecture",
        hint=Msg("rule.arch_unsupported"),
        examples=(
            "Value error, Model architectures ['FooBarForCausalLM'] are not supported for now.",
            # xorbitsai/inference #3135 (a comment, as posted)
            "erver error: 400 - [address=0.0.0.0:44335, pid=10135] Model architectures "
            "['Qwen2_5_VLForConditionalGeneration'] failed to be inspected. Please check the logs for more details.",
            "llama_model_load: error loading model: error loading model architecture: unknown model architecture: "
            "'gemma3'",  # llama.cpp's words (an Ollama/llama.cpp build older than the model)
        ),
    ),
    # In the public reports this is nearly always a transformers release older than the model.
    rule(
        "transformers_too_old",
        Kind.VERSION_MISMATCH,
        r"has model type [`'\"]?[\w.-]+[`'\"]? but Transformers does not recognize|"
        r"does not recognize this architecture|"
        # the rest of transformers' same message, for an excerpt cut at its line break
        r"your version of Transformers is out of date|You can update Transformers with the command|"
        # a multimodal model's processor looked up by its model type, in a transformers that lacks it
        r"Unknown (?:image|video|audio) model type:? [`'\"]?\w+",
        hint=Msg("rule.transformers_too_old"),
        examples=(
            "You can update Transformers with the command `pip install --upgrade transformers`. If this does not "
            "work, and the checkpoint is very new, then there may not be a release version that supports this "
            "model yet.",
            "Value error, "
            "The checkpoint you are trying to load has model type `glm4v_moe` but Transformers does not recognize this architecture.",  # noqa: E501
            "TypeError: Unknown image model type: qwen2_5_vl",  # vLLM #12604 (Qwen2.5-VL before transformers had it)
        ),
    ),
    # transformers' auto classes look a model_type up in their mappings (CONFIG_MAPPING, MODEL_MAPPING ...):
    # a KeyError raised there is the same missing architecture, printed without the sentence above.
    rule(
        "transformers_auto_mapping_key",
        Kind.VERSION_MISMATCH,
        r"KeyError: ['\"][\w.-]+['\"]",
        exception_types=("KeyError",),
        raised_in=("models/auto/",),
        hint=Msg("rule.transformers_auto_mapping_key"),
        examples=("KeyError: 'qwen3_vl'",),
    ),
    rule(
        "model_type_unknown",
        Kind.STARTUP_FAILURE,
        r"Unrecognized model in|Should have a `model_type` key|Error parsing config for",
        hint=Msg("rule.model_type_unknown"),
        examples=(
            "Error parsing config for DIR: The checkpoint you are trying to load has model type `foobar`",
        ),
    ),
    rule(
        "tokenizer_missing",
        Kind.STARTUP_FAILURE,
        r"Can't load tokenizer|Tokenizer class \w+ does not exist",
        hint=Msg("rule.tokenizer_missing"),
        examples=(  # transformers' own wordings
            "OSError: Can't load tokenizer for 'bert-base-uncased'. If you were trying to load it from "
            "'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
            "ValueError: Tokenizer class LlamaTokenizer does not exist or is not currently imported.",
        ),
    ),
    rule(
        "backend_tokenizer_not_built",
        Kind.STARTUP_FAILURE,
        # transformers' head line for a fast tokenizer it could not build; the lines of its message below it say
        # why (a package it needs, `optional_package_missing`), and that reason decides when it is there
        r"Couldn't instantiate the backend tokenizer",
        role="weak",
        hint=Msg("rule.tokenizer_missing"),
        examples=("ValueError: Couldn't instantiate the backend tokenizer from one of:",),
    ),
    rule(
        "model_files_missing",
        # the folder or repo named lacks a file the server needs (config, weights, preprocessor, tokenizer): the
        # model is not where it was looked for, as an unfinished download or a volume not filled leaves it; the
        # boundary drawn once in round 16 (a model that is not there, whole or in part, is model_not_found)
        Kind.MODEL_NOT_FOUND,
        r"does not appear to have a file named|Can't load (?:the )?config|No model weights found|"
        r"Cannot find any model weights|No such file or directory.{0,200}(?:config\.json|\.safetensors|"
        r"tokenizer)|"
        r"FileNotFoundError.{0,200}(?:config\.json|\.safetensors|tokenizer)|"
        # the hub's words for a file a repository does not hold (a repository of GGUF files has no config.json)
        r"Entry Not Found for url: \S+/resolve/",
        hint=Msg("rule.model_files_missing"),
        # the model's files are read while starting; a file missing while serving is a request's (a LoRA
        # adapter, an image path): read by its exception and place
        phases=STARTING,
        examples=(
            "OSError: /models/x does not appear to have a file named config.json.",
            # runpod-workers/worker-vllm #70 (a repository of GGUF files)
            "Entry Not Found for url: https://huggingface.co/impactframes/llama3_if_ai_sdpromptmkr_q4km/resolve/main/"
            "config.json.",
        ),
    ),
    rule(
        "weights_corrupt",
        Kind.STARTUP_FAILURE,
        r"SafetensorError|SafetensorHeaderError|Error while deserializing header|HeaderTooLarge|"
        r"MetadataIncompleteBuffer|invalid load key|PytorchStreamReader failed",
        hint=Msg("rule.weights_corrupt"),
        examples=("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",),
    ),
    rule(
        "max_model_len_invalid",
        Kind.STARTUP_FAILURE,
        r"User-specified max_model_len \(\d+\) is greater than|greater than the derived max_model_len",
        hint=Msg("rule.max_model_len_invalid"),
        examples=(
            "ValueError: User-specified max_model_len (200000) is greater than the derived max_model_len",
        ),
    ),
    rule(
        "bad_argument",
        Kind.STARTUP_FAILURE,
        r"error: unrecognized arguments:|error: argument --?[\w-]+|error: the following arguments are required",
        hint=Msg("rule.bad_argument"),
        examples=("api_server.py: error: unrecognized arguments: --enable-moe",),
    ),
    rule(
        "engine_start_timeout",
        Kind.STARTUP_FAILURE,
        r"Timed out waiting for engines? (?:core )?(?:processes )?to|Did not receive response from front-end",
        role="weak",
        hint=Msg("rule.engine_start_timeout"),
        examples=("TimeoutError: Timed out waiting for engines to send initial message on input socket.",),
    ),
    # A serving platform gives a container a start-up limit (Modal's runner, a deployment's readiness deadline):
    # vLLM still loading or compiling when it runs out is stopped from outside, with no error of its own.
    rule(
        "platform_start_timeout",
        Kind.STARTUP_FAILURE,
        r"\bhas been initiali[sz]ing for too long\b|"
        r"\b(?:failed to|did not|didn't) become (?:ready|healthy) (?:within|in|after|before)\b",
        hint=Msg("rule.platform_start_timeout"),
        examples=(
            "Runner failed with exception: Runner has been initializing for too long: 300 seconds",  # Modal #1154
            "Error: deployment vllm-server failed to become ready within 600s",
        ),
    ),
    rule(
        "heads_not_divisible_by_tp",
        Kind.STARTUP_FAILURE,
        # vLLM's check of --tensor-parallel-size against the model's attention heads: each GPU takes a whole share
        r"attention heads \(\d+\) must be divisible by tensor parallel size \(\d+\)",
        hint=Msg("rule.heads_not_divisible_by_tp"),
        examples=(  # fsdrive #21 as posted (a poster's quote, without its class); ilab #514 with it
            "Total number of attention heads (12) must be divisible by tensor parallel size (8).",
            "ValueError: Total number of attention heads (32) must be divisible by tensor parallel size (3)",
        ),
    ),
    rule(
        "quantization_argument_mismatch",
        Kind.STARTUP_FAILURE,
        # vLLM's own check: `--quantization` names another method than the checkpoint's config declares
        # (compressed-tensors checkpoints served with `--quantization fp8`); vLLM reads the method from the config
        r"Quantization method specified in the model config \([\w-]+\) does not match the quantization method "
        r"specified in the `?quantization`? argument",
        hint=Msg("rule.quantization_argument_mismatch"),
        examples=(  # neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8, discussion 3
            "Quantization method specified in the model config (compressed-tensors) does not match the quantization "
            "method specified in the `quantization` argument (fp8)",
        ),
    ),
    rule(
        "config_invalid",
        Kind.STARTUP_FAILURE,
        r"validation errors? for (?:ModelConfig|EngineArgs|VllmConfig|CacheConfig|SchedulerConfig|"
        r"ParallelConfig)|Error in inspecting model architecture",
        role="weak",
        hint=Msg("rule.config_invalid"),
        examples=("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",),
    ),
)
