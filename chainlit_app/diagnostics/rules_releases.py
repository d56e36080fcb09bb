"""Refusals that mean the vLLM in the log is another release than the model or the calling code expects.

Learnt from holdout rounds 10 and 19 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms10.py`,
`test_diagnosis_mechanisms19.py`). First
in the start-up tables, so that on a tie they win over the general `arch_unsupported` of `rules_model.py`.
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .known_architectures import KNOWN_ARCHITECTURES
from .newer_than_installed import MECHANISM_ID as MODEL_VERSION_ABOVE
from .newer_than_installed import PATTERN as MODEL_VERSION_REFUSAL
from .newer_than_installed import version_above_supported
from .rules import STARTING, Rule, rule
from .taxonomy import Kind
from .version_bound_flags import MECHANISM_ID as FLAG_OF_ANOTHER_RELEASE
from .version_bound_flags import refuses_flag_of_another_release

_KNOWN = "|".join(sorted(KNOWN_ARCHITECTURES, key=len, reverse=True))
# what Python calls a type, a typing construct or None in `unsupported operand type(s) for |` (never 'int', 'str')
_TYPING = r"(?:type|NoneType|TypeVar|types\.GenericAlias|[\w.]*(?:Alias|Meta|Metaclass|SpecialForm))"

RELEASE_RULES: tuple[Rule, ...] = (
    rule(
        "arch_in_later_release",
        Kind.VERSION_MISMATCH,
        # every listed architecture is one a current vLLM implements: this vLLM predates it
        rf"architectures? \[\s*'(?:{_KNOWN})'(?:\s*,\s*'(?:{_KNOWN})')*\s*\] (?:are|is) not supported",
        case=True,
        hint=Msg("rule.arch_unsupported"),
        examples=(
            # vLLM #6989: InternVL2-8B on vLLM 0.5.3.post1
            "ValueError: Model architectures ['InternVLChatModel'] are not supported for now. Supported "
            "architectures: ['AquilaModel', 'AquilaForCausalLM', 'BaiChuanForCausalLM']",
            # gpustack #996: DeepSeek-V3 on the vLLM GPUStack bundled
            "Model architectures ['DeepseekV3ForCausalLM'] are not supported for now.",
        ),
    ),
    rule(
        "plain_value_for_vllm_object",
        Kind.VERSION_MISMATCH,
        # vLLM's serving code reading an attribute of a plain str/dict/list the caller passed: code written
        # against another vLLM release, whose constructor took plain values (Ray Serve's example passing model
        # names where vLLM 0.6.6 expects BaseModelPath objects)
        r"'(?:str|dict|list|tuple)' object has no attribute '\w+'",
        exception_types=("AttributeError",),
        raised_in=("vllm/entrypoints/",),
        hint=Msg("exception.TypeError.version_mismatch"),
        examples=(
            # ray #50275 (ray 2.41, vllm 0.6.6.post1)
            "(ServeReplica:default:VLLMDeployment pid=1328933) AttributeError: 'str' object has no attribute "
            "'name'",
        ),
    ),
    # Another project's code (FastChat's vllm_worker, a plugin, a wrapper) reading an attribute a vLLM engine
    # class no longer has (`engine_attribute_removed`): written against another release of vLLM's Python API
    # (V1's AsyncLLM has no `.engine`, V0's AsyncLLMEngine had). An API change, not a fault of the engine.
    rule(
        "engine_attribute_removed",
        Kind.VERSION_MISMATCH,
        r"'(?:AsyncLLM|AsyncLLMEngine|LLMEngine|LLM|EngineClient|MQLLMEngineClient|AsyncMPClient|SyncMPClient|"
        r"EngineCoreClient|SamplingParams|RequestOutput|CompletionOutput|ModelConfig|VllmConfig|EngineArgs|"
        # the tokenizer wrappers and the scheduler's output that guided decoding and KV connectors read
        r"AsyncEngineArgs|TokenizerGroup|BaseTokenizerGroup|RayTokenizerGroupPool|SchedulerOutput|"
        r"CachedRequestData|NewRequestData|"
        # the OpenAI-compatible server's request objects, which KV-cache plugins (LMCache) read fields of
        r"CompletionRequest|ChatCompletionRequest)' object has no attribute '\w+'",
        exception_types=("AttributeError",),
        case=True,
        hint=Msg("exception.TypeError.version_mismatch"),
        examples=(
            # FastChat #3704 (FastChat's vllm_worker on vLLM 0.8's V1 engine)
            "2025-03-24 22:04:27 | ERROR | stderr | AttributeError: 'AsyncLLM' object has no attribute 'engine'",
            # dottxt-ai/outlines #576 (outlines.serve on vLLM built from main)
            "AttributeError: 'TokenizerGroup' object has no attribute 'get_vocab'",
            # vllm-project/production-stack #433 (an LMCache image whose vLLM lacks the field LMCache reads)
            "AttributeError: 'CompletionRequest' object has no attribute 'store_cache'",
        ),
    ),
    # A model's own tokenizer code (trust_remote_code) written for transformers < 4.34: newer transformers read
    # the vocabulary inside the base class's __init__, before that code has set its SentencePiece model (or
    # ChatGLM's inner tokenizer), so the attribute is missing however the model is served.
    rule(
        "remote_tokenizer_older_than_transformers",
        Kind.VERSION_MISMATCH,
        r"'\w*Tokenizer' object has no attribute 'sp_model'|'ChatGLMTokenizer' object has no attribute 'tokenizer'",
        exception_types=("AttributeError",),
        case=True,
        hint=Msg("rule.remote_tokenizer_older_than_transformers"),
        examples=(
            # baichuan-inc/Baichuan2 #204
            "AttributeError: 'BaichuanTokenizer' object has no attribute 'sp_model'",
        ),
    ),
    # transformers' own attribute errors (classes named `…AttributeError` in its modules) refuse the way a caller
    # reads its objects: the caller (vLLM reading a config) was written for another transformers release
    rule(
        "transformers_refuses_attribute",
        Kind.VERSION_MISMATCH,
        r"^\s*transformers\.[\w.]+AttributeError\b",
        case=True,
        hint=Msg("exception.TypeError.version_mismatch"),
        examples=(
            # vLLM #51744 (vLLM 0.27.0 with transformers 5.15.0, Gemma 4)
            "transformers.integrations.heterogeneity.configuration_utils.AmbiguousGlobalPerLayerAttributeError:",
        ),
    ),
    # A program that loads vLLM as a library (Dynamo's engine, a worker) failing to import it at all: the
    # packages installed beside it do not fit it (two vLLM builds in one environment, another torch)
    rule(
        "vllm_import_fails",
        Kind.VERSION_MISMATCH,
        r"\b(?:failed to|could not|cannot|unable to) import (?:the )?(?:python )?['\"]?vllm['\"]? (?:module|package)\b",
        hint=Msg("rule.vllm_import_fails"),
        examples=(
            # ai-dynamo/dynamo #441 (ai_dynamo_vllm 0.7.2 and vllm 0.7.3 both installed)
            "Error: task 20 panicked with message \"Failed to import python 'vllm' module. Are we running in the "
            "correct venv? AttributeError: class must define a '_type_' attribute\"",
        ),
    ),
    # argparse refusing a flag that some vLLM release (or a plugin of it) accepts: the command was written for
    # another release (`version_bound_flags.py` says why each flag comes and goes); a flag no release had stays
    # `bad_argument` (rules_model.py), which this rule precedes on the tie
    rule(
        FLAG_OF_ANOTHER_RELEASE,
        Kind.VERSION_MISMATCH,
        r"error: unrecognized arguments?:",
        check=refuses_flag_of_another_release,
        hint=Msg("rule.flag_of_another_release"),
        examples=(
            "vllm: error: unrecognized arguments: --enable-reasoning --reasoning-parser deepseek_r1",  # vLLM #18538
            "vllm: error: unrecognized arguments: --omni",  # vllm-omni #1364 (vllm 0.15.0, vllm-omni 0.14.0)
            "vllm: error: unrecognized arguments: --tool-server demo",  # recipes #20 (a ROCm dev image)
        ),
    ),
    # a model family's refusal of a version above every one this release implements: the model is newer than the
    # installed vLLM (`newer_than_installed.py`); a version below or between the listed ones stays a start-up failure
    rule(
        MODEL_VERSION_ABOVE,
        Kind.VERSION_MISMATCH,
        MODEL_VERSION_REFUSAL,
        check=version_above_supported,
        hint=Msg("rule.model_version_above_supported"),
        examples=(
            # vLLM #23955 (MiniCPM-V 4.5 on a nightly built before its support)
            "ERROR 08-29 13:40:25 [multiproc_executor.py:559] ValueError: Currently, MiniCPMV only supports "
            "versions 2.0, 2.5, 2.6, 4.0. Got version: (4, 5)",
            # MiniCPM-V-CookBook #7 (MiniCPM-V 4 on a release that printed no version)
            "ValueError: Currently, MiniCPMV only supports versions 2.0, 2.5, and 2.6",
        ),
    ),
    # pydantic refusing a field vLLM's configuration does not have (`extra_forbidden`) while the engine starts: the
    # config was written for another release (llm-compressor 0.9's `scale_dtype` / `zp_dtype` in a checkpoint's
    # quantization config, refused by vLLM 0.13's VllmConfig), or the field is misspelt; the line names the field.
    # Requests refused for an extra field while serving are not this.
    rule(
        "config_field_of_another_release",
        Kind.VERSION_MISMATCH,
        # pydantic's printed error: the field, then the message (on one line or the next); not a JSON error body
        r"^\s*(?:[\w.]+\s+)?Extra inputs are not permitted\b",
        phases=STARTING,
        hint=Msg("rule.config_field_of_another_release"),
        examples=(
            # vllm-project/llm-compressor #2234 (a checkpoint made with llm-compressor 0.9.0 on vLLM 0.13.0)
            "scale_dtype  Extra inputs are not permitted",
        ),
    ),
    # argparse refusing a parser name: each release adds tool-call and reasoning parsers per model family, and the
    # name comes from the model's instructions, so a name this vLLM lacks is one a later release added (GLM-4.5's
    # `glm45` on vLLM 0.10.0, added in 0.10.1). Other choice lists (load formats, dtypes) stay `bad_argument`.
    # Releases that check the name themselves say it in their own words, as a KeyError ("chose" in 0.9.2).
    rule(
        "parser_of_a_later_release",
        Kind.VERSION_MISMATCH,
        r"error: argument --(?:tool-call|reasoning)-parser: invalid choice:|"
        r"\binvalid (?:tool call|reasoning) parser: \S+ \(choo?se from\b",
        hint=Msg("rule.parser_of_a_later_release"),
        examples=(
            # zai-org/GLM-4.5 #54 (vLLM 0.10.0)
            "vllm serve: error: argument --tool-call-parser: invalid choice: 'glm45' (choose from 'deepseek_v3', "
            "'glm4_moe', 'granite-20b-fc', 'granite', 'hermes')",
            # MoonshotAI/Kimi-K2 #19 (vLLM 0.9.2; kimi_k2 came in the next release)
            "KeyError: 'invalid tool call parser: kimi_k2 (chose from { deepseek_v3,granite-20b-fc,granite,hermes })'",
        ),
    ),
    # torch.fx refusing to remove a node other nodes still use: a compile pass rewriting the model's graph met a
    # graph it was not written for (a torch other than the one this vLLM pins, or model code another library
    # patched: unsloth on vLLM 0.19, fixed by 0.18 or by --enforce-eager). Only vLLM's compilation rewrites graphs.
    rule(
        "compile_pass_breaks_graph",
        Kind.VERSION_MISMATCH,
        r"Tried to erase Node \S+ but it still had \d+ users in the graph",
        case=True,
        hint=Msg("rule.compile_pass_breaks_graph"),
        examples=(
            # unslothai/unsloth #4841 (vLLM 0.19 with fast_inference)
            "RuntimeError: Tried to erase Node size_1 but it still had 2 users in the graph: {getitem_3: None, "
            "getitem_4: None}!",
        ),
    ),
    # vLLM's Transformers backend (the fallback for a model it has no implementation of) refusing a feature it
    # does not have "yet": later releases add the feature to the backend, and native implementations of the
    # models that needed the fallback, so the installed vLLM predates what the command asks for
    # vLLM's own check that transformers built the config class vLLM registered for the model: another class (a
    # transformers 5 `…TextConfig` where this vLLM expects its own `…Config`) is a transformers release this vLLM
    # was not written for
    rule(
        "hf_config_class_of_another_release",
        Kind.VERSION_MISMATCH,
        r"\bInvalid type of HuggingFace config\b",
        hint=Msg("exception.TypeError.version_mismatch"),
        examples=("TypeError: Invalid type of HuggingFace config.",),  # vLLM #36236 (transformers 5.3, vLLM 0.17)
    ),
    # tokenizer attributes transformers 5 removed, read by vLLM releases written for transformers 4
    rule(
        "tokenizer_attribute_removed_in_transformers5",
        Kind.VERSION_MISMATCH,
        r"\b\w*Tokenizer\w* has no attribute '?(?:all_special_tokens_extended|special_tokens_map_extended)\b",
        hint=Msg("exception.TypeError.version_mismatch"),
        examples=(
            # rllm #388
            "(APIServer pid=98439) AttributeError: Qwen2Tokenizer has no attribute all_special_tokens_extended. "
            "Did you mean: 'num_special_tokens_to_add'?",
        ),
    ),
    rule(
        "transformers_backend_lacks_feature",
        Kind.VERSION_MISMATCH,
        r"Transformers\w*(?: backend| implementation)? does not support [\w /-]{1,40} yet",
        hint=Msg("rule.transformers_backend_lacks_feature"),
        examples=(
            # J1-micro #1 (Qwen3 on vLLM 0.7.2, falling back to Transformers, with LoRA enabled)
            "ERROR 06-01 22:29:41 engine.py:389] TransformersModel does not support LoRA yet.",
        ),
    ),
    # A model's `rope_scaling` written for a newer vLLM or transformers than the installed one (Llama 3.1's
    # `rope_type: llama3`, Qwen2-VL's `mrope`): the older code checks the fields it knew and refuses the rest.
    rule(
        "rope_scaling_of_a_newer_model",
        Kind.VERSION_MISMATCH,
        r"\bassert [\"']factor[\"'] in rope_scaling\b|"
        r"`rope_scaling` must be a dictionary with (?:two|with) fields|"
        r"\bUnknown RoPE scaling type\b",
        in_frames=True,  # the failing check is often only the code line above a bare `AssertionError`
        hint=Msg("rule.rope_scaling_of_a_newer_model"),
        examples=(
            '    assert "factor" in rope_scaling',  # QwenLM/Qwen3-VL #123 (Qwen2-VL on an older vLLM)
            "ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got {'factor': "
            "8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192, "
            "'rope_type': 'llama3'}",
        ),
    ),
    # vLLM reads its own version from the installed distribution named `vllm`; a fork's wheel under another
    # name (vllm-pascal, a platform's build) or a source tree run without installing leaves it unknown, and the
    # platform detection that depends on it fails. Weak: it explains a start-up failure beside it (whole_log.py).
    rule(
        "vllm_distribution_unnamed",
        Kind.VERSION_MISMATCH,
        r"The vLLM package was not found, so its version could not be inspected",
        role="weak",
        hint=Msg("rule.vllm_distribution_unnamed"),
        examples=(
            # sasha0552/pascal-pkgs-ci #51 (vllm-pascal 0.8.5.post1)
            "WARNING 05-10 03:15:22 [__init__.py:25] The vLLM package was not found, so its version could not be "
            "inspected. This may cause platform detection to fail.",
        ),
    ),
    # Python imported the user's own file or folder instead of the package (`vllm.py` next to the script):
    # no release is wrong, the name is taken.
    rule(
        "module_shadowed_by_a_file",
        Kind.STARTUP_FAILURE,
        r"No module named '[\w.]+'; '[\w.]+' is not a package",
        hint=Msg("rule.module_shadowed_by_a_file"),
        examples=(
            # modal-labs/modal-examples #546 (a script saved as vllm.py)
            "ModuleNotFoundError: No module named 'vllm.engine'; 'vllm' is not a package",
        ),
    ),
    # Sampling and request parameters vLLM removed (beam search's, `best_of` in V1, the guided_* fields that became
    # `structured_outputs`, prompt adapters): a program still passing one was written for an older vLLM,
    # whenever it passes it (ms-swift #6947: every chat request failed with a 400 naming `best_of`).
    rule(
        "parameter_vllm_removed",
        Kind.VERSION_MISMATCH,
        # "nexpected": Python's "got an unexpected keyword argument" and an error body's "Unexpected keyword argument"
        r"nexpected keyword argument ['\"](?:best_of|use_beam_search|length_penalty|early_stopping|"
        r"prompt_adapter_request|guided_decoding|guided_options_request|guided_(?:json|regex|choice|grammar))['\"]",
        hint=Msg("rule.parameter_vllm_removed"),
        examples=(
            """Error code: 400 - {'message': "Unexpected keyword argument 'best_of'", 'object': 'error'}""",
            "TypeError: SamplingParams.__init__() got an unexpected keyword argument 'use_beam_search'",
        ),
    ),
    # vLLM's Transformers backend builds the model from the installed transformers' own classes: a checkpoint
    # weight it has no parameter for means that transformers implements another revision of the architecture
    # (swiss-ai/Apertus-8B-Instruct-2509 discussion 8: xIELU's `beta`, fixed by a newer transformers and vLLM).
    # vLLM's native classes give the same words for checkpoints with extra weights: not read here.
    rule(
        "transformers_backend_lacks_weight",
        Kind.VERSION_MISMATCH,
        r"There is no module or parameter named '[^']+' in Transformers\w*",
        hint=Msg("rule.transformers_backend_lacks_weight"),
        phases=STARTING,
        examples=(
            "ValueError: There is no module or parameter named 'model.layers.10.mlp.act_fn.beta' in "
            "TransformersForCausalLM",
        ),
    ),
    # vLLM's V1 engine (the default from 0.8) refusing what a caller built for V0 asks of it, at start or per
    # request (outlines #1517: outlines 0.1's per-request logits processors on vLLM 0.8.2). The V1 words of a
    # harmless fallback (`... is not supported by the V1 Engine. Falling back to V0.`) do not match.
    rule(
        "v1_engine_lacks_feature",
        Kind.VERSION_MISMATCH,
        r"\bV1 (?:engine )?(?:does not|doesn't|do not) (?:yet )?support\b|\bVLLM_USE_V1=1 is not supported with\b",
        hint=Msg("rule.v1_engine_lacks_feature"),
        examples=(
            "ValueError: vLLM V1 does not support per request user provided logits processors.",
        ),
    ),
    # A package written for a newer Python than the one running it, failing as it is imported (at start-up, or when a
    # request first needs it: xgrammar): a builtin or standard-library type subscripted in an annotation
    # (`array.array[int]` needs Python 3.12, `list[int]` 3.9; their names are lower case, a project's classes are not:
    # `type 'Hermes2ProToolParser' is not subscriptable` is that project's bug) or annotations joined by `|` (3.10;
    # `List[int] | None`, `Any | None`, `None | int`, a pydantic model's class). Read with or without the class (the
    # words are Python's own), on an error's line or a bare one, never on a warning that went on without the
    # package. Round 62: flashinfer's `fd_exchange.py` under Python 3.11, imported by vLLM 0.27.1's warm-up.
    rule(
        "python_older_than_package",
        Kind.VERSION_MISMATCH,
        r"\btype '(?:[a-z_][a-z0-9_]*\.)*[a-z_][a-z0-9_]*' is not subscriptable|"
        rf"unsupported operand type\(s\) for \|: (?!'NoneType' and 'NoneType')'{_TYPING}' and '{_TYPING}'",
        case=True,
        levels=("", "ERROR", "CRITICAL"),
        hint=Msg("rule.python_older_than_package"),
        examples=(
            "(EngineCore pid=1632893) ERROR 08-12 04:47:25 [core.py:1349] TypeError: type 'array.array' is not "
            "subscriptable",
            "TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'",
            "TypeError: unsupported operand type(s) for |: '_GenericAlias' and 'NoneType'",
        ),
    ),
    # Python 3.8's words for any class subscripted (`list[int]` among them): at start-up, as a package is imported,
    # an annotation; while serving, any code's bug.
    rule(
        "python_older_than_package_38",
        Kind.VERSION_MISMATCH,
        r"'type' object is not subscriptable",
        case=True,
        phases=STARTING,
        levels=("", "ERROR", "CRITICAL"),
        hint=Msg("rule.python_older_than_package"),
        examples=("TypeError: 'type' object is not subscriptable",),
    ),
)
