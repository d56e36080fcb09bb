"""Start-up rules about the model: where it comes from, its files, its configuration, vLLM's arguments.

Data only: see `rules.py` for what the fields mean and how the winner is chosen. These rules come first
in the table (`rule_tables.py`): model source problems look like network/auth errors and must precede
those rules.
"""

from __future__ import annotations

from .rules import Rule, rule
from .taxonomy import Kind

MODEL_RULES: tuple[Rule, ...] = (
    rule(
        "hf_gated",
        Kind.STARTUP_FAILURE,
        r"401 Client Error.*(?:huggingface|hf\.co)|GatedRepoError|Cannot access gated repo|gated repo|"
        r"Access to model \S+ is restricted",
        hint="The model is gated or private on Hugging Face: accept its licence and give vLLM an HF_TOKEN.",
        examples=(
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url",
        ),
    ),
    rule(
        "hf_offline",
        Kind.STARTUP_FAILURE,
        r"LocalEntryNotFoundError|couldn't connect to '?https://huggingface\.co|"
        r"Cannot find the requested files in the (?:disk )?cache|"
        r"host='(?:[\w-]+\.)*(?:huggingface\.co|hf\.co|hf-mirror\.com)'|OfflineModeIsEnabled",
        hint="The model could not be downloaded (no network or offline mode): "
        "fetch it first or set CHAT_MODEL to a local folder.",
        examples=(
            "HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /api/x",
        ),
    ),
    rule(
        "hf_repo_missing",
        Kind.STARTUP_FAILURE,
        r"RepositoryNotFoundError|Repository Not Found for url|"
        r"is not a local folder and is not a valid model identifier|Invalid repository ID or local directory|"
        # ModelScope's hub (VLLM_USE_MODELSCOPE) answers an unknown model id in these words
        r"The request model:? \S+ does not exist",
        hint="CHAT_MODEL is neither an existing local folder nor a hub repository: fix the path or the id.",
        examples=(
            "OSError: foo/bar is not a local folder and is not a valid model identifier listed on",
            "requests.exceptions.HTTPError: The request model: jarvis_vla_qwen2_vl_7b_sft does not exist!",
        ),
    ),
    rule(
        "hf_validation",
        Kind.STARTUP_FAILURE,
        r"HFValidationError|Repo id must be in the form",
        hint="The model path does not exist on this machine, so it was taken for a hub id: fix CHAT_MODEL.",
        examples=(
            "huggingface_hub.errors.HFValidationError: "
            "Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/path/does-not-exist'.",
        ),
    ),
    rule(
        "arch_unsupported",
        Kind.STARTUP_FAILURE,
        r"architectures? \[[^\]]*\] (?:are|is) not supported|are not supported for now|"
        r"architectures? \[[^\]]*\] failed to be inspected|unknown model architecture",
        hint="vLLM has no implementation of config.json's `architectures`: upgrade vLLM or serve a supported model.",
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
        r"does not recognize this architecture",
        hint="The installed transformers does not know this model_type: "
        "upgrade transformers in the engine venv (or vLLM, which pins it); if model_type in config.json is a typo, "
        "fix it.",
        examples=(
            "Value error, "
            "The checkpoint you are trying to load has model type `glm4v_moe` but Transformers does not recognize this architecture.",  # noqa: E501
        ),
    ),
    rule(
        "model_type_unknown",
        Kind.STARTUP_FAILURE,
        r"Unrecognized model in|Should have a `model_type` key|Error parsing config for",
        hint="config.json's model_type is unknown to the installed transformers: "
        "fix config.json or upgrade transformers in the engine venv.",
        examples=(
            "Error parsing config for DIR: The checkpoint you are trying to load has model type `foobar`",
        ),
    ),
    rule(
        "tokenizer_missing",
        Kind.STARTUP_FAILURE,
        r"Couldn't instantiate the backend tokenizer|Can't load tokenizer|Tokenizer class \w+ does not exist",
        hint="The tokenizer files are missing or unreadable: "
        "copy tokenizer.json and tokenizer_config.json from the model repository.",
        examples=("ValueError: Couldn't instantiate the backend tokenizer from one of:",),
    ),
    rule(
        "model_files_missing",
        Kind.STARTUP_FAILURE,
        r"does not appear to have a file named|Can't load (?:the )?config|No model weights found|"
        r"Cannot find any model weights|No such file or directory.{0,200}(?:config\.json|\.safetensors|"
        r"tokenizer)|"
        r"FileNotFoundError.{0,200}(?:config\.json|\.safetensors|tokenizer)",
        hint="A model file is missing: the folder needs config.json, the weights and the tokenizer files.",
        examples=("OSError: /models/x does not appear to have a file named config.json.",),
    ),
    rule(
        "weights_corrupt",
        Kind.STARTUP_FAILURE,
        r"SafetensorError|SafetensorHeaderError|Error while deserializing header|HeaderTooLarge|"
        r"MetadataIncompleteBuffer|invalid load key|PytorchStreamReader failed",
        hint="A weight file is corrupt, truncated or only a Git LFS pointer: download it again.",
        examples=("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",),
    ),
    rule(
        "max_model_len_invalid",
        Kind.STARTUP_FAILURE,
        r"User-specified max_model_len \(\d+\) is greater than|greater than the derived max_model_len",
        hint="--max-model-len is larger than the model's max_position_embeddings: lower CHAT_MAX_MODEL_LEN.",
        examples=(
            "ValueError: User-specified max_model_len (200000) is greater than the derived max_model_len",
        ),
    ),
    rule(
        "bad_argument",
        Kind.STARTUP_FAILURE,
        r"error: unrecognized arguments:|error: argument --?[\w-]+|error: the following arguments are required",
        hint="vLLM rejected a command-line argument: "
        "compare the flags with `python -m vllm.entrypoints.openai.api_server --help`.",
        examples=("api_server.py: error: unrecognized arguments: --enable-moe",),
    ),
    rule(
        "engine_start_timeout",
        Kind.STARTUP_FAILURE,
        r"Timed out waiting for engines? (?:core )?(?:processes )?to|Did not receive response from front-end",
        role="weak",
        hint="The engine process never reported ready: look above for its error, or for a hang while loading.",
        examples=("TimeoutError: Timed out waiting for engines to send initial message on input socket.",),
    ),
    rule(
        "config_invalid",
        Kind.STARTUP_FAILURE,
        r"validation errors? for (?:ModelConfig|EngineArgs|VllmConfig|CacheConfig|SchedulerConfig|"
        r"ParallelConfig)|Error in inspecting model architecture",
        role="weak",
        hint="vLLM rejected the model or engine configuration: the next lines say which value.",
        examples=("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",),
    ),
)
