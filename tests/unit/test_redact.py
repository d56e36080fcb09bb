"""Redaction of every credential shape the log tail, the panel and the app log may meet (issue 14, item 6)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from chainlit_app import applog
from chainlit_app.diagnostics import LineClassifier, LogRing
from chainlit_app.diagnostics.redact import redact, redact_tree
from chainlit_app.engine.logfiles import phase_only
from chainlit_app.monitor import Endpoint, Monitor

GITHUB_PAT = "ghp_" + "a1B2c3D4e5" * 4
FINE_GRAINED = "github_pat_11ABCDEFG0" + "x9Y8z7W6v5" * 5
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GOOGLE = "AIza" + "SyA1234567890abcdefghijklmnopqrstuv"
SLACK = "xoxb-" + "123456789012-abcdefABCDEF"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXBhcnQtaGVyZQ"


@pytest.mark.parametrize(
    ("line", "secrets_in_it", "kept"),
    [
        # URLs with credentials: the password goes, the user and host stay
        ("sqlalchemy.exc.OperationalError: connection to postgresql://chat:hunter2pw@db.internal:5432/chat failed",
         ["hunter2pw"], "postgresql://chat:***@db.internal:5432/chat"),
        ("DATABASE_URL=postgresql+asyncpg://chat:p%40ss%20word@db/chat?sslmode=require", ["p%40ss%20word"],
         "chat:***@db/chat"),
        ("git clone https://x-access-token:ghs_abcdefghijklmnopqrstuvwxyz12@github.com/o/r.git",
         ["ghs_abcdefghijklmnopqrstuvwxyz12"], "github.com/o/r.git"),
        (f"remote: https://{GITHUB_PAT}@github.com/o/r.git", [GITHUB_PAT], "@github.com/o/r.git"),
        ("INFO attach: connecting to http://admin:s3cr3t-pw@127.0.0.1:8000/v1", ["s3cr3t-pw"], "http://admin:***@"),
        # Authorization headers, Basic as well as Bearer, in curl commands, JSON and header dumps
        ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' http://127.0.0.1:8000/v1/models",
         ["dXNlcjpwYXNzd29yZA=="], "Authorization: Basic ***"),
        ('{"headers": {"authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l", "accept": "*/*"}}',
         ["YWxhZGRpbjpvcGVuc2VzYW1l"], '"accept": "*/*"'),
        ("Proxy-Authorization: Basic cHJveHk6cHc=", ["cHJveHk6cHc="], "Proxy-Authorization: Basic ***"),
        ("refused: Authorization: Basic dXNlcjpwYXNz; token=two words", ["dXNlcjpwYXNz", "two words"],
         "Authorization: Basic ***; token=***"),
        ("-H 'Authorization: Bearer tok-AbC123xyz'", ["tok-AbC123xyz"], "Bearer ***"),
        # token= / secret= / password= pairs, the whole value (spaces included)
        ("login for bob failed: password=correct horse battery staple", ["correct", "horse", "battery", "staple"],
         "login for bob failed: password=***"),
        ('password="correct horse battery" user=bob', ["correct", "horse", "battery"], 'user=bob'),
        ("secret='two words' next=1", ["two words"], "next=1"),
        ("conninfo: host=db user=chat password=hunter2 dbname=chat", ["hunter2"], "dbname=chat"),
        ("GET /auth/callback?code=1&token=abc123def&state=xyz HTTP/1.1", ["abc123def"], "&state=xyz"),
        ("client_secret = my client secret value", ["my client secret value"], "client_secret = ***"),
        ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345", ["hf_abcdefghijklmnopqrstuvwxyz012345"], "HF_TOKEN=***"),
        ("export CHAT_ADMIN_PASSWORD='My Long Passphrase'", ["My Long Passphrase"], "CHAT_ADMIN_PASSWORD='***'"),
        ("X-Api-Key: abc-123-def", ["abc-123-def"], "X-Api-Key: ***"),
        ("db:\n  password: my yaml pw\n  host: db", ["my yaml pw"], "host: db"),
        # GitHub and cloud key shapes, anywhere in a line
        (f"token in env: {GITHUB_PAT}", [GITHUB_PAT], "token in env"),
        (f"using {FINE_GRAINED} for the hub", [FINE_GRAINED], "for the hub"),
        ("glpat-abcdefghijKLMNOPQRST12 is set", ["glpat-abcdefghijKLMNOPQRST12"], "is set"),
        (f"aws: {AWS_ID} aws_secret_access_key={AWS_SECRET}", [AWS_ID, AWS_SECRET], "aws: "),
        (f"google key {GOOGLE} loaded", [GOOGLE], "loaded"),
        (f"slack {SLACK}", [SLACK], "slack"),
        (f"cookie access_token={JWT}; Path=/", [JWT], "Path=/"),
        (f"pasted session: {JWT}", [JWT], "pasted session: "),
        ("-----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEA7", ["MIIEowIBAAKCAQEA7"], "PRIVATE KEY-----"),
        # vLLM's own lines: argv and non-default args echo keys and tokens
        ("python -m vllm.entrypoints.openai.api_server --api-key=tok-AbC123xyz --port 8000", ["tok-AbC123xyz"],
         "--port 8000"),
        ("vllm serve m --hf-token hf_shorttok --api-key 'two words'", ["hf_shorttok", "two words"], "vllm serve m"),
        ("(APIServer pid=5649) INFO 11-30 15:01:50 [utils.py:233] non-default args: {'model': '/srv/m', "
         "'api_key': ['k-123456', 'k-7890ab'], 'hf_token': 'hf_tok_value'}", ["k-123456", "k-7890ab", "hf_tok_value"],
         "'model': '/srv/m'"),
        ("Namespace(host='0.0.0.0', api_key=['abc def'], port=1)", ["abc def"], "port=1"),
        ('{"api_key": "tok-AbC123xyz", "model": "tiny"}', ["tok-AbC123xyz"], '"model": "tiny"'),
    ],
)
def test_every_credential_shape_is_masked(line: str, secrets_in_it: list[str], kept: str) -> None:
    masked = redact(line)
    print(f"\n{line!r}\n -> {masked!r}")
    for secret in secrets_in_it:
        assert secret not in masked
    assert "***" in masked and kept in masked


@pytest.mark.parametrize(
    "line",
    [
        "INFO non-default args: {'max_tokens': 600, 'model': '/srv/m', 'api_key': '***'}",
        "(EngineCore pid=5700) INFO 11-30 15:01:54 [core.py:133] Initializing a V1 LLM engine (v0.11.0) with "
        "config: model='/tmp/models/demo', tokenizer='/tmp/models/demo', skip_tokenizer_init=False",
        "INFO 11-30 15:02:09 [gpu_worker.py:1] Maximum concurrency for 2048 tokens per request: 1.00x",
        "special tokens: eos_token=</s>, bos_token=<s>, pad_token_id=0, max_tokens=512, prompt_tokens: 12",
        "Basic checks passed; first token: 0.31 s; secrets folder is /srv/data",
        'INFO:     127.0.0.1:59356 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
        "ssh://git@github.com/o/r.git and http://user@host/ and http://127.0.0.1:8000/v1",
        # logprobs' pieces of the vocabulary: the mojibake a decode_error finding quotes (vLLM #16659, #19177)
        "{113233: Logprob(logprob=-0.38, rank=1, decoded_token='è£¤åŃĲ')}",
        "{'token': 'æĺ¯', 'logprob': -0.1649082601070404, 'bytes': [195, 166, 196, 186, 194, 175]}",
        '    "decoded_token": "Ġthat"',
        '            "token": "\ufffd",',
        # a key that is missing says why a request got 401 (LiteLLM #7287)
        '{"error":{"message":"Authentication Error, Invalid proxy server token passed. valid_token=None."}}',
        "invalid llm config: {'api_key': None, 'password': '', 'hf_token': null}",
    ],
)
def test_ordinary_lines_are_left_alone(line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ('{"token": "abcdef1234567890"}', "abcdef1234567890"),  # a field named token with an ASCII value
        # a letter outside ASCII beside a credential does not make it a piece of the vocabulary
        ("curl -d token=9f8e7d6c5b4a3210ffee — retrying", "9f8e7d6c5b4a3210ffee"),
        ("token = 9f8e7d6c5b4a3210ffee (läuft ab)", "9f8e7d6c5b4a3210ffee"),
        ("{'token': ['9f8e7d6c5b4a3210ffee', 'é']}", "9f8e7d6c5b4a3210ffee"),
        ('"token": "9f8e7d6c5b4a3210ffeé"', "9f8e7d6c5b4a3210ffe"),
        ('decoded_token="s3cr3tπ"', "s3cr3t"),
        ("decoded_token='plain'", "plain"),  # an ASCII piece is masked: nothing tells it from a credential
        ("password=None of your business", "None of your business"),
        ("'api_key': 'Nonesuch-123'", "Nonesuch-123"),
    ],
)
def test_values_that_may_be_credentials_are_still_masked(line: str, secret: str) -> None:
    assert secret not in redact(line)


def test_the_current_launch_key_is_masked_as_a_literal_whatever_its_shape() -> None:
    key = "Zq3_wL9-pX2mK7vB1nC5dF8h"  # secrets.token_urlsafe(24): no shape gives it away
    line = f"WARNING 12-01 [api_server.py:1] request with key {key} refused"
    assert key in redact(line)  # no pattern knows it ...
    assert key not in redact(line, [key]) and "request with key *** refused" in redact(line, [key])


def test_redact_tree_masks_every_string_of_a_payload() -> None:
    payload = {"engine": {"progress": "connecting to http://u:pw1234@h/v1", "port": 8000},
               "findings": [{"evidence": [{"text": "key K-LIVE-123 refused"}]}]}
    cleaned = redact_tree(payload, ["K-LIVE-123"])
    assert cleaned == {"engine": {"progress": "connecting to http://u:***@h/v1", "port": 8000},
                       "findings": [{"evidence": [{"text": "key *** refused"}]}]}


def test_log_ring_and_classifier_ask_for_the_key_at_read_time() -> None:
    keys: list[str] = []
    ring = LogRing(10, secrets=lambda: keys)
    ring.append(1, "INFO request 1 with key Zq3wL9pX2mK7 accepted")
    keys.append("Zq3wL9pX2mK7")  # the launch that chose this key started after the ring was made
    assert ring.tail()[0]["text"] == "INFO request 1 with key *** accepted"
    classifier = LineClassifier(lambda: keys)
    findings = [*classifier.feed("OSError: [Errno 98] Address already in use Zq3wL9pX2mK7", 1), *classifier.finish()]
    assert findings and all("Zq3wL9pX2mK7" not in f.text for f in findings)


def test_monitor_masks_the_current_and_previous_launch_keys() -> None:
    endpoint = Endpoint("http://127.0.0.1:1", "first-launch-key")
    monitor = Monitor(lambda: None, lambda: endpoint)
    assert monitor.secrets() == ("first-launch-key",)
    endpoint = Endpoint("http://127.0.0.1:2", "second-launch-key")
    assert monitor.secrets() == ("first-launch-key", "second-launch-key")
    endpoint = Endpoint("http://127.0.0.1:3", "EMPTY")  # a server without a key: nothing to mask
    assert "EMPTY" not in monitor.secrets()


@pytest.fixture
def app_log() -> Iterator[io.StringIO]:
    """A real handler on a real logger, with the app's redaction installed."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(applog.LOG_FORMAT))
    logger = logging.getLogger("test.redact")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    applog.install_redaction()
    applog.mask_also("test key", lambda: ["LiveKey-0123456789"])
    try:
        yield stream
    finally:
        logger.removeHandler(handler)
        applog.mask_also("test key", ())


