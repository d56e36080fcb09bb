"""Mask secrets in text before it is shown, stored or printed.

Evidence lines come from logs that may contain the API key (vLLM echoes its argv), bearer
headers pasted into curl commands, or Hugging Face tokens. Nothing of that may reach the panel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

# (pattern, replacement) pairs; group 1 is kept, the secret part is replaced.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # --api-key X, --api_key=X, --hf-token X
    (re.compile(r"(--(?:api[-_]key|hf[-_]token|token)(?:\s+|=))(?!\*\*\*)(['\"]?)[^\s'\"]+\2"), r"\1" + MASK),
    # Authorization: Bearer X  /  "Authorization": "Bearer X"  /  -H 'Authorization: Bearer X'
    (re.compile(r"(\bBearer\s+)(?!\*\*\*)[A-Za-z0-9._~+/=:-]+", re.IGNORECASE), r"\1" + MASK),
    # api_key=X, api-key: X, "api_key": "X", 'api_key': 'X', VLLM_API_KEY=X, CHAT_API_KEY=X, HF_TOKEN=X
    (
        re.compile(
            r"((?:[A-Z_]*API_KEY|api[-_]?key|HF_TOKEN|HUGGING_FACE_HUB_TOKEN|access[-_]token|secret|"
            r"password)['\"]?\s*[:=]\s*['\"]?)(?!\*\*\*)[^\s'\",}]+",
            re.IGNORECASE,
        ),
        r"\1" + MASK,
    ),
    # Hugging Face tokens and OpenAI-style keys anywhere in the text.
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), MASK),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Return `text` with the given secrets and well-known credential shapes replaced by ***."""
    for secret in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text
