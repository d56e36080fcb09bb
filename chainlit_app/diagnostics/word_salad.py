"""Words drawn without grammar (`word_salad`): an answer of real words in no sentence, shown once.

A model whose weights, kernels or sampling broke still emits real vocabulary pieces, so neither U+FFFD nor a
repetition shows: 'embarked Sol existed trainer Tunisia replacing Wash Bac knowing franchise Premier sun …'.
What no writer produces is a long run of words without the short words every sentence needs: in prose of
any European language function words ('the', 'of', 'and', 'de', 'la', 'und', …) are a third or more of the
words; in terse technical notes still more than one in ten. Tokens drawn at random from a vocabulary of
~100k pieces hardly ever are one of them, and many are capitalised in mid-sentence. So a text reads as word
salad when it has at least 40 words of letters, almost all of its space-separated tokens are such words
(not code, paths, numbers or a table), under 6 % are function words, and between 15 % and 70 % are
capitalised (a list of names is all capitals, a list of flags none; both also separate their items).
"""

from __future__ import annotations

import re

RULE_ID = "word_salad"
MIN_WORDS = 40
_LETTERS = re.compile(r"^[^\W\d_]+(?:[-'][^\W\d_]+)?$")
_EDGE = "\"'`()[]{}*.,;:!?，。、"
# The commonest short words of English, French, German, Spanish, Italian and Portuguese.
_FUNCTION_TEXT = """
a an the and or but if of to in on at by for with from as is are was were be been it its this that these those
he she we you they i me my your our their his her not no do does did have has had will would can could should
there here what which who when where how so than then also just into about over after before
le la les un une des de du et ou est sont dans pour par sur avec que qui pas ce cette il elle nous vous ils
der die das ein eine und oder ist sind nicht mit von zu auf für den dem des im ich es sie wir
el los las unos unas y o es son en por para con que del al no se lo su
il lo gli uno una e di da per con che non del della
o os um uma e ou em do da dos das com não que
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())


def _words(text: str) -> tuple[list[str], int]:
    """The tokens that are words of letters (edge punctuation stripped), and the count of all tokens."""
    tokens = text.split()
    words = [w for w in (t.strip(_EDGE) for t in tokens) if _LETTERS.match(w)]
    return words, len(tokens)


def is_word_salad(text: str) -> bool:
    """True when the text is a long run of words with almost no function words (see the module's note)."""
    words, tokens = _words(text[:4000])
    if len(words) < MIN_WORDS or len(words) < 0.8 * tokens:
        return False
    function = sum(w.lower() in _FUNCTION_WORDS for w in words)
    if function >= 0.06 * len(words):
        return False
    separated = sum(t[-1:] in ",;:|" for t in text[:4000].split())
    if separated >= 0.25 * tokens:
        return False  # items of a list, each closed by a separator
    capitalised = sum(w[:1].isupper() for w in words) / len(words)
    return 0.15 <= capitalised <= 0.7
