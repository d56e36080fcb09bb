"""A finished output whose text is far shorter than its tokens (`text_shorter_than_tokens`): the detokenizer
dropped what the model generated.

Every token of a vocabulary decodes to at least one character of ASCII text, except special tokens (skipped
when decoding) and byte pieces of a multi-byte character. So an output that stopped by itself with text of
ASCII only and fewer characters than half its token ids (the last id, its stop token, not counted) lost text
in decoding: FastChat over vLLM 0.3.1 printed `CompletionOutput(index=0, text='Tom886', token_ids=[24732, 23,
23, 21, 22, …, 151645], …, finish_reason=stop)` (vLLM #2947: 14 generated tokens, 6 characters, the
incremental detokenizer's offsets out of step). Text with any non-ASCII character is not read: an emoji or a
rare CJK character may take several tokens each.
"""

from __future__ import annotations

MECHANISM_ID = "text_shorter_than_tokens"
MIN_TOKENS = 8


def text_shorter_than_tokens(text: str, token_ids: int, finish_reason: str | None) -> bool:
    """True when an output that finished by itself decoded to fewer ASCII characters than half its tokens."""
    generated = token_ids - 1  # the stop token
    return (finish_reason == "stop" and generated >= MIN_TOKENS and bool(text.strip()) and text.isascii()
            and len(text) < generated / 2)
