"""Which writing systems a text's letters belong to, and whether the foreign ones are only a few letters
spattered into words of one language.

Tokens drawn at random (a tokenizer that does not fit the model, numerics that pick random ids) bring whole
pieces of other scripts: 'запис', '这样', '상', 'اف', each a different letter sequence. A model that loops or
rambles in its own language sometimes slips the same one or two foreign letters into its words ('Schдum',
'Fehl شer', Gemma 4 on vLLM 0.20.1rc, round 13): the text is still one language's, and what it does with it
(loops, means nothing) is degenerate_output, not a decoding fault (`foreign_letters_spattered`).
"""

from __future__ import annotations

import re
from collections import Counter

# A letter of any script (not a digit, not an underscore): what makes a piece of text words rather than
# punctuation, numbers or markup; the one definition the answer readings share.
LETTER = re.compile(r"[^\W\d_]")

# Unicode blocks of the scripts an answer may mix: a normal answer uses one or two (a Chinese answer
# with English names: Han and Latin); garbage from a broken tokenizer or broken numerics mixes many.
_SCRIPTS: tuple[tuple[str, int, int], ...] = (
    ("latin", 0x41, 0x24F), ("greek", 0x370, 0x3FF), ("cyrillic", 0x400, 0x52F), ("hebrew", 0x590, 0x5FF),
    ("arabic", 0x600, 0x6FF), ("devanagari", 0x900, 0x97F), ("thai", 0xE00, 0xE7F), ("hangul", 0x1100, 0x11FF),
    ("kana", 0x3040, 0x30FF), ("han", 0x4E00, 0x9FFF), ("hangul", 0xAC00, 0xD7AF),
)
# At most this many distinct foreign letters, making at most this share of all letters: a slip, not salad.
SPATTER_MAX_DISTINCT = 3
SPATTER_MAX_SHARE = 0.05


def script_of(ch: str) -> str | None:
    """The writing system of one character, None for what is not a letter."""
    code = ord(ch)
    if code < 0x41 or not ch.isalpha():
        return None
    for name, low, high in _SCRIPTS:
        if low <= code <= high:
            return name
    return f"block-{code >> 7:x}"  # a script not in the table (Telugu, Tamil, Georgian, ...)


def scripts_in(text: str) -> set[str]:
    """The writing systems whose letters occur in `text`."""
    return {name for ch in text if (name := script_of(ch)) is not None}


def foreign_letters_spattered(text: str) -> bool:
    """True when one script writes almost all letters and the others add only a few distinct letters (at most
    three, at most 5 % of the letters): the same slip again and again, not tokens of other languages."""
    letters: Counter[str] = Counter()
    by_script: Counter[str] = Counter()
    for ch in text:
        name = script_of(ch)
        if name is not None:
            letters[ch] += 1
            by_script[name] += 1
    if len(by_script) < 2:
        return False
    main, main_count = by_script.most_common(1)[0]
    foreign = [ch for ch in letters if script_of(ch) != main]
    total = sum(by_script.values())
    return len(foreign) <= SPATTER_MAX_DISTINCT and total - main_count <= SPATTER_MAX_SHARE * total


def foreign_letters_in_one_word(text: str, min_words: int = 6) -> bool:
    """True when the letters of every script but the main one stand in a single word of a sentence of several:
    a model's one slip into another script inside a word (`필ософ스`, the Cyrillic spelling of 'philoso-' in a
    Korean answer), where tokens drawn at random mix scripts word after word."""
    words = text.split()
    if len(words) < min_words:
        return False
    by_script: Counter[str] = Counter(name for ch in text if (name := script_of(ch)) is not None)
    if len(by_script) < 2:
        return False
    main = by_script.most_common(1)[0][0]
    mixed = [w for w in words if any((name := script_of(ch)) is not None and name != main for ch in w)]
    return len(mixed) == 1
