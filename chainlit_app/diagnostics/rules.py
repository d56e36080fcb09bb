"""Line rules: which log line means which failure, and how much it says about the root cause.

vLLM logs mix many formats (V1 process prefixes, V0 `INFO 01-21 ... file.py:70]`, uvicorn access
lines, Python tracebacks, docker/CI prefixes, client tracebacks). `parse_line` removes those prefixes
so one set of message patterns serves all of them.

Each rule has a role:
  decisive - the line names a cause (the earliest one is the root cause of a log);
  weak     - a symptom that decides only when no decisive line exists;
  wrapper  - a consequence such as "Engine core initialization failed. See root cause above":
             it never outranks a cause and only labels a log in which nothing else was found.
Rules are tried in order and the first match wins, so specific rules come before general ones.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Literal

from .taxonomy import Kind

Role = Literal["decisive", "weak", "wrapper"]


@dataclass(frozen=True)
class Rule:
    """One message pattern. `needles` are lower-case literals taken from the pattern itself, one per
    top-level alternative, so any matching line contains at least one of them; they feed the cheap
    pre-filter that lets ordinary INFO lines through without running the regular expressions."""

    id: str
    kind: Kind
    pattern: re.Pattern[str]
    needles: tuple[str, ...]
    role: Role = "decisive"
    hint: str = ""
    ready_kind: Kind | None = None  # wrappers only: the kind once the server had been serving
    in_frames: bool = False  # may match traceback frame/code lines (all others skip them)
    examples: tuple[str, ...] = ()


_SPECIAL = set("()[]{}.^$*+?|")


def _class_end(regex: str, i: int) -> int:
    """Index just after the character class that starts at regex[i] == '['."""
    j = i + 1
    if j < len(regex) and regex[j] == "^":
        j += 1
    if j < len(regex) and regex[j] == "]":
        j += 1
    while j < len(regex) and regex[j] != "]":
        j += 2 if regex[j] == "\\" else 1
    return j + 1


def _split_top(regex: str) -> list[str]:
    """Split a pattern at its top-level '|' (not inside groups or classes)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(regex, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(regex[start:i])
            start = i + 1
        i += 1
    parts.append(regex[start:])
    return parts


def _longest_literal(branch: str) -> str:
    """Longest run of characters that every match of `branch` must contain (groups, classes and
    quantified characters end a run, so the result is conservative)."""
    runs, run, i, depth = [], "", 0, 0
    while i < len(branch):
        ch = branch[i]
        nxt = branch[i + 1] if i + 1 < len(branch) else ""
        literal: str | None = None
        if depth:
            if ch == "\\":
                i += 2
                continue
            if ch == "[":
                i = _class_end(branch, i)
                continue
            depth += {"(": 1, ")": -1}.get(ch, 0)
            i += 1
            if depth:
                continue
        elif ch == "\\":
            literal = nxt if nxt and not nxt.isalnum() else None
            i += 2
        elif ch == "[":
            i = _class_end(branch, i)
        elif ch == "{":
            i = branch.find("}", i) + 1 or len(branch)
        elif ch == "(":
            depth = 1
            i += 1
        elif ch in _SPECIAL:
            i += 1
        else:
            literal = ch
            i += 1
        quantified = i < len(branch) and branch[i] in "?*+{"
        if literal is not None and not quantified:
            run += literal
        else:
            runs.append(run)
            run = ""
    runs.append(run)
    return max(runs, key=len).lower()


def literal_needles(regex: str) -> tuple[str, ...]:
    """One lower-case literal per top-level alternative; empty when an alternative has no literal of
    at least 3 characters (or one non-ASCII character): such a rule could not be pre-filtered, and a
    test forbids it."""
    needles = [_longest_literal(b) for b in _split_top(regex)]
    if any(len(n) < 3 and (not n or n.isascii()) for n in needles):
        return ()
    return tuple(dict.fromkeys(needles))


def _rule(
    rule_id: str,
    kind: Kind,
    regex: str,
    *,
    role: Role = "decisive",
    hint: str = "",
    ready_kind: Kind | None = None,
    in_frames: bool = False,
    case: bool = False,
    examples: tuple[str, ...] = (),
) -> Rule:
    flags = 0 if case else re.IGNORECASE
    return Rule(
        rule_id,
        kind,
        re.compile(regex, flags),
        literal_needles(regex),
        role,
        hint,
        ready_kind,
        in_frames,
        examples,
    )


K = Kind

RULES: tuple[Rule, ...] = (
    # --- model source problems that look like network/auth errors: must precede those rules ---
    _rule(
        "hf_gated",
        K.STARTUP_FAILURE,
        r"401 Client Error.*(?:huggingface|hf\.co)|GatedRepoError|Cannot access gated repo|gated repo|"
        r"Access to model \S+ is restricted",
        hint="The model is gated or private on Hugging Face: accept its licence and give vLLM an HF_TOKEN.",
        examples=(
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url",
        ),
    ),
    _rule(
        "hf_offline",
        K.STARTUP_FAILURE,
        r"LocalEntryNotFoundError|couldn't connect to '?https://huggingface\.co|"
        r"Cannot find the requested files in the (?:disk )?cache|"
        r"host='(?:[\w-]+\.)*(?:huggingface\.co|hf\.co|hf-mirror\.com)'|OfflineModeIsEnabled",
        hint="The model could not be downloaded (no network or offline mode): fetch it first or set "
        "CHAT_MODEL "
        "to a local folder.",
        examples=(
            "HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /api/x",
        ),
    ),
    _rule(
        "hf_repo_missing",
        K.STARTUP_FAILURE,
        r"RepositoryNotFoundError|Repository Not Found for url|is not a local folder and is not a valid "
        r"model "
        r"identifier|Invalid repository ID or local directory",
        hint="CHAT_MODEL is neither an existing local folder nor a hub repository: fix the path or the id.",
        examples=("OSError: foo/bar is not a local folder and is not a valid model identifier listed on",),
    ),
    _rule(
        "hf_validation",
        K.STARTUP_FAILURE,
        r"HFValidationError|Repo id must be in the form",
        hint="The model path does not exist on this machine, so it was taken for a hub id: fix CHAT_MODEL.",
        examples=(
            "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or "
            "'namespace/repo_name': '/path/does-not-exist'.",
        ),
    ),
    _rule(
        "arch_unsupported",
        K.STARTUP_FAILURE,
        r"architectures? \[[^\]]*\] (?:are|is) not supported|are not supported for now",
        hint="vLLM has no implementation of config.json's `architectures`: upgrade vLLM or serve a supported "
        "model.",
        examples=("Value error, Model architectures ['FooBarForCausalLM'] are not supported for now.",),
    ),
    _rule(
        "model_type_unknown",
        K.STARTUP_FAILURE,
        r"has model type [`'\"]?[\w.-]+[`'\"]? but Transformers does not recognize|does not recognize this "
        r"architecture|Unrecognized model in|Should have a `model_type` key|Error parsing config for",
        hint="config.json's model_type is unknown to the installed transformers: fix config.json or upgrade "
        "transformers in the engine venv.",
        examples=(
            "Error parsing config for DIR: The checkpoint you are trying to load has model type `foobar`",
        ),
    ),
    _rule(
        "tokenizer_missing",
        K.STARTUP_FAILURE,
        r"Couldn't instantiate the backend tokenizer|Can't load tokenizer|Tokenizer class \w+ does not exist",
        hint="The tokenizer files are missing or unreadable: copy tokenizer.json and tokenizer_config.json "
        "from "
        "the model repository.",
        examples=("ValueError: Couldn't instantiate the backend tokenizer from one of:",),
    ),
    _rule(
        "model_files_missing",
        K.STARTUP_FAILURE,
        r"does not appear to have a file named|Can't load (?:the )?config|No model weights found|"
        r"Cannot find any model weights|No such file or directory.{0,200}(?:config\.json|\.safetensors|"
        r"tokenizer)|"
        r"FileNotFoundError.{0,200}(?:config\.json|\.safetensors|tokenizer)",
        hint="A model file is missing: the folder needs config.json, the weights and the tokenizer files.",
        examples=("OSError: /models/x does not appear to have a file named config.json.",),
    ),
    _rule(
        "weights_corrupt",
        K.STARTUP_FAILURE,
        r"SafetensorError|SafetensorHeaderError|Error while deserializing header|HeaderTooLarge|"
        r"MetadataIncompleteBuffer|invalid load key|PytorchStreamReader failed",
        hint="A weight file is corrupt, truncated or only a Git LFS pointer: download it again.",
        examples=("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",),
    ),
    _rule(
        "max_model_len_invalid",
        K.STARTUP_FAILURE,
        r"User-specified max_model_len \(\d+\) is greater than|greater than the derived max_model_len",
        hint="--max-model-len is larger than the model's max_position_embeddings: lower CHAT_MAX_MODEL_LEN.",
        examples=(
            "ValueError: User-specified max_model_len (200000) is greater than the derived max_model_len",
        ),
    ),
    _rule(
        "bad_argument",
        K.STARTUP_FAILURE,
        r"error: unrecognized arguments:|error: argument --?[\w-]+|error: the following arguments are "
        r"required",
        hint="vLLM rejected a command-line argument: compare the flags with `python -m "
        "vllm.entrypoints.openai.api_server --help`.",
        examples=("api_server.py: error: unrecognized arguments: --enable-moe",),
    ),
    _rule(
        "engine_start_timeout",
        K.STARTUP_FAILURE,
        r"Timed out waiting for engines? (?:core )?(?:processes )?to|Did not receive response from front-end",
        role="weak",
        hint="The engine process never reported ready: look above for its error, or for a hang while "
        "loading.",
        examples=("TimeoutError: Timed out waiting for engines to send initial message on input socket.",),
    ),
    _rule(
        "config_invalid",
        K.STARTUP_FAILURE,
        r"validation errors? for (?:ModelConfig|EngineArgs|VllmConfig|CacheConfig|SchedulerConfig|"
        r"ParallelConfig)|Error in inspecting model architecture",
        role="weak",
        hint="vLLM rejected the model or engine configuration: the next lines say which value.",
        examples=("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",),
    ),
    # --- memory ---
    _rule(
        "kv_cache_too_small",
        K.OUT_OF_MEMORY,
        r"max seq len \(\d+\) is larger than the maximum number of tokens that can be stored in KV cache|"
        r"larger than the available KV cache memory|estimated maximum model length is",
        hint="The KV cache cannot hold one max-length sequence: lower CHAT_MAX_MODEL_LEN or give the cache "
        "more memory (--gpu-memory-utilization, VLLM_CPU_KVCACHE_SPACE).",
        examples=(
            "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can "
            "be "
            "stored in KV cache (3664).",
        ),
    ),
    _rule(
        "no_cache_blocks",
        K.OUT_OF_MEMORY,
        r"No available memory for the cache blocks|# GPU blocks: 0\b|KV cache size: 0 tokens|"
        r"Insufficient memory for (?:the )?KV cache|not enough (?:memory|space) for (?:the )?KV cache",
        hint="Nothing is left for the KV cache after loading the weights: raise --gpu-memory-utilization "
        "(GPU) "
        "or VLLM_CPU_KVCACHE_SPACE (CPU), or serve a smaller model.",
        examples=(
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`",
        ),
    ),
    _rule(
        "gpu_oom",
        K.OUT_OF_MEMORY,
        r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|HIP out of memory|"
        r"out of memory on device|CUBLAS_STATUS_ALLOC_FAILED",
        hint="The GPU ran out of memory: stop other GPU processes or lower --gpu-memory-utilization, "
        "--max-model-len or --max-num-seqs.",
        examples=("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.63 GiB",),
    ),
    _rule(
        "host_oom",
        K.OUT_OF_MEMORY,
        r"Cannot allocate memory|\[Errno 12\]|std::bad_alloc|(?:^|\s)MemoryError\b|"
        r"DefaultCPUAllocator: (?:can't|not enough memory)|not enough memory: you tried to allocate",
        hint="The machine ran out of RAM: lower VLLM_CPU_KVCACHE_SPACE (CHAT_KV_CACHE_GIB) or the model "
        "size, "
        "or free memory.",
        examples=("RuntimeError: unable to mmap 16933256392 bytes from file: Cannot allocate memory (12)",),
    ),
    _rule(
        "oom_killer",
        K.OUT_OF_MEMORY,
        r"Out of memory: Killed process|oom-kill|invoked oom-killer|oom_reaper|OOMKilled|"
        r"(?:killed )?by (?:the )?OOM killer",
        hint="The kernel's OOM killer ended vLLM: reduce KV cache, --max-num-seqs or model size, or add RAM.",
        examples=("Out of memory: Killed process 4242 (python) total-vm:30000000kB",),
    ),
    _rule(
        "killed",
        K.OUT_OF_MEMORY,
        r"^\s*Killed\s*$|\d+\s+Killed\s+\S*(?:python|vllm)",
        role="weak",
        case=True,
        hint="The process received SIGKILL, usually from the OOM killer: check `dmesg | grep -i oom`.",
        examples=("Killed", "./serve.sh: line 3:  4242 Killed                  python -m vllm.entrypoints"),
    ),
    # --- port ---
    _rule(
        "port_in_use",
        K.PORT_IN_USE,
        r"\[Errno 98\]|\[WinError 10048\]|EADDRINUSE|address already in use|"
        r"error while attempting to bind on address",
        hint="Another process holds the port: stop it (`ss -ltnp | grep :PORT`) or set CHAT_PORT to a free "
        "port.",
        examples=("OSError: [Errno 98] Address already in use",),
    ),
    # --- builds that do not fit together ---
    _rule(
        "undefined_symbol",
        K.VERSION_MISMATCH,
        r"undefined symbol",
        hint="Compiled kernels do not match the installed torch: reinstall vllm with its pinned torch in a "
        "fresh venv.",
        examples=(
            "ImportError: /x/vllm/_C.abi3.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
        ),
    ),
    _rule(
        "no_kernel_image",
        K.VERSION_MISMATCH,
        r"no kernel image is available|CUDA error: invalid device function|"
        r"not compatible with the current PyTorch installation",
        hint="This build has no kernels for this GPU: install a vLLM/torch build made for its architecture.",
        examples=("RuntimeError: CUDA error: no kernel image is available for execution on the device",),
    ),
    _rule(
        "driver_too_old",
        K.VERSION_MISMATCH,
        r"NVIDIA driver on your system is too old|CUDA driver version is insufficient|"
        r"forward compatibility was attempted on non supported HW|Found no NVIDIA driver|"
        r"Failed to infer device type|No CUDA GPUs are available|Torch not compiled with CUDA enabled|"
        r"No platform detected, vLLM is running on UnspecifiedPlatform",
        hint="The CUDA build does not fit this machine's driver or hardware: update the NVIDIA driver, or on "
        "a "
        "CPU-only machine install vllm-cpu.",
        examples=(
            "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found 11040).",
        ),
    ),
    _rule(
        "cpu_attention_unsupported",
        K.VERSION_MISMATCH,
        r"Unsupported CPU attention configuration",
        hint="This vLLM CPU build has no attention kernel for the model's head_dim: serve a model with a "
        "supported head size (e.g. 64 or 128).",
        examples=("RuntimeError: Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0",),
    ),
    _rule(
        "torch_extension_mismatch",
        K.VERSION_MISMATCH,
        r"operator [\w:]+ does not exist|Could not load this library: \S*(?:torchaudio|torchvision|"
        r"torchcodec)",
        hint="CUDA builds of torchvision/torchaudio/torchcodec sit next to a CPU torch: "
        "`pip uninstall -y torchvision torchaudio torchcodec triton` in the engine venv.",
        examples=("RuntimeError: operator torchvision::nms does not exist",),
    ),
    _rule(
        "glibc_mismatch",
        K.VERSION_MISMATCH,
        r"GLIBC(?:XX)?_[\d.]+['`]? not found",
        hint="The binary wheel needs a newer C library than this system has: use a newer OS image or build.",
        examples=("ImportError: /lib64/libc.so.6: version `GLIBC_2.32' not found",),
    ),
    _rule(
        "vllm_dist_missing",
        K.VERSION_MISMATCH,
        r"No package metadata was found for vllm",
        hint="vllm-cpu's `vllm serve` entry point cannot find the 'vllm' distribution: start the server with "
        "`python -m vllm.entrypoints.openai.api_server` instead.",
        examples=("importlib.metadata.PackageNotFoundError: No package metadata was found for vllm",),
    ),
    _rule(
        "vllm_c_import",
        K.VERSION_MISMATCH,
        r"Failed to import from vllm\._C|No module named ['\"]?vllm\._C|vllm/_C[\w.]*\.so",
        role="weak",
        hint="vLLM's compiled extension did not load: on a CPU-only machine install vllm-cpu, elsewhere "
        "reinstall vllm for this torch and CUDA.",
        examples=(
            "WARNING 10-10 10:22:05 _custom_ops.py:18] Failed to import from vllm._C with ImportError",
        ),
    ),
    _rule(
        "cuda_error",
        K.VERSION_MISMATCH,
        r"CUDA error:|CUDA kernel errors might be asynchronously reported|CUBLAS_STATUS_|cudaError\w+",
        role="weak",
        hint="A CUDA call failed: check that driver, CUDA build and vLLM belong together; rerun with "
        "CUDA_LAUNCH_BLOCKING=1 to see where.",
        examples=("RuntimeError: CUDA error: an illegal memory access was encountered",),
    ),
    # --- request-level errors ---
    _rule(
        "model_does_not_exist",
        K.MODEL_NOT_FOUND,
        r"The model [`'\"].{0,300}?[`'\"] does not exist|The request model:? \S+ does not exist|"
        r"\bmodel [`'\"][^`'\"]+[`'\"] not found",
        hint="The request names a model this server does not serve: set CHAT_SERVED_MODEL_NAME to vLLM's "
        "--served-model-name (see GET /v1/models).",
        examples=(
            "The model `gpt-4` does not exist. Valid aliases: tiny.",
            "The model `<img src=\"x\" onerror='a'>` does not exist. Valid aliases: tiny.",
        ),
    ),
    _rule(
        "not_found_error",
        K.MODEL_NOT_FOUND,
        r"NotFoundError: Error code: 404|openai\.NotFoundError|Error code: 404\b",
        hint="The server answered 404: the model name or the base URL (CHAT_VLLM_URL, must end with /v1) is "
        "wrong.",
        examples=("openai.NotFoundError: Error code: 404 - {'detail': 'Not Found'}",),
    ),
    _rule(
        "access_404_completion",
        K.MODEL_NOT_FOUND,
        r"\"(?:POST|GET) /v1/(?:chat/completions|completions|responses|embeddings)\S* HTTP/[\d.]+\" 404\b",
        hint="404 on a completion endpoint: the request's model name is not served; compare "
        "CHAT_SERVED_MODEL_NAME with --served-model-name.",
        examples=('INFO:     127.0.0.1:5555 - "POST /v1/chat/completions HTTP/1.1" 404 Not Found',),
    ),
    _rule(
        "access_404_route",
        K.CONNECTION,
        r"\"(?:POST|GET|PUT) (?:/v1\S*|/generate\S*|\S*/completions\S*|/api/\S*) HTTP/[\d.]+\" 404\b",
        role="weak",
        hint="The client calls a path this server does not serve: CHAT_VLLM_URL must be http://HOST:PORT/v1 "
        "on the OpenAI-compatible server.",
        examples=('INFO:     127.0.0.1:45622 - "GET /v1//models HTTP/1.1" 404 Not Found',),
    ),
    _rule(
        "access_401",
        K.AUTH,
        r"HTTP/[\d.]+\"? 401\b|\b401 Unauthorized\b",
        hint="The API key was missing or wrong: use the same key in vLLM --api-key and CHAT_API_KEY.",
        examples=('INFO:     127.0.0.1:5555 - "POST /v1/chat/completions HTTP/1.1" 401 Unauthorized',),
    ),
    _rule(
        "unauthorized",
        K.AUTH,
        r"['\"]error['\"]\s*:\s*['\"]Unauthorized['\"]|AuthenticationError|Error code: 401|"
        r"Invalid authentication credentials|Incorrect API key|invalid_api_key|\"code\":\s*401\b|"
        r"'code':\s*401\b",
        hint="The API key was rejected: the key in CHAT_API_KEY must equal vLLM's --api-key / VLLM_API_KEY.",
        examples=('{"error":"Unauthorized"}',),
    ),
    _rule(
        "context_too_long",
        K.CONTEXT_LENGTH,
        r"maximum context length is \d+|Input prompt \(\d+ tokens\) is too long and exceeds limit|"
        r"cannot be greater than max_model_len|is longer than the maximum model length|"
        r"Prompt length of \d+ is longer than|context_length_exceeded|context length exceeded",
        hint="Prompt plus max_tokens exceed max_model_len: trim the chat history or max_tokens, or raise "
        "CHAT_MAX_MODEL_LEN.",
        examples=("This model's maximum context length is 512 tokens. However, your prompt contains 513",),
    ),
    _rule(
        "no_chat_template",
        K.CHAT_TEMPLATE,
        r"default chat template is no longer allowed|ChatTemplateResolutionError|"
        r"chat_template is not set|no chat template (?:is )?(?:defined|found|provided|set)",
        hint="The tokenizer has no chat template: pass --chat-template FILE to vLLM or add chat_template to "
        "tokenizer_config.json.",
        examples=(
            "As of transformers v4.44, default chat template is no longer allowed, so you must provide",
        ),
    ),
    _rule(
        "chat_template_render",
        K.CHAT_TEMPLATE,
        r"jinja2\.exceptions|TemplateSyntaxError|TemplateError|UndefinedError|roles must alternate|"
        r"conversation roles must|must alternate user/assistant|System role not supported|"
        r"Only user and assistant roles are supported",
        hint="The chat template fails to render this conversation: fix the template (--chat-template) or the "
        "message roles.",
        examples=(
            "jinja2.exceptions.TemplateSyntaxError: expected token 'end of print statement', got 'name'",
        ),
    ),
    _rule(
        "chat_template_frame",
        K.CHAT_TEMPLATE,
        r"apply_hf_chat_template|render_jinja_template|chat_template_utils|apply_chat_template\(",
        role="weak",
        in_frames=True,
        hint="The request failed while applying the chat template: check the template (--chat-template).",
        examples=('  File "/x/vllm/entrypoints/chat_utils.py", line 1290, in apply_hf_chat_template',),
    ),
    # --- output that cannot be read ---
    _rule(
        "unicode_decode",
        K.DECODE_ERROR,
        r"UnicodeDecodeError|codec can't decode byte|invalid continuation byte",
        hint="Generated bytes are not valid UTF-8: check that tokenizer and weights belong together.",
        examples=(
            "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xf8 in position 0: invalid start byte",
        ),
    ),
    _rule(
        "detokenizer_invalid_prefix",
        K.DECODE_ERROR,
        r"Invalid prefix encountered",
        hint="The detokenizer failed on invalid UTF-8 output: upgrade vLLM and check tokenizer/weights.",
        examples=("Exception: Invalid prefix encountered while decoding stream. Token ID: 237167",),
    ),
    _rule(
        "detokenizer_reset",
        K.DECODE_ERROR,
        r"Encountered invalid prefix detokenization error",
        role="weak",
        hint="The model produced invalid UTF-8 that the detokenizer had to reset on: check "
        "tokenizer/weights.",
        examples=(
            "WARNING Encountered invalid prefix detokenization error for request x, resetting decode stream",
        ),
    ),
    _rule(
        "logged_output_garbled",
        K.DECODE_ERROR,
        r"Generated (?:response|text)\b.*?(?:\\x(?:0[0-8bcef]|1[0-9a-f]|7f)|\\ufffd|\ufffd)",
        hint="The generated text holds replacement or control characters: tokenizer, weights or dtype are "
        "wrong (on a CPU try --dtype float32).",
        examples=("Generated response chatcmpl-1: output: 'motor\ufffd verbose', finish_reason: length",),
    ),
    _rule(
        "degenerate_output",
        K.DECODE_ERROR,
        r"generated text:? ?'([^\w\s'\"])\1{9,}|output: '([^\w\s'\"])\2{9,}|\"content\": "
        r"?\"([^\w\s'\"])\3{9,}|"
        r"text='([^\w\s'\"])\4{9,}",
        role="weak",
        hint="The output is one character repeated (e.g. '!!!!', typical of NaN logits): serve with another "
        "dtype (--dtype float32 on CPU, bfloat16 on GPUs that support it).",
        examples=("Prompt:  'The capital of France is:',generated text: '!!!!!!!!!!!!!!!!!!'",),
    ),
    _rule(
        "replacement_char",
        K.DECODE_ERROR,
        "\ufffd",
        role="weak",
        hint="The text holds U+FFFD replacement characters: the output was not decodable as UTF-8.",
        examples=("\u5929\u6c14\ufffd\ufffd\u62a5",),
    ),
    # --- empty answers ---
    _rule(
        "generated_empty",
        K.EMPTY_OUTPUT,
        r"Generated text: ?(?:''|\"\"|$)|Generated response \S+(?: \(streaming complete\))?: output: (?:''|"
        r"\"\")|"
        r"CompletionOutput\(index=\d+, text=''|text='', token_ids=\[|\boutput: '', finish_reason",
        hint="Generation ended before any text: check eos_token_id / stop settings and the chat template.",
        examples=("Prompt: 'What is the capital', Generated text: ''",),
    ),
    _rule(
        "response_empty",
        K.EMPTY_OUTPUT,
        r"\"completion_tokens\":\s*0\b|completion_tokens=0\b|\"text\":\s*\"\"[^{}]*\"tokens\":\s*\[\]|"
        r"\"message\":\s*\{[^{}]*\"content\":\s*(?:\"\"|"
        r"null)[^{}]*\}[^{}]{0,300}\"finish_reason\":\s*\"(?:stop|length)\"|"
        r"\"finish_reason\":\s*\"(?:stop|length)\"[^{}]{0,300}\"message\":\s*\{[^{}]*\"content\":\s*(?:\"\"|"
        r"null)|"
        r"finish_reason='(?:stop|length)'[^()]{0,120}message=ChatCompletionMessage\(content=(?:''|None)|"
        r"ChatCompletionMessage\(content=''|ChatCompletionMessage\(content=None[^()]*tool_calls=(?:None|"
        r"\[\])",
        hint="The server returned an empty answer: check eos_token_id / stop settings, max_tokens and the "
        "chat "
        "template.",
        examples=(
            '{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}',
        ),
    ),
    _rule(
        "empty_stop_string",
        K.EMPTY_OUTPUT,
        r"\bstop=\[(?:[^\]]*?,\s*)?''\s*[,\]]",
        role="weak",
        hint="The request carries an empty stop string, which ends every answer at once: remove it from "
        "'stop'.",
        examples=("SamplingParams(n=1, stop=['', '<|user|>'], stop_token_ids=[], max_tokens=8140)",),
    ),
    _rule(
        "immediate_eos",
        K.EMPTY_OUTPUT,
        r"immediate EOS|EOS as the (?:very )?first|EOS token as the (?:very )?first",
        role="weak",
        hint="The model emitted end-of-sequence first: check eos_token_id and the prompt format.",
        examples=("WARNING Model generated immediate EOS token for request x",),
    ),
    # --- connection between client and server ---
    _rule(
        "connection_refused",
        K.CONNECTION,
        r"Connection refused|ConnectionRefusedError|\[Errno 111\]|ECONNREFUSED|\bConnectError\b|"
        r"APIConnectionError|Connection error\.|Failed to establish a new connection|Max retries exceeded "
        r"with url|"
        r"Name or service not known|Temporary failure in name resolution|nodename nor servname|"
        r"getaddrinfo failed|Cannot connect to host|All connection attempts failed|No route to host|"
        r"ConnectTimeout|Connection timed out|connect timeout",
        hint="Nothing answers at CHAT_VLLM_URL: start the server (or wait for start-up) and check host, port "
        "and the /v1 suffix.",
        examples=(
            "httpx.ConnectError: [Errno 111] Connection refused",
            "openai.APIConnectionError: Connection error.",
        ),
    ),
    _rule(
        "connection_broken",
        K.CONNECTION,
        r"RemoteProtocolError|Server disconnected without sending a response|peer closed connection without "
        r"sending complete message body|incomplete chunked read|IncompleteRead|ServerDisconnectedError|"
        r"Connection aborted",
        hint="The server closed the connection mid-answer, usually because it crashed: read the server log "
        "around that time.",
        examples=("httpx.RemoteProtocolError: peer closed connection without sending complete message body",),
    ),
    _rule(
        "connection_reset",
        K.CONNECTION,
        r"Connection reset by peer|ConnectionResetError|BrokenPipeError|Broken pipe|Retrying request to /",
        role="weak",
        hint="A connection between client and server was reset: check that the server stays up.",
        examples=("ConnectionResetError: [Errno 104] Connection reset by peer",),
    ),
    # --- slow or stuck ---
    _rule(
        "request_timeout",
        K.SLOW_OR_STALLED,
        r"APITimeoutError|Request timed out|ReadTimeout|read timed out|timed out waiting for (?:response|"
        r"output)",
        hint="The answer took longer than the client timeout: check /metrics for waiting requests and "
        "tokens/s.",
        examples=("openai.APITimeoutError: Request timed out.",),
    ),
    _rule(
        "engine_hang",
        K.SLOW_OR_STALLED,
        r"\bengine is hung|\bengine hung|\bengine is hanging|\bengine hangs|appears to be hung|"
        r"RPC server .{0,40}timed out|heartbeat .{0,40}timed out|No response from the engine",
        hint="The engine stopped making progress: restart the server; if it repeats, lower the load.",
        examples=("ERROR Engine appears to be hung, no step completed in 300 s",),
    ),
    _rule(
        "generic_timeout",
        K.SLOW_OR_STALLED,
        r"\bTimeoutError\b|\btimed out\b",
        role="weak",
        hint="Something timed out: check whether the server is overloaded or stuck (/metrics).",
        examples=("asyncio.exceptions.TimeoutError",),
    ),
    # --- wrappers: consequences that point at a cause printed elsewhere ---
    _rule(
        "engine_dead",
        K.SLOW_OR_STALLED,
        r"EngineDeadError|EngineCore encountered an issue|AsyncEngineDeadError|Background loop has errored|"
        r"Engine loop has died",
        role="wrapper",
        hint="The engine died or hangs; the cause is in the lines before this one.",
        examples=(
            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace",
        ),
    ),
    _rule(
        "engine_failed",
        K.STARTUP_FAILURE,
        r"Engine core initialization failed|Engine process failed to start|EngineCore failed to start|"
        r"Engine core proc \S+ died unexpectedly|(?:APIServer|API server|ApiServer)\b.{0,60}\bexited|"
        r"Worker proc \S+ died unexpectedly|Error executing method|Worker failed with error|"
        r"WorkerProc (?:initialization failed|hit an exception)|AsyncLLM output_handler failed|"
        r"Error in chat completion stream generator|Engine background task failed|EngineCore hit an "
        r"exception|"
        r"EngineCore encountered a fatal error|Exception in worker",
        role="wrapper",
        ready_kind=K.CONNECTION,
        hint="A vLLM process failed; this line is a consequence, the cause is printed above it.",
        examples=(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        ),
    ),
    _rule(
        "access_5xx",
        K.CONNECTION,
        r"HTTP/[\d.]+\" 5\d\d\b",
        role="wrapper",
        hint="The server failed while answering; the cause is in the log lines just before.",
        examples=(
            'INFO:     127.0.0.1:45442 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
        ),
    ),
)

RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}

