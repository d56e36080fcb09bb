"""Special tokens kept in decoded text: one tokenizer marker again and again in a row.

A tokenizer's special tokens (padding, masks, a streaming model's `[STREAMING_PAD]`) are control ids that the
decoder drops when it skips special tokens. Text in which the same marker stands four or more times in a row was
decoded without skipping them (vLLM's beam search before PR #56211 ignored `skip_special_tokens`), or the model
generated padding: a decoding fault (decode_error), not a model that loops (the words between the markers are
fine). The marker shapes are the tokenizers' own (`[UPPER_CASE]` with an underscore, BERT's `[PAD]`, `<pad>`,
`<|pad|>`), and only the same marker repeated counts: a log prefix such as `[ERROR][ENGINE]` varies, and a
template quoted in a prompt writes each marker once per turn. Turn and end markers (`<|im_end|>`, `</s>`) are left
to `turn_markers.py` (a template that is not the model's), and `<unk>` runs to `answers.is_garbled`.
"""

from __future__ import annotations

import re

SPECIAL_TOKENS_KEPT = "special_tokens_kept"

_MARKER = r"\[[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\]|\[(?:PAD|MASK|SEP|CLS)\]|<\|?(?:pad|mask|sep|cls)\w{0,30}\|?>"
_RUN = re.compile(rf"({_MARKER})(?:\s*\1){{3,}}")


def special_token_run(text: str) -> str | None:
    """The marker that stands four or more times in a row in `text`, if any."""
    found = _RUN.search(text[:4000])
    return found.group(1) if found else None
