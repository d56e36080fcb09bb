"""Rules for what clients, agents and other servers print about an answer in their own words: the logs of
a chat bot, an agent loop or an RL rollout often hold no body at all, only the client's note that the text
it received was empty.

Data only: see `rules.py` for what the fields mean and how the winner is chosen. The patterns follow the
shape of such notes, not one program's wording: a response label followed by an empty quoted string, a
logfmt count of the answer's characters that is 0, a sentence saying a model returned nothing, or an
exception class named for an empty response.
"""

from __future__ import annotations

from .rules import Rule, rule
from .taxonomy import Kind

_LABELS = ("response", "reply", "answer", "output", "completion")
# 'full response to system: ""': a label in prose (not a quoted JSON key) and then nothing but an empty string
_EMPTY_QUOTED = "|".join(rf"\b{label}\b[\w ]{{0,30}}:\s*(?:\"\"|'')\s*$" for label in _LABELS)
# logfmt counters of the answer: '{iteration=1, content_chars=0}'
_ZERO_COUNT = "|".join(
    rf"(?<![\"'])\b{label}_(?:chars|length|len)=0\b" for label in ("content", *_LABELS)
)
_RETURNED_NOTHING = (
    r"\breturned no (?:content|response|answer|output|text|completion)\b|"
    r"\breturned an? empty (?:content|response|answer|output|text|completion|string)\b|"
    # exception classes named for it: EmptyModelResponseError, EmptyResponseError, EmptyCompletionError
    r"\bEmpty\w*(?:Response|Output|Completion|Answer|Content)\w*(?:Error|Exception)\b"
)

CLIENT_RULES: tuple[Rule, ...] = (
    rule(
        "client_empty_answer",
        Kind.EMPTY_OUTPUT,
        f"{_EMPTY_QUOTED}|{_ZERO_COUNT}|{_RETURNED_NOTHING}",
        hint="The client received an answer without text: a reasoning model whose text is all in "
        "reasoning_content (read it, or fix --reasoning-parser), or EOS/stop settings that end answers at once.",
        examples=(
            '<Bot> full response to system: ""',  # mindcraft #789
            "[INFO] agent: LLM response without tool calls (direct answer) {iteration=1, content_chars=0, "
            "agent_id=main}",  # picolm #15
            "WARNING Rollout error in group 2, re-scheduling (0/16 complete): EmptyModelResponseError('Model "
            "returned no content, reasoning, and did not call any tools')",  # prime-rl #2316
        ),
    ),
)