# ---------------------------------------------------------------------------------------------
# Lines that look alarming but are normal for vLLM; they never produce findings.
# ---------------------------------------------------------------------------------------------
HARMLESS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"Found ulimit of \d+ and failed to automatically increase|Too many open files`?\.?\s*Consider", re.I
    ),
    re.compile(r"lib(?:tcmalloc|iomp)\S* is not found", re.I),
    re.compile(r"Attempted to load weight .* with dtype", re.I),
    re.compile(r"\b(?:Deprecation|PendingDeprecation|Future)Warning\b|\bis deprecated\b", re.I),
    re.compile(r"Casting torch\.\w+ to torch\.\w+|Downcasting torch\.float32", re.I),
    re.compile(r"Token indices sequence length is longer than the specified maximum", re.I),
    re.compile(r"leaked (?:semaphore|shared_memory) objects", re.I),
    re.compile(r"Compiling model again due to a load failure", re.I),
    re.compile(r"Waiting for connections to close", re.I),
)
# A WARNING that mentions memory is a tuning note ("Possibly too large swap space", "pin_memory=False as
# WSL is detected", "KV cache memory ...") unless it names an actual memory failure.
_MEMORY_WORD = re.compile(r"memory", re.I)
_MEMORY_FAILURE = re.compile(
    r"out of memory|OutOfMemory|Cannot allocate memory|No available memory|not enough memory|oom", re.I
)

