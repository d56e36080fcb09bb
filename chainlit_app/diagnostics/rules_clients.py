"""Rules for what clients, agents and other servers (llama.cpp, Ollama, TGI) print in their own words: the logs
of a chat bot, an agent loop or an RL rollout often hold no body at all, only the client's note that the text
it received was empty or that the server is not running; another server names its failed start its own way.

Data only: see `rules.py` for what the fields mean and how the winner is chosen. The patterns follow the
shape of such notes, not one program's wording: a response label followed by an empty quoted string, a
logfmt count of the answer's characters that is 0, a sentence saying a model returned nothing, or an
exception class named for an empty response.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

_LABELS = ("response", "reply", "answer", "output", "completion")
# 'full response to system: ""': a label in prose (not a quoted JSON key) and then nothing but an empty string
_EMPTY_QUOTED = "|".join(rf"\b{label}\b[\w ]{{0,30}}:\s*(?:\"\"|'')\s*$" for label in _LABELS)
# an answer's fields printed one per line ('content: ""' above 'finish_reason: "length"'): the text field alone
_EMPTY_FIELD = "|".join(
    rf"^\s*{label}\s*[:=]\s*(?:\"\"|''|null|None)\s*,?\s*$" for label in ("content", "text", *_LABELS)
)
# logfmt counters of the answer: '{iteration=1, content_chars=0}'
_ZERO_COUNT = "|".join(
    rf"(?<![\"'])\b{label}_(?:chars|length|len)=0\b" for label in ("content", *_LABELS)
)
_RETURNED_NOTHING = (
    r"\breturned no (?:content|response|answer|output|text|completion)\b|"
    r"\breturned an? empty (?:content|response|answer|output|text|completion|string)\b|"
    # exception classes named for it: EmptyModelResponseError, EmptyResponseError, EmptyCompletionError
    r"\bEmpty\w*(?:Response|Output|Completion|Answer|Content)\w*(?:Error|Exception)\b|"
    r"\b(?:received|got|returned|produced|generated) (?:an? )?empty (?:response|answer|output|completion)\b|"
    r"\bempty (?:response|answer|output|completion) (?:from|by|of) (?:the )?(?:model|llm|assistant|ai)\b"
)
# a server the client needs is not running, in the client's words ('Ollama is not running', 'is the server
# running?'): the words of a refused connection without the errno
_NOT_RUNNING = (
    r"\b(?:server|ollama|service|backend|daemon|api)\b (?:is )?not (?:running|reachable|started)\b|"
    r"\bis (?:the )?(?:server|ollama|service|backend|daemon) (?:running|up|started)\?"
)
# another server's own words for a model it could not load (llama.cpp, Ollama's runner, TGI's shards)
_OTHER_SERVER_START = (
    r"\berror loading model\b|\bunable to load model\b|llama runner process has terminated|"
    r"\bShardCannotStart\b|\bShard \d+ failed to start\b|\bunknown pre-tokenizer type\b"
)

CLIENT_RULES: tuple[Rule, ...] = (
    rule(
        "client_empty_answer",
        Kind.EMPTY_OUTPUT,
        f"{_EMPTY_QUOTED}|{_EMPTY_FIELD}|{_ZERO_COUNT}|{_RETURNED_NOTHING}",
        hint=Msg("rule.client_empty_answer"),
        examples=(
            '<Bot> full response to system: ""',  # mindcraft #789
            "Received empty response from the model",
            'content: ""',  # oh-my-pi #2774: the fields Ollama's OpenAI endpoint returned, one per line
            "[INFO] agent: LLM response without tool calls (direct answer) {iteration=1, content_chars=0, "
            "agent_id=main}",  # picolm #15
            "WARNING Rollout error in group 2, re-scheduling (0/16 complete): EmptyModelResponseError('Model "
            "returned no content, reasoning, and did not call any tools')",  # prime-rl #2316
        ),
    ),
    rule(
        "client_server_not_running",
        Kind.CONNECTION,
        _NOT_RUNNING,
        hint=Msg("rule.client_server_not_running"),
        examples=(
            "Ollama is not running. Please start Ollama",
            "Error: could not reach the API: is the server running?",
        ),
    ),
    rule(
        "other_server_model_load_failed",
        Kind.STARTUP_FAILURE,
        _OTHER_SERVER_START,
        hint=Msg("rule.other_server_model_load_failed"),
        examples=(
            "llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer type: "
            "'qwen2'",  # llama.cpp built before the model's tokenizer
            "Error: llama runner process has terminated: exit status 2",  # Ollama
            "Error: ShardCannotStart",  # TGI's launcher
        ),
    ),
    rule(
        "other_server_generation_crawls",
        Kind.SLOW_OR_STALLED,
        # llama.cpp's timings of one answer (llama-server's print_timing, llama_print_timings): a second or more
        # per generated token, measured for that answer alone (the prompt's own line is not generation)
        r"(?<!prompt )\beval time\s*=\s*[\d.]+ ms /\s*\d+ (?:tokens|runs)\s*\(\s*\d{4,}(?:\.\d+)? ms per token",
        role="weak",
        hint=Msg("rule.other_server_generation_crawls"),
        examples=(
            "       eval time =   26581.48 ms /    10 tokens ( 2658.15 ms per token,     0.38 tokens per second)",
        ),
    ),
    rule(
        "benchmark_first_token_minutes",
        Kind.SLOW_OR_STALLED,
        # a serving benchmark's own measurement (vLLM's benchmark_serving / `vllm bench serve`): a minute or more
        # to the first token, on average or at the median, is requests waiting in the queue, whatever the load
        r"\b(?:Mean|Median) TTFT \(ms\):\s*(?:[6-9]\d{4}|\d{6,})(?:\.\d+)?\b",
        role="weak",
        hint=Msg("rule.benchmark_first_token_minutes"),
        examples=("Mean TTFT (ms):                          515454",),  # vllm #8104
    ),
    rule(
        "route_not_found_go",
        Kind.MODEL_NOT_FOUND,
        # the body Go's net/http (Ollama, LocalAI, gateways written in Go) answers for a path it does not serve
        r"\b404 page not found\b",
        role="weak",
        hint=Msg("rule.route_not_found_go"),
        examples=("Error: 404 page not found",),
    ),
)
