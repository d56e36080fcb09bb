"""Mask secrets in text before it is shown, stored or printed.

Evidence lines come from logs that may contain the API key (vLLM echoes its argv), bearer or basic
headers pasted into curl commands, database URLs with their password, `password=` pairs, or tokens of
GitHub, Hugging Face and the clouds. Nothing of that may reach the panel, the chat or the app's log.
The shapes below are matched anywhere; the values a caller knows (the current launch's key) are masked
as literals first, whatever they look like.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

MASK = "***"
# Literal secrets, or a function that names them when asked (the key changes at every launch).
SecretSource: TypeAlias = Iterable[str] | Callable[[], Iterable[str]]
_NOT_MASKED = r"(?!\*\*\*)"

# Names of settings whose value is a secret: password, client_secret, HF_TOKEN, access_token, api-key,
# AWS_SECRET_ACCESS_KEY, ... Tokenizer fields (eos_token=</s>) and counters (max_tokens=) are not secrets.
_SECRET_NAME = (
    r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*(?<!eos_)(?<!bos_)(?<!pad_)(?<!unk_)(?<!sep_)(?<!cls_)(?<!mask_)"
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"credentials?)(?![A-Za-z0-9])"
)
# The same names when followed by ':' and no quotes (YAML, headers): only names that cannot be prose.
_STRONG_NAME = (
    r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*(?:password|passwd|passphrase|secret|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key)(?![A-Za-z0-9])|(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])+token(?![A-Za-z0-9])"
)
# A value: quoted (anything up to the closing quote, spaces included), or bare up to the end of the line,
# a separator (& ; , } ]) or the next `name=` pair, spaces included ("password=correct horse battery").
_QUOTED = r"\"[^\"\n]*\"|'[^'\n]*'"
_LIST = r"\[[^\]\n]*\]"  # api_key=['k'] in an argparse Namespace, 'api_key': ['k'] in vLLM's non-default args
_BARE = r"[^\s&;,'\"}\]]+(?:[ \t]+(?![\w.-]+\s*[=:])[^\s&;,'\"}\]]+)*"


# Values that are no secret and say something: a key that is missing (`api_key: None`, `valid_token=None.`) is
# often the very cause of a 401.
_NO_VALUE = re.compile(r"(?i)(?:none\.?|null|nil)?")
# A logprobs field named just `token` (`{"token": "Ġthat", "logprob": …}`, `decoded_token='è£¤'`) holds a piece of
# the vocabulary: the mojibake a decode_error finding quotes. Only a quoted piece that could be nothing else is
# kept: short, with a letter outside ASCII, and without a run of six ASCII letters or digits that a credential
# could hide in (`"9f8e7d6c5b4a3210ffeé"` is masked).
_VOCABULARY_FIELD = re.compile(r"(?i)[\"']?(?:decoded_)?token[\"']?\s*[:=]")
_CREDENTIAL_RUN = re.compile(r"[A-Za-z0-9]{6}")


def _quoted(value: str) -> bool:
    return len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]


def _vocabulary_piece(name: str, value: str) -> bool:
    piece = value[1:-1]
    return bool(_quoted(value) and _VOCABULARY_FIELD.match(name) and len(piece) <= 16 and not piece.isascii()
                and not _CREDENTIAL_RUN.search(piece))


def _masked_value(match: re.Match[str]) -> str:
    """Keep the name and the quotes, mask what is between them."""
    value = match.group("value")
    if _NO_VALUE.fullmatch(value.strip("\"'")) or _vocabulary_piece(match.group("name"), value):
        return match.group(0)
    if _quoted(value):
        return match.group("name") + value[0] + MASK + value[0]
    return match.group("name") + MASK


# Credentials in a URL, first (a user name may look like a setting: x-access-token:PASS@host):
# postgresql://user:pass@host keeps the user; https://token@host masks it all.
_URL_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)" + _NOT_MASKED + r"[^\s/@]+@"), r"\1" + MASK + "@"),
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)(?!git@)" + _NOT_MASKED + r"[^\s:/@]{8,}@"), r"\1" + MASK + "@"),
)

_VALUE_PATTERNS: tuple[re.Pattern[str], ...] = (
    # --api-key X, --api_key=X, --hf-token X, --token=X, --password 'a b'
    re.compile(r"(?P<name>--(?:api[-_]key|hf[-_]token|token|password|secret)(?:\s+|=))" + _NOT_MASKED
               + rf"(?P<value>{_QUOTED}|[^\s'\"]+)", re.IGNORECASE),
    # Authorization: Basic X / Bearer X / Token X, as a header, a JSON field or a curl -H argument
    re.compile(r"(?P<name>\b(?:Proxy-)?Authorization[\"']?\s*[:=]\s*[\"']?(?:(?:Basic|Bearer|Token|Digest|Negotiate)"
               r"\s+)?)" + _NOT_MASKED + r"(?P<value>[^\s'\",};&]+)", re.IGNORECASE),
    # "password": "a b", 'api_key': 'x', 'api_key': ['x', 'y'] (JSON, Python reprs: vLLM's non-default args)
    re.compile(rf"(?P<name>[\"'](?:{_SECRET_NAME})[\"']\s*:\s*)" + _NOT_MASKED
               + rf"(?P<value>{_QUOTED}|{_LIST}|[^\s,}}\]]+)", re.IGNORECASE),
    # password=a b c, HF_TOKEN=x, token="x", client_secret = 'x', ?api_key=x&
    re.compile(rf"(?P<name>(?:{_SECRET_NAME})[\"']?\s*=\s*)" + _NOT_MASKED
               + rf"(?P<value>{_QUOTED}|{_LIST}|{_BARE})",
               re.IGNORECASE),
    # password: x, X-Api-Key: x, hf_token: x (YAML, headers)
    re.compile(rf"(?P<name>(?:{_STRONG_NAME})\s*:[ \t]*)" + _NOT_MASKED + rf"(?P<value>{_QUOTED}|{_BARE})",
               re.IGNORECASE),
)

_PLAIN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Bearer X anywhere (pasted headers without their name)
    (re.compile(r"(\bBearer\s+)" + _NOT_MASKED + r"[A-Za-z0-9._~+/=:-]+", re.IGNORECASE), r"\1" + MASK),
    # Token shapes: Hugging Face, OpenAI-style, GitHub, GitLab, Slack, AWS, Google, Stripe, JWTs, key blocks.
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), MASK),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"), MASK),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), MASK),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), MASK),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), MASK),
    (re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"), MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MASK),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*(?:-----END [A-Z ]*PRIVATE KEY-----)?"),
     "-----BEGIN PRIVATE KEY----- " + MASK),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Return `text` with the given secrets and well-known credential shapes replaced by ***."""
    for secret in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    for url, repl in _URL_PATTERNS:
        text = url.sub(repl, text)
    for pattern in _VALUE_PATTERNS:
        text = pattern.sub(_masked_value, text)
    for plain, repl in _PLAIN_PATTERNS:
        text = plain.sub(repl, text)
    return text


def secrets_of(source: SecretSource) -> tuple[str, ...]:
    """The literal secrets a source names right now (a function is asked each time)."""
    values = source() if callable(source) else source
    return tuple(s for s in values if s)


def redact_tree(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with every string redacted."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: redact_tree(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_tree(item, secrets) for item in value]
    return value
