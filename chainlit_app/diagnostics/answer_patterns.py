"""A sentence pattern said again and again (`sentence_pattern_loop`): a loop that no exact repetition shows.

A model caught in a loop often varies a few words each time: Qwen2.5-32B answering 'HI' (vLLM #15815) wrote
nine paragraphs in a row that open with '如果这题意为对数函数的' and close with '答案是$\\boxed{C}$。', each a
little different, so neither a repeated unit nor repeated lines shows it. Five paragraphs in a row or more
that share their opening and their ending (at least six and eight characters, letters in both) are one
pattern said over and over. Paragraphs are split at real newlines and at the escaped `\\n` a posted body or a
printed string keeps. Lines of code or configuration (an `=` in them), table rows and list items are not
paragraphs of prose: a block of `parser.add_argument(…, default=None)` lines, or a list whose items end alike,
legitimately shares both ends.
"""

from __future__ import annotations

import re
from itertools import pairwise

from .scripts import LETTER

MECHANISM_ID = "sentence_pattern_loop"
_PARAGRAPH_BREAK = re.compile(r"(?:\\n|\n)+")
# a list item (a bullet, a number, a heading): a list's items legitimately share their openings and endings
_LIST_ITEM = re.compile(r"(?:[-*•+>#]|\d+[.)、:]|[a-zA-Z][.)]\s)")
MIN_RUN = 5
MIN_PARAGRAPH = 20
OPENING = 6
ENDING = 8


def _prose(paragraph: str) -> bool:
    return (len(paragraph) >= MIN_PARAGRAPH and "=" not in paragraph and not paragraph.startswith("|")
            and not _LIST_ITEM.match(paragraph))


def _shared(a: str, b: str) -> bool:
    opening, ending = a[:OPENING], a[-ENDING:]
    return (b[:OPENING] == opening and b[-ENDING:] == ending and bool(LETTER.search(opening))
            and bool(LETTER.search(ending)))


def sentence_pattern_loop(text: str) -> bool:
    """True when MIN_RUN paragraphs of prose in a row share their opening and their ending."""
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text)]
    run = 1
    for previous, current in pairwise(paragraphs):
        if _prose(previous) and _prose(current) and _shared(previous, current):
            run += 1
            if run >= MIN_RUN:
                return True
        else:
            run = 1
    return False
