"""A passage said again with its markup moved (`passage_repeats_under_markup`): a loop no exact repetition shows.

A speech-style model quantized with GPTQModel (GPTQModel #2699) wrote one Chinese passage three times in a
row, each copy with its `<strong>`, `<prolong>` and `[Pause_3]` tags on other words: the copies differ
character by character, so neither a repeated unit nor repeated lines shows the loop. With the inline tags
taken out, the passage's clauses come back word for word. Read only where such tags are present (that is what
hides the repetition; plain text that repeats is read by `answer_loops.is_looping`): at least MIN_CLAUSES
distinct clauses of MIN_CLAUSE letters or more, each said MIN_TIMES times, together half the text's clauses.
A song's chorus repeats one block, not half of a long answer's clauses under changing tags.
"""

from __future__ import annotations

import re
from collections import Counter

from .scripts import LETTER

MECHANISM_ID = "passage_repeats_under_markup"
# an inline tag: HTML-like ('<strong>', '</prolong>') or a bracketed marker ('[Pause_3]', '[laugh]')
_INLINE_TAG = re.compile(r"</?[A-Za-z][\w-]{0,20}>|\[[A-Za-z][\w-]{0,20}\]")
_CLAUSE_BREAK = re.compile(r"[\s,.;:!?，。；：！？、…\"'“”‘’()（）]+")
MIN_TAGS = 3
MIN_CLAUSE = 4
MIN_CLAUSES = 3
MIN_TIMES = 3
MIN_SHARE = 0.5


def passage_repeats_under_markup(text: str) -> bool:
    """True when, its inline tags taken out, the text says the same clauses MIN_TIMES times or more."""
    if len(_INLINE_TAG.findall(text)) < MIN_TAGS:
        return False
    clauses = [c for c in _CLAUSE_BREAK.split(_INLINE_TAG.sub("", text))
               if len(LETTER.findall(c)) >= MIN_CLAUSE]
    counts = Counter(clauses)
    repeated = {c: n for c, n in counts.items() if n >= MIN_TIMES}
    return len(repeated) >= MIN_CLAUSES and sum(repeated.values()) >= MIN_SHARE * len(clauses)
