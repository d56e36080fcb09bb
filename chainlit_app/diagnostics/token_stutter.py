"""Tokens accepted twice (`repeated_tokens_in_copy`, `recall_stutters`): the trace of speculative decoding whose
draft tokens were kept beside the target's.

With n-gram or other drafts, a bookkeeping fault in the acceptance step writes a token (or a run of them) a
second time: 'violet violet otter', 'silver ig iguana', 'The cat sits on the cat the mat' (vLLM #40831 with
TurboQuant, vllm-ascend PR #9951 on NPU). Neither reads as a loop (the answer is short and ends with 'stop'),
nor as garbage (every word is a real word). What shows it is a text compared with what it should have been:
- an answer that says one sentence MIN_COPIES times or more, where another copy is that sentence with words
  of its own inserted (the sentence is a subsequence of the longer copy);
- a test's 'expected X, got Y' where Y stutters (a word said twice in a row, or cut and said again whole:
  'ig iguana', '6 66') and X does not.
A song or a drill that repeats a sentence repeats it exactly; an answer that differs from the expected words
without a stutter is a wrong answer, not this.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

MECHANISM_COPY = "repeated_tokens_in_copy"
MECHANISM_RECALL = "recall_stutters"
MIN_COPIES = 3
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_WORD = re.compile(r"\w+")
# 'expected 'X', got 'Y'' as test harnesses print it (quotes of either kind)
_EXPECTED_GOT = re.compile(r"""expected\s+(['"])(?P<want>[^'"]{1,200})\1\s*,?\s*got\s+(['"])(?P<got>[^'"]{1,200})\3""",
                           re.IGNORECASE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _is_subsequence(short: list[str], long: list[str]) -> bool:
    it = iter(long)
    return all(word in it for word in short)


def repeated_tokens_in_copy(text: str) -> bool:
    """True when a sentence said MIN_COPIES times has a copy with its own words inserted into it."""
    sentences = [_words(s) for s in _SENTENCE_END.split(text.strip()) if s.strip()]
    counts = Counter(tuple(s) for s in sentences if len(s) >= 3)
    if not counts:
        return False
    common, times = counts.most_common(1)[0]
    if times < MIN_COPIES:
        return False
    own = set(common)
    return any(len(s) > len(common) and set(s) <= own and _is_subsequence(list(common), s) for s in sentences)


def stutters(words: list[str]) -> bool:
    """A word said twice in a row, or a word cut and then said whole ('ig iguana', '6 66')."""
    return any(a == b or (len(a) < len(b) and b.startswith(a)) for a, b in pairwise(words))


def recall_stutters(message: str) -> bool:
    """True when a line's 'expected X, got Y' has a Y that stutters on X's words and an X that does not."""
    for m in _EXPECTED_GOT.finditer(message):
        want, got = _words(m.group("want")), _words(m.group("got"))
        if got != want and stutters(got) and not stutters(want) and set(got) & set(want):
            return True
    return False