# During warm-up compilation vLLM prints this every 60 s; only after start-up does it mean a stall.
SHM_WAIT = re.compile(r"No available shared memory broadcast block found", re.I)

# ---------------------------------------------------------------------------------------------
# Line formats
# ---------------------------------------------------------------------------------------------
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\^\[\[[0-9;]*m|\r")
_LEVEL_NAMES = {
    "WARN": "WARNING",
    "CRITICAL": "ERROR",
    "FATAL": "ERROR",
    "I": "INFO",
    "W": "WARNING",
    "E": "ERROR",
    "F": "ERROR",
    "D": "DEBUG",
}
_PREFIXES: tuple[re.Pattern[str], ...] = (
    # ISO timestamps: "[2024-09-05T00:38:34Z] ", "2024-04-27 10:13:05 "
    re.compile(r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s?"),
    # loguru / fastchat: "| ERROR    | app.llm:ask_tool:426 - ", "| ERROR | stderr | "
    re.compile(r"\|\s*(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL)\s*\|\s*(?:[\w.:<>-]+ - |stderr \| )?"),
    # docker compose: "vllm-1  | "
    re.compile(r"[\w.-]+\s+\|\s"),
    # process tags: "(APIServer pid=1) ", "(EngineCore_DP0 pid=123) ", "(VllmWorker rank=0 pid=9) "
    re.compile(r"\([^()\n]{1,60}?\bpid=\d+(?:, ip=[\d.]+)?\)\s?"),
    re.compile(r"\[rank\d+\]:\s?"),
    # vLLM: "INFO 11-30 14:00:01 [core.py:700] ", V0 "ERROR 10-26 11:35:32 registry.py:267] "
    re.compile(
        r"(?P<lvl>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+\d{2}-\d{2}\s+\d{2}:\d{2}:\d{2}(?:\.\d+)?\s+"
        r"(?:\[[^\]\s]+\]?\]|[\w./-]+:\d+\])\s?"
    ),
    # glog / torch C++: "W1130 15:01:47.512000 5649 torch/x.py:53] ", "[W1130 15:02:02.38 utils.cpp:68] "
    re.compile(r"\[?(?P<lvl>[IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d+(?: \d+)? [\w./-]+:\d+\]\s?"),
    # uvicorn / python logging: "INFO:     ", "ERROR:    "
    re.compile(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+"),
    # pytest failure lines: "E           Exception: ..."
    re.compile(r"E {2,}"),
)
_PY_WARNING = re.compile(r"\b\w*Warning: ")


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """A log line without its prefixes; `message` keeps its own indentation (tracebacks need it)."""

    level: str
    message: str


def strip_ansi(text: str) -> str:
    """Remove colour codes (real ESC sequences and their pasted '^[[' form) and carriage returns, and
    undo HTML escaping (&quot; ...) that logs copied from web pages carry."""
    text = _ANSI.sub("", text)
    if "&" in text and ";" in text:
        text = html.unescape(text)
    return text


def parse_line(text: str) -> ParsedLine:
    """Split off timestamps, process tags and level prefixes of the formats vLLM logs come in."""
    level = ""
    message = text
    for _ in range(6):
        for prefix in _PREFIXES:
            m = prefix.match(message)
            if m and m.end() > 0:
                lvl = m.groupdict().get("lvl")
                if lvl and not level:
                    level = _LEVEL_NAMES.get(lvl, lvl)
                message = message[m.end() :]
                break
        else:
            break
    if not level and _PY_WARNING.search(message):
        level = "WARNING"
    return ParsedLine(level, message)


def line_level(text: str) -> str:
    """INFO / WARNING / ERROR / DEBUG or '' for one raw log line."""
    return parse_line(strip_ansi(text)).level


def is_harmless(parsed: ParsedLine) -> bool:
    """True for known-normal warnings that must never become findings."""
    msg = parsed.message
    if any(p.search(msg) for p in HARMLESS):
        return True
    return parsed.level == "WARNING" and bool(_MEMORY_WORD.search(msg)) and not _MEMORY_FAILURE.search(msg)


def match_rule(message: str, *, frame: bool = False) -> Rule | None:
    """First rule whose pattern matches `message`; traceback frame/code lines only try frame rules.
    A rule's regex only runs when one of its needles occurs in the line."""
    low = message.lower()
    for rule in RULES:
        if frame and not rule.in_frames:
            continue
        for needle in rule.needles:
            if needle in low:
                if rule.pattern.search(message):
                    return rule
                break
    return None
