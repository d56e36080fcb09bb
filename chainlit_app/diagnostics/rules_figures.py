"""Rules that compare the figures a message prints, where the words alone say nothing.

- A prompt's token count printed beside the model's maximum length, the count the larger
  (ms-swift over vLLM: `max_model_len(40960) - num_tokens(118444) < max_tokens(1024). Setting max_tokens:
  -77484`): whoever prints the two figures, a prompt longer than the context is context_length. The same
  words with the count below the maximum (a budget trimmed to what is left) name nothing.

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

import re

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

_VALUE = r"\s*(?:\(|=|:|\bis\b|\bof\b)?\s*(\d[\d,]*)"
# the model's maximum length in the names its settings and servers print
_MAXIMUM = re.compile(r"\b(?:max_model_len|max_position_embeddings|model_max_length|max_seq_len(?:gth)?|"
                      r"max_context_length|context (?:length|window)|n_ctx)\b" + _VALUE, re.IGNORECASE)
# the prompt's token count
_COUNT = re.compile(r"\b(?:num_tokens|num_prompt_tokens|prompt_tokens|input_tokens|prompt_len|input_len|"
                    r"prompt length|input length|tokens in (?:the )?prompt)\b" + _VALUE, re.IGNORECASE)


def prompt_exceeds_maximum(message: str) -> bool:
    """True when the message prints a prompt's token count larger than the model's maximum length."""
    maximum, count = _MAXIMUM.search(message), _COUNT.search(message)
    if maximum is None or count is None:
        return False
    return int(count.group(1).replace(",", "")) > int(maximum.group(1).replace(",", ""))


FIGURE_RULES: tuple[Rule, ...] = (
    rule(
        "prompt_count_above_maximum",
        Kind.CONTEXT_LENGTH,
        r"\bmax_model_len\b|\bmax_position_embeddings\b|\bmodel_max_length\b|\bmax_seq_len|\bmax_context_length\b|"
        r"\bcontext (?:length|window)\b|\bn_ctx\b",
        hint=Msg("rule.context_too_long"),
        check=prompt_exceeds_maximum,
        examples=(
            # ms-swift #4893 (Qwen3-8B with YaRN over vLLM)
            "[WARNING:swift] max_model_len(40960) - num_tokens(118444) < max_tokens(1024). Setting max_tokens: -77484",
        ),
    ),
)
