"""Rules for what servers, gateways and clients in front of a model write: gin's access lines, a client's
own request log (httpx's, under the openai library), Go's and Node's runtime words for a timeout or a reset
connection, and the gateways' own words, in Chinese too.

httpx logs each request a client makes with the status it got (`HTTP Request: POST … "HTTP/1.1 500 Internal
Server Error"`): the access line seen from the other side, read by its status as well (any 5xx an engine error,
as uvicorn's own 5xx lines are; 404 a model or path the server does not have; 401 is read by the access rule
that knows any `HTTP/1.1 401`).

Ollama, one-api, new-api and other Go servers log each request through gin: `[GIN] 2024/12/11 - 09:58:58 |
500 | 29m59s | 10.0.0.123 | POST "/api/chat"` (one-api adds a request id column). Unlike uvicorn's access
lines, gin's carry how long the request took, so a 5xx after ten minutes or more is a request that hung until
something gave up (slow_or_stalled), and a quick 5xx a failure while answering. The status is read as
the clients' reported statuses are (`rules_status.py`): 401 auth, 403 auth as a symptom, 408/429/504 slow,
any other 5xx an engine error (as uvicorn's 5xx access lines are: never healthy while a 5xx is in sight); all
but 401 weak, since the server's own line names the cause better when the excerpt has it.

The Chinese gateways and clients (one-api, new-api, FastGPT, Cherry Studio) answer in Chinese: an invalid,
expired or missing token, a key that may not use a model, a failed authentication, an upstream saturated
(their 429), no channel serving a model; a client that cannot connect to its API server, a request or the
API's communication that timed out (Langchain-Chatchat).

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

# '[GIN] 2024/06/22 - 19:55:07 | 2024062219550783290268839514798 | 401 |' (the id column is one-api's)
_GIN = r"\[GIN\] [\d/]+ - [\d:]+ \|(?:\s*\w{8,}\s*\|)?\s*(?:{codes})\s*\|"
# Go's duration of ten minutes or more: '29m59s', '1h2m3s'
_LONG = r"\s*(?:\d+h[\dm.]*s?|[1-9]\d+m[\d.]*s)\s*\|"


# httpx's request log: 'HTTP Request: POST http://…/v1/chat/completions "HTTP/1.1 500 Internal Server Error"'
_CLIENT = r'HTTP Request: [A-Z]+ \S+ "HTTP/[\d.]+ (?:{codes})\b'


def _client(codes: str) -> str:
    return _CLIENT.replace("{codes}", codes)


def _gin(codes: str, long: bool = False) -> str:
    return _GIN.replace("{codes}", codes) + (_LONG if long else "")


GATEWAY_RULES: tuple[Rule, ...] = (
    rule(
        "gin_status_hung",
        Kind.SLOW_OR_STALLED,
        _gin("5\\d\\d|408|429", long=True),
        role="weak",
        hint=Msg("rule.reported_status_timeout"),
        examples=(
            'Dec 11 09:58:58 quorra ollama[1543654]: [GIN] 2024/12/11 - 09:58:58 | 500 |        29m59s |      '
            '10.0.0.123 | POST     "/api/chat"',  # ollama #8387
        ),
    ),
    rule(
        "gin_status_auth",
        Kind.AUTH,
        _gin("401"),
        hint=Msg("rule.reported_status_auth"),
        examples=(
            "2024-06-23 03:55:07 [GIN] 2024/06/22 - 19:55:07 | 2024062219550783290268839514798 | 401 |     "
            "423.215µs |      172.22.0.7 |    POST /v1/chat/completions",  # one-api #1553
        ),
    ),
    rule(
        "gin_status_forbidden",
        Kind.AUTH,
        _gin("403"),
        role="weak",
        hint=Msg("rule.reported_status_forbidden"),
        examples=(
            "2024-06-23 03:36:42 [GIN] 2024/06/22 - 19:36:42 | 2024062219364230120484593645821 | 403 |     "
            "532.536µs |      172.22.0.7 |    POST /v1/chat/completions",  # one-api #1553
        ),
    ),
    rule(
        "gin_status_timeout",
        Kind.SLOW_OR_STALLED,
        _gin("408|429|504"),
        role="weak",
        hint=Msg("rule.reported_status_timeout"),
        examples=(
            "[GIN] 2024/05/25 - 02:20:27 | 2024052502202733503658994402104 | 429 |   94.358928ms |    192.168.96.6 "
            "|    POST /v1/embeddings",  # FastGPT #1595 (one-api)
        ),
    ),
    rule(
        "gin_status_500",
        Kind.ENGINE_ERROR,
        _gin(r"5\d\d"),
        role="weak",
        hint=Msg("rule.reported_status_500"),
        examples=(
            # ollama #8983
            '[GIN] 2025/02/10 - 11:20:45 | 500 | 51.787708541s |       127.0.0.1 | POST     "/api/chat"',
        ),
    ),
    # --- a client's own request log: httpx (under the openai library) logs every request with its status ---
    rule(
        "client_request_5xx",
        Kind.ENGINE_ERROR,
        _client(r"5\d\d"),
        role="weak",
        hint=Msg("rule.reported_status_500"),
        examples=(
            '2025-09-05 15:26:55,667 - INFO - HTTP Request: POST https://api.publicai.co/v1/chat/completions '
            '"HTTP/1.1 500 Internal Server Error"',  # chat.publicai.co #9
        ),
    ),
    rule(
        "client_request_not_found",
        Kind.MODEL_NOT_FOUND,
        _client("404"),
        role="weak",
        hint=Msg("rule.not_found_error"),
        examples=('HTTP Request: POST http://127.0.0.1:11434/chat/completions "HTTP/1.1 404 Not Found"',),  # Plush #152
    ),
    # --- Go's and Node's runtime words, whoever prints them ---
    rule(
        "go_deadline_exceeded",
        Kind.SLOW_OR_STALLED,
        # Go's context timeout (and gRPC's status for it): the caller stopped waiting for an answer
        r"context deadline exceeded|\bDeadlineExceeded\b",
        role="weak",
        hint=Msg("rule.generic_timeout"),
        examples=(
            "Error: ollama: context deadline exceeded",  # GoClaw #926
            "req id: 9c9c57be01 PlugininvokeError: \"args':0,\"error type\":\"ValueError,\"message\":\"(message':"
            "context deadline exceeded','type':'server_error'\"",  # Dify #35485
        ),
    ),
    rule(
        "node_connection_reset",
        Kind.CONNECTION,
        # Node's code for a connection the other side reset ('Error: read ECONNRESET', 'errno: -104')
        r"\bECONNRESET\b",
        role="weak",
        hint=Msg("rule.connection_reset"),
        examples=("Error: read ECONNRESET",),  # vLLM #2484
    ),
    rule(
        "proxy_access_phase_error",
        Kind.AUTH,
        # an error raised in nginx/OpenResty's access phase, where a proxy in front of vLLM checks the request's
        # key or token (access_by_lua): the request was stopped before it reached the model (bifrost #1920: no
        # Authorization header); an error the same proxy logs in another phase (upstream, content) is no match
        r"^\[lua\] access_by_lua\b",
        levels=("ERROR",),
        role="weak",
        hint=Msg("rule.proxy_access_phase_error"),
        examples=("[lua] access_by_lua(nginx.conf:40):13: method=POST uri=/v1/chat/c...",),
    ),
    # --- the gateways' and clients' own words in Chinese ---
    rule(
        "zh_token_refused",
        Kind.AUTH,
        # one-api/new-api: invalid, expired or missing token, a token that may not use the model;
        # Cherry Studio: authentication failed, check the API key
        r"无效的令牌|令牌已过期|未提供令牌|令牌无权使用模型|身份验证失败",
        hint=Msg("rule.reported_status_auth"),
        examples=(
            "2024-06-23 03:55:07 [ERR] 2024/06/22 - 19:55:07 | 2024062219550783290268839514798 | 无效的令牌",
            "2024-06-23 03:36:42 [ERR] 2024/06/22 - 19:36:42 | 2024062219364230120484593645821 | "
            "该令牌无权使用模型：qwen2",
        ),  # one-api #1553
    ),
    rule(
        "zh_upstream_saturated",
        Kind.SLOW_OR_STALLED,
        # one-api/new-api's 429: 'the group's upstream load is saturated, try again later'
        r"上游负载已饱和",
        role="weak",
        hint=Msg("rule.reported_status_timeout"),
        examples=("[ERR] 2024/05/25 - 02:20:27 | 2024052502202733503658994402104 | relay error (channel #5): "
                  "当前分组上游负载已饱和，请稍后再试 (request id: 2024052502202733503658994402104)",),  # FastGPT #1595
    ),
    rule(
        "zh_cannot_connect",
        Kind.CONNECTION,
        # a client's note that it cannot reach its server ('cannot connect to the API server'); Windows' own
        # words for a refused connection are read by their code (rules_shapes.py)
        r"无法连接(?:到)?[^\n，。]{0,12}?(?:API|服务|server)",
        hint=Msg("rule.connection_refused"),
        examples=(
            # Langchain-Chatchat #1165
            "依据源文件重建向量库失败：无法连接API服务器，请确认已执行python server\\api.py",
        ),
    ),
    rule(
        "zh_timed_out",
        Kind.SLOW_OR_STALLED,
        # 'API communication / request / response timed out' (not a setting: 请求超时时间 is a timeout's length)
        r"(?:通信|请求|响应)超时(?!时间|时长|设置|[:：=]\s*\d)",
        role="weak",
        hint=Msg("rule.generic_timeout"),
        # Langchain-Chatchat #4096
        examples=("API通信超时，请确认已启动FastChat与API服务（详见Wiki '5. 启动 API 服务或 Web UI'）。（timed out）",),
    ),
    rule(
        "zh_no_channel_for_model",
        Kind.MODEL_NOT_FOUND,
        # one-api/new-api: 'no channel available for model X under group default' (a name no channel serves)
        r"对于模型[^\n]{0,120}无可用渠道",
        hint=Msg("rule.model_lookup_not_found"),
        examples=("undefined 当前分组 default 下对于模型 xxxx 无可用渠道",),  # FastGPT #2455
    ),
)
