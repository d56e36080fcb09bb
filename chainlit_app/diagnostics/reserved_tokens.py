"""An answer that holds a reserved (untrained) special token: the model sampled an id it was never trained on.

Tokenizers keep placeholder ids for later use: Llama 3's `<|reserved_special_token_185|>`, Gemma's `<unused12>`,
BERT's `[unused3]`, Qwen's `<|extra_7|>`, DeepSeek's
`<｜place▁holder▁no▁791｜>`. No training text contains them, so a working model gives them almost no
probability and never writes one; an answer that does was sampled from logits that no longer mean anything
(adapters applied wrongly across tensor-parallel shards, broken numerics), and the words around it are token
soup too ('TumblrgetDbprogetDb MYSQLPlay'). The answer is the model's degenerate output (`reserved_token_in_answer`);
the decoder worked (it printed the token's name). A prompt or a template quotes such names, an answer does not;
still, only an answer cut at its limit or left open (finish_reason 'length' or none) is read, and a text that
writes about tokenizers quoting one name in backticks is not.
"""

from __future__ import annotations

import re

MECHANISM_ID = "reserved_token_in_answer"
_RESERVED = re.compile(r"(?<!`)(<\|reserved_special_token_\d+\|>|<unused\d+>|\[unused\d+\]|<\|extra_\d+\|>|"
                       "<\uff5cplace\u2581holder\u2581no\u2581\\d+\uff5c>)(?!`)")


def reserved_token(text: str, finish_reason: str | None) -> str | None:
    """The reserved token an unfinished answer holds, if any."""
    if finish_reason not in ("length", None, ""):
        return None
    found = _RESERVED.search(text[:4000])
    return found.group(1) if found else None
