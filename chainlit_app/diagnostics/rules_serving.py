"""Rules for failures while serving: requests, connections, stalls (output that cannot be read and empty answers:
`rules_output.py`, in this table's order between them; wrappers: `rules_wrappers.py`).

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .rules_output import OUTPUT_RULES
from .taxonomy import Kind


def not_template_source(message: str) -> bool:
    """A line of a template's own source quotes its refusals (`{{- raise_exception('… roles must alternate …') }}`):
    vLLM 0.5 logs the whole chat template at INFO when it starts, line by line, and that is no refusal made. A
    server's error that quotes the source before its own words (llama.cpp's `While executing CallExpression …`)
    does not open with it."""
    return not message.lstrip().startswith(("{%", "{{"))


_REQUEST_RULES: tuple[Rule, ...] = (
    # --- request-level errors ---
    rule(
        "model_does_not_exist",
        Kind.MODEL_NOT_FOUND,
        r"The model [`'\"].{0,300}?[`'\"] does not exist|"
        r"\bmodel [`'\"][^`'\"]+[`'\"] not found|\bmodel \S+ not found\b|\bModel not found\b|\bmodel_not_found\b|"
        r"Model metadata for \S+ not found|\bno such model\b",
        hint=Msg("rule.model_does_not_exist"),
        examples=(
            "The model `gpt-4` does not exist. Valid aliases: tiny.",
            "The model `<img src=\"x\" onerror='a'>` does not exist. Valid aliases: tiny.",
        ),
    ),
    rule(
        "model_not_served_here",
        Kind.MODEL_NOT_FOUND,
        r"Only \S+ allowed now, your model|['\"]code['\"]:\s*40301\b",
        hint=Msg("rule.model_not_served_here"),
        examples=("'Only yi-34b-chat allowed now, your model qwen-llm-chat', 'code': 40301}",),
    ),
    rule(
        "model_lookup_not_found",
        Kind.MODEL_NOT_FOUND,
        # the word, not a name in quotes (round 63: JAX's `PartitionSpec(…('model', 'attn_dp')) is not found in mesh`,
        # a sharding axis named 'model' that the TPU plugin did not build); a request's key (`{"model": …}`) is the word
        r"(?!(?<=['\"])model['\"](?!\s*:))\b(?:model|Model)\b[^\n]{0,60}?\bNot Found\b|"
        r"(?!(?<=['\"])model['\"](?!\s*:))\b(?:model|Model)\b[^\n]{0,60}?\b404 Not\b",
        role="weak",
        hint=Msg("rule.model_lookup_not_found"),
        examples=("[xinference] Error: Failed to get the model description, detail: Not Found",),
    ),
    rule(
        "not_found_error",
        Kind.MODEL_NOT_FOUND,
        r"NotFoundError: Error code: 404|openai\.NotFoundError|Error code: 404\b|"
        # FastAPI's own 404 body: the route does not exist (/generate on the OpenAI server, a URL without /v1)
        r"[{,]\s*[\"']detail[\"']\s*:\s*[\"']Not Found[\"']\s*}",
        hint=Msg("rule.not_found_error"),
        examples=(
            "openai.NotFoundError: Error code: 404 - {'detail': 'Not Found'}",
            'curl http://localhost:8000/generate {"detail":"Not Found"}',  # vLLM #5082's title
        ),
    ),
    rule(
        "access_404_completion",
        Kind.MODEL_NOT_FOUND,
        r"\"(?:POST|GET) /v1/(?:chat/completions|completions|responses|embeddings)\S* HTTP/[\d.]+\" 404\b",
        hint=Msg("rule.access_404_completion"),
        examples=('INFO:     127.0.0.1:5555 - "POST /v1/chat/completions HTTP/1.1" 404 Not Found',),
    ),
    rule(
        "access_404_route",
        Kind.CONNECTION,
        r"\"(?:POST|GET|PUT) (?:/v1\S*|/generate\S*|\S*/completions\S*|/api/\S*) HTTP/[\d.]+\" 404\b",
        role="weak",
        hint=Msg("rule.access_404_route"),
        examples=('INFO:     127.0.0.1:45622 - "GET /v1//models HTTP/1.1" 404 Not Found',),
    ),
    rule(
        "access_401",
        Kind.AUTH,
        r"HTTP/[\d.]+\"? 401\b|\b401 Unauthorized\b",
        hint=Msg("rule.access_401"),
        examples=('INFO:     127.0.0.1:5555 - "POST /v1/chat/completions HTTP/1.1" 401 Unauthorized',),
    ),
    rule(
        "unauthorized",
        Kind.AUTH,
        r"['\"]error['\"]\s*:\s*['\"]Unauthorized['\"]|AuthenticationError|Error code: 401|"
        r"Invalid authentication credentials|Incorrect API key|invalid_api_key|\"code\":\s*401\b|"
        r"'code':\s*401\b|\"code\":\s*\"401\"|Authentication Error|\bauth_error\b|"
        r"api_key client option must be set|OPENAI_API_KEY is not set|\bInvalid token\b|"
        r"invalid api[ _-]?key|\b401 Unauthorized\b",
        hint=Msg("rule.unauthorized"),
        examples=('{"error":"Unauthorized"}',),
    ),
    rule(
        "context_too_long",
        Kind.CONTEXT_LENGTH,
        r"maximum context length is\s+\d+|'max_tokens' or 'max_completion_tokens' is too large: \d+|"
        r"Input prompt \(\d+ tokens\) is too long and exceeds limit|"
        r"cannot be greater than max_model_len|is longer than the maximum model length|"
        r"Prompt length of \d+ is longer than|context_length_exceeded|context length exceeded|"
        r"max_tokens must be at least 1, got (?:-\d+|0)\b|exceeds (?:the )?model's maximum context length|"
        # other servers' words (llama.cpp, llama-cpp-python, TGI): a request larger than the context
        r"exceeds? (?:the )?(?:available |model's )?context (?:window|size|length)|exceed_context_size_error|"
        r"tokens \+ `?max_new_tokens`? must be <= \d+",
        hint=Msg("rule.context_too_long"),
        examples=(
            "This model's maximum context length is 512 tokens. However, your prompt contains 513",
            # vLLM's 400 for a max_tokens larger than the context left after the prompt (spacing as a client printed it)
            "Error: 400 'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum context "
            "length is      64001 tokens and your request has 24235 input tokens (64000 > 64001 - 24235). None",
            "the request exceeds the available context size, try increasing it",  # llama.cpp server
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000",  # TGI
        ),
    ),
    rule(
        "no_chat_template",
        Kind.CHAT_TEMPLATE,
        r"default chat template is no longer allowed|ChatTemplateResolutionError|"
        r"chat_template is not set|no chat template (?:is )?(?:defined|found|provided|set)",
        hint=Msg("rule.no_chat_template"),
        examples=(
            "As of transformers v4.44, default chat template is no longer allowed, so you must provide",
        ),
    ),
    rule(
        "chat_template_failed",
        Kind.CHAT_TEMPLATE,
        r"error occurred in `?transformers`? while applying chat template|Error in applying chat template|"
        r"error while applying (?:the )?chat template|Failed to apply chat template|"
        r"Failed (?:applying|rendering) the (?:jinja )?chat template|failed to render (?:the )?chat template",
        hint=Msg("rule.chat_template_failed"),
        examples=(
            "ERROR 09-14 13:08:40 [chat_utils.py:1233] An error occurred in `transformers` while applying chat template",  # noqa: E501
            "ERROR: Model worker crashed: Failed applying the jinja chat template: invalid operation: tried to use + "
            "operator on unsupported types undefined and string (in <string>:3)",  # nobodywho #61
        ),
    ),
    rule(
        "chat_template_source_in_error",
        Kind.CHAT_TEMPLATE,
        # an error that quotes Jinja statements: the template engine (jinja2, minijinja, llama.cpp's) shows the
        # template line it failed on, whatever words its message uses
        "|".join(rf"{word}\b.{{0,400}}?\{{%-?\s*(?:set|if|for|elif|else|endif|endfor|macro|call)\b"
                 for word in ("error", "failed", "exception", "crashed")),
        hint=Msg("rule.chat_template_source_in_error"),
        examples=(
            'API request failed with status 500: {"error":{"code":500,"message":"Value is not callable: null at '
            "row 49, column 79:\\n                {%- set content = (m_content.split('</think>')|last)",  # jan #6123
        ),
    ),
    rule(
        "chat_template_render",
        Kind.CHAT_TEMPLATE,
        r"jinja2\.exceptions|TemplateSyntaxError|TemplateError|UndefinedError|roles must alternate|"
        r"conversation roles must|must alternate user/assistant|System role not supported|"
        r"Only user and assistant roles are supported|Unexpected role '\w+' after role",
        check=not_template_source,
        hint=Msg("rule.chat_template_render"),
        examples=(
            "jinja2.exceptions.TemplateSyntaxError: expected token 'end of print statement', got 'name'",
        ),
    ),
    rule(
        "chat_template_frame",
        Kind.CHAT_TEMPLATE,
        r"apply_hf_chat_template|render_jinja_template|chat_template_utils|apply_chat_template\(|"
        # vLLM's renderers (0.16 on) render the conversation through the template in render_chat(_async)
        r"\bin render_chat(?:_async)?$|\brenderer\.render_chat(?:_async)?\(",
        role="weak",
        in_frames=True,
        hint=Msg("rule.chat_template_frame"),
        examples=('  File "/x/vllm/entrypoints/chat_utils.py", line 1290, in apply_hf_chat_template',
                  # vLLM #35679 (a CI log: the chat warm-up's traceback, cut before its exception line)
                  '  File "/usr/local/lib/python3.12/dist-packages/vllm/renderers/base.py", line 755, in '
                  'render_chat_async'),
    ),
)

_TRANSPORT_AND_STALL_RULES: tuple[Rule, ...] = (
    # --- connection between client and server ---
    rule(
        "connection_refused",
        Kind.CONNECTION,
        r"Connection refused|ConnectionRefusedError|\[Errno 111\]|ECONNREFUSED|\bConnectError\b|APIConnectionError|"
        # errno 111 (ECONNREFUSED) by number: Envoy's 'transport failure reason: delayed connect error: 111'
        r"\bconnect(?:ion)? error:? 111\b|\berrno[ =:]+111\b|"
        r"Connection error\b|Failed to establish a new connection|Max retries exceeded with url|"
        r"Name or service not known|Temporary failure in name resolution|nodename nor servname|getaddrinfo failed|"
        # Go's resolver: 'dial tcp: lookup host.docker.internal on 127.0.0.11:53: no such host'
        r"\blookup \S+(?: on \S+)?: no such host\b|"
        r"Cannot connect to (?:host|supervisor|server)|All connection attempts failed|No route to host|"
        r"Server is not up yet|missing an 'http://' or 'https://' protocol|UnsupportedProtocol|ConnectTimeout|"
        # ETIMEDOUT while connecting, in macOS's and Windows' words (Linux's is 'Connection timed out'): the host
        # never answered (round 65: a notebook's requests call to a server on another host)
        r"Connection timed out|connect timeout|\[Errno 60\] Operation timed out|\[WinError 10060\]|"
        # any client's own words: 'Couldn't connect to Ollama at http://127.0.0.1:11434', curl's 'to server'
        r"\b(?:could ?n[o']t|unable to|failed to|cannot|can't) connect to\b|"
        # Rust's reqwest (Codex and other CLIs in Rust): the request got no answer at all from that URL
        r"\berror sending request for url\b",
        hint=Msg("rule.connection_refused"),
        examples=(
            "httpx.ConnectError: [Errno 111] Connection refused",
            "openai.APIConnectionError: Connection error.",
            # curl 8, quoted in a public run record
            "curl: (7) Failed to connect to localhost port 8888 after 0 ms: Couldn't connect to server",
            "Couldn't connect to Ollama at http://127.0.0.1:11434",  # Open WebUI's words (openui #215)
            # AIBrix #1111: the gateway's Envoy dialling a port the pod does not listen on
            '{"error":{"code":503,"message":"upstream connect error or disconnect/reset before headers. reset reason: '
            'remote connection failure, transport failure reason: delayed connect error: 111. "}}',
            # genai-stack #76: a container resolving a host name only Docker Desktop provides
            'Error: Head "http://host.docker.internal:11434/": dial tcp: lookup host.docker.internal on '
            "127.0.0.11:53: no such host",
            # openai/codex #2257: Codex sending its requests to Ollama's default port, not the vLLM configured
            "🖐 error sending request for url (http://localhost:11434/v1/chat/completions)",
        ),
    ),
    rule(
        "connection_broken",
        Kind.CONNECTION,
        r"RemoteProtocolError|Server disconnected without sending a response|"
        r"peer closed connection without sending complete message body|incomplete chunked read|IncompleteRead|"
        r"ServerDisconnectedError|Connection aborted|Empty reply from server",
        hint=Msg("rule.connection_broken"),
        examples=(
            "httpx.RemoteProtocolError: peer closed connection without sending complete message body",
            "curl: (52) Empty reply from server",  # an LLM server's /v1/models check, in a public report
        ),
    ),
    rule(
        "connection_reset",
        Kind.CONNECTION,
        r"Connection reset by peer|ConnectionResetError|BrokenPipeError|Broken pipe|Retrying request to /",
        role="weak",
        hint=Msg("rule.connection_reset"),
        examples=("ConnectionResetError: [Errno 104] Connection reset by peer",),
    ),
    # --- slow or stuck ---
    rule(
        "preempted_for_kv_cache",
        Kind.SLOW_OR_STALLED,
        r"is preempted by PreemptionMode\.\w+ mode because there is not enough KV cache space",
        role="weak",
        held_for_batch=True,
        hint=Msg("rule.preempted_for_kv_cache"),
        examples=(
            "WARNING 05-01 10:00:00 scheduler.py:1560] Sequence group chatcmpl-1 is preempted by "
            "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the "
            "end-to-end performance.",
        ),
    ),
    rule(
        "request_timeout",
        Kind.SLOW_OR_STALLED,
        r"APITimeoutError|Request timed out|ReadTimeout|read timed out|timed out waiting for (?:response|"
        r"output)",
        hint=Msg("rule.request_timeout"),
        examples=("openai.APITimeoutError: Request timed out.",),
    ),
    rule(
        "collective_timeout",
        Kind.SLOW_OR_STALLED,
        r"Watchdog caught collective operation timeout|collective operation timeout|NCCL (?:watchdog )?timeout",
        hint=Msg("rule.collective_timeout"),
        examples=(
            "[rank0]:[E822 16:31:16.131931664 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "  # noqa: E501
            "WorkNCCL(SeqNum=5730, OpType=BROADCAST)",
        ),
    ),
    rule(
        "health_check_timeout",
        Kind.SLOW_OR_STALLED,
        r"Didn't receive health check response|health check (?:timed out|timeout)|marking it unhealthy",
        hint=Msg("rule.health_check_timeout"),
        examples=(
            "Didn't receive health check response for replica Replica(id='r1') after 10.0s, marking it unhealthy.",
        ),
    ),
    rule(
        "engine_hang",
        Kind.SLOW_OR_STALLED,
        r"\bengine is hung|\bengine hung|\bengine is hanging|\bengine hangs|appears to be hung|"
        r"RPC (?:server|call to \S+) .{0,40}timed out|heartbeat .{0,40}timed out|No response from the engine|"
        r"Engine iteration timed out",
        hint=Msg("rule.engine_hang"),
        examples=("ERROR Engine appears to be hung, no step completed in 300 s",),
    ),
    rule(
        "launch_timed_out",
        Kind.STARTUP_FAILURE,
        # a distributed launch whose workers never all joined, or a start-up with a deadline that passed
        r"timed out after \d+ ?(?:s|sec|seconds?) waiting for (?:clients|workers|nodes|ranks|(?:the )?placement group)|"
        r"timed out waiting for (?:clients|workers|nodes|ranks|(?:the )?placement group)|"
        r"launch\w* (?:has |was )?timed out|start-?up (?:has |was )?timed out|"
        r"initiali[sz]ation (?:has |was )?timed out",
        hint=Msg("rule.launch_timed_out"),
        examples=(
            "ERROR    [address=172.22.149.188:45585, pid=43525] Timed out after 601 seconds waiting for clients. "
            "1/2 clients joined.",  # Xinference #2486
        ),
    ),
    rule(
        "generic_timeout",
        Kind.SLOW_OR_STALLED,
        r"\bTimeoutError\b|\btimed out\b|upstream request timeout",
        role="weak",
        hint=Msg("rule.generic_timeout"),
        examples=("asyncio.exceptions.TimeoutError",),
    ),
)

SERVING_RULES: tuple[Rule, ...] = _REQUEST_RULES + OUTPUT_RULES + _TRANSPORT_AND_STALL_RULES
