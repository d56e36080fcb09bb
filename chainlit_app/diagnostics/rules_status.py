"""Rules for an HTTP status a client or a gateway reports in its own words, and Docker refusing to start.

Data only: see `rules.py` for what the fields mean and how the winner is chosen. They come after the
serving rules, so a line whose words name the cause (a Jinja statement quoted in a 500) is named by those.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind


def _reported_status(codes: str, *phrases: str) -> str:
    """An HTTP status in a client's or a gateway's own words: 'failed with status code 403', openai-node's
    '401 status code (no body)', urllib's 'HTTP Error 401', requests' '<Response [503]>', a JSON error
    body's "status": 401 / "code": 503, or a status line's phrase. Access lines ('HTTP/1.1" 500') have
    rules of their own and do not match these."""
    fields = [rf"{q}{key}{q}:\s*{q}?(?:{codes})\b" for q in ('"', "'") for key in ("status", "status_code", "code")]
    return "|".join([
        rf"\bstatus(?:[_ ]?code)?(?!=\")\W{{0,3}}(?:{codes})\b",  # not a Prometheus label: status="500"
        rf"\b(?:{codes}) status code\b",
        rf"\bHTTP(?: error| status)?\W{{0,3}}(?:{codes})\b",
        rf"<Response \[(?:{codes})\]>",
        # a proxy's HTML error page (nginx, Envoy, a load balancer)
        rf"<title>\s*(?:{codes})\b",
        rf"<h1>\s*(?:{codes})\b",
        rf"\bError:? (?:{codes})\b(?! ?(?:tokens|bytes|ms|s)\b)",  # openai-node: 'Error: 429 Rate limit reached'
        # a retrying client that gave up, with the last status: 'Failed to request ... after 3 attempts: 504'
        rf"\battempts?\W{{0,3}}(?:{codes})\b(?! ?(?:tokens|bytes|ms|s)\b)",
        rf"\bretries\W{{0,3}}(?:{codes})\b(?! ?(?:tokens|bytes|ms|s)\b)",
        *fields,
        *(rf"\b{p}\b" for p in phrases),
    ])


STATUS_RULES: tuple[Rule, ...] = (
    # --- an HTTP status a client reports in its own words (not an access line; those are above) ---
    rule(
        "reported_status_auth",
        Kind.AUTH,
        _reported_status("401|unauthorized|unauthenticated")
        + r"|\b(?:access|auth\w*|bearer|api|id)[ _-]?token is (?:invalid|expired)\b",
        hint=Msg("rule.reported_status_auth"),
        examples=(
            'Dify 401. {"code": "unauthorized", "message": "Access token is invalid", "status": 401}',  # AstrBot #971
        ),
    ),
    # a server that names the missing key itself answers with whatever status it likes (LocalAI: 'Server
    # error ... status=500'): the error's own words say the request carried no valid API key
    rule(
        "error_names_missing_api_key",
        Kind.AUTH,
        r"\bmissing or (?:malformed|invalid) api[ _-]?key\b|\b(?:malformed|missing) api[ _-]?key\b",
        hint=Msg("rule.unauthorized"),
        examples=(
            'ai-api  | 8:40AM ERR Server error error="missing or malformed API Key" ip=127.0.0.1 '
            'latency="364.984µs" method=GET status=500 url=/readyz',  # LocalAI #3655
        ),
    ),
    rule(
        "reported_status_forbidden",
        Kind.AUTH,
        _reported_status("403|forbidden", "403 Forbidden"),
        # a symptom: gateways answer 403 for a key that may not use a model, and some for a model they lack
        role="weak",
        hint=Msg("rule.reported_status_forbidden"),
        examples=("Credentials validation failed with status code 403",),  # GPUStack #4689
    ),
    rule(
        "reported_status_unavailable",
        Kind.CONNECTION,
        _reported_status("502|503"),
        role="weak",
        hint=Msg("rule.reported_status_unavailable"),
        examples=(
            "Request failed with status code 502",
            "<Response [503]>",
            "<html><head><title>502 Bad Gateway</title></head>",
        ),
    ),
    rule(
        "reported_status_timeout",
        Kind.SLOW_OR_STALLED,
        _reported_status("408|429|504"),
        role="weak",
        hint=Msg("rule.reported_status_timeout"),
        examples=(
            "openai request failed with status code 504",
            "urllib.error.HTTPError: HTTP Error 429: Too Many Requests",
            "<html><head><title>504 Gateway Time-out</title></head>",
            "RuntimeError: Failed to request to remote API after 3 attempts: 504 <!DOCTYPE html",  # evalscope #318
        ),
    ),
    rule(
        "reported_status_method_not_allowed",
        # the openai client's POST answered 405: vLLM's OpenAI routes take POST, so whatever answered is not
        # them (a proxy in front, Cloudflare in vLLM #7463, or a base URL that leads to another server or path)
        Kind.CONNECTION,
        r"\bError code: 405\b",
        hint=Msg("rule.reported_status_method_not_allowed"),
        examples=("openai.APIStatusError: Error code: 405 - {'detail': 'Method Not Allowed'}",),  # vLLM #7463
    ),
    rule(
        "reported_status_500",
        Kind.ENGINE_ERROR,
        _reported_status("500"),
        role="weak",
        hint=Msg("rule.reported_status_500"),
        examples=(
            'API request failed with status 500: {"error":{"code":500,"message":"Value is not callable"}}',
            "Error: 500 status code (no body)",  # openai-node
        ),
    ),
    rule(
        "container_restarting",
        Kind.STARTUP_FAILURE,
        r"Back-off restarting failed container|CrashLoopBackOff",
        role="weak",
        hint=Msg("rule.container_restarting"),
        examples=(
            "Warning  BackOff  2m (x10 over 5m)  kubelet  Back-off restarting failed container vllm in pod vllm-0",
        ),
    ),
    rule(
        "container_not_started",
        Kind.STARTUP_FAILURE,
        r"Error response from daemon",
        role="weak",
        hint=Msg("rule.container_not_started"),
        examples=(
            "docker: Error response from daemon: failed to create task for container: failed to create shim task",
        ),
    ),
    # A proxy's access record of a 200 whose body was zero bytes (`status_200_zero_bytes`): the status says
    # success, but nothing reached the client, so the answer it shows is empty (Cocoon #49's worker proxy).
    rule(
        "status_200_zero_bytes",
        Kind.EMPTY_OUTPUT,
        r"\bHTTP(?:/[\d.]+)? 200\b.{0,40}?\b(?:size|bytes|body_bytes_sent|content[-_]length)[=:] ?0\b",
        role="weak",
        hint=Msg("rule.response_empty"),
        examples=("HTTP 200 size=0",),
    ),
)