def test_app_log_records_are_masked_in_message_arguments_and_tracebacks(app_log: io.StringIO) -> None:
    log = logging.getLogger("test.redact")
    log.info("attach failed for %s", "postgresql://chat:hunter2pw@db/chat")
    log.warning("login form posted password=%s", "two words")
    log.info("request used key %s", "LiveKey-0123456789")
    try:
        raise RuntimeError("server said: Authorization: Basic dXNlcjpwYXNz")
    except RuntimeError:
        log.exception("chat request failed")
    text = app_log.getvalue()
    print(text)
    for secret in ("hunter2pw", "two words", "LiveKey-0123456789", "dXNlcjpwYXNz"):
        assert secret not in text
    assert "postgresql://chat:***@db/chat" in text and "Authorization: Basic ***" in text
    assert "RuntimeError" in text  # the traceback is kept, masked


def test_uvicorn_access_records_keep_their_positional_arguments(app_log: io.StringIO) -> None:
    record = logging.getLogger("uvicorn.access").makeRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:1", "GET", "/cb?token=abc123def&x=1", "1.1", 200), None)
    assert record.args == ("127.0.0.1:1", "GET", "/cb?token=***&x=1", "1.1", 200)


@pytest.mark.parametrize(
    ("progress", "shown"),
    [
        ("Starting to load model /srv/models/secret-project/ernie...", "loading"),
        ("Loading weights took 0.36 seconds", "loading"),
        ("non-default args: {'model': '/srv/models/m', 'api_key': '***'}", "boot"),
        ("Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)", "serving"),
        ("connecting to http://admin:pw@10.0.0.5:8000", "connecting"),
        ("waiting for a usable vLLM server at http://10.0.0.5:8000", "waiting for a usable vLLM server"),
        ("launching vLLM", "launching vLLM"),
    ],
)
def test_users_see_the_phase_of_a_progress_line_not_its_paths(progress: str, shown: str) -> None:
    assert phase_only(progress) == shown
