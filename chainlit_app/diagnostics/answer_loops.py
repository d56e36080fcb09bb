"""Whether a text loops or runs on past its turn, and what it repeats: the shapes of a degenerate answer,
read alike in a response body, a printed line and the chat's own answers (`answers.py` judges with them).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter

from .answer_patterns import sentence_pattern_loop
from .passage_repeats import passage_repeats_under_markup
from .scripts import LETTER

# A unit of 2-60 characters repeated at least 6 times in a row (" is is is is is is", "哈哈哈哈哈哈").
_REPEATED_UNIT = re.compile(r"(.{2,60}?)\1{5,}", re.DOTALL)
# Scripts written without spaces count in characters (`cjk_unit_run`): a word of 2-8 Han, kana or Hangul
# characters six times in a row ('部署部署部署部署部署部署') is as long a loop as 30 Latin letters; no sentence
# repeats a word so.
_CJK_UNIT_RUN = re.compile(r"([\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{2,8}?)\1{5,}")
MAX_SCAN = 8000
# A Markdown code block, also one the length limit cut before its closing fence: code names the same identifiers
# line after line (`self.left = left`), so its share of distinct words says nothing of a loop; the other shapes
# (lines repeated, a unit in a row, a text that compresses to nothing) still read code that loops.
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_FEW_TOKENS_MIN = 24
# A turn label at the start of a line ('\nUSER:', '\n### Human:'; '\\n' where a cut body kept its escapes) or a
# chat template's turn token: an answer holding a user turn and then an assistant turn wrote the dialogue on.
_LINE_START = r"(?:^|\n|\\n)[ \t]*(?:#{1,3} ?)?"
_USER_TURN = re.compile(_LINE_START + r"(?:USER|User|Human|HUMAN)\s*:|<\|im_start\|>\s*user|<\|user\|>")
_ASSISTANT_TURN = re.compile(
    _LINE_START + r"(?:ASSISTANT|Assistant|AI|Bot)\s*:|<\|im_start\|>\s*assistant|<\|assistant\|>")
_END_OF_SEQUENCE_BEFORE = re.compile(r"(?:<\|endoftext\|>|<\|end_of_text\|>|</s>|<eos>)\s*$")
_WORDS = re.compile(r"[^\W_\u4e00-\u9fff]+|[\u4e00-\u9fff]", re.UNICODE)


REPEAT_NGRAM = 6  # words: longer than a set phrase ('in parallel across multiple GPUs')
RATIO_WINDOW = 100  # words: long enough for a loop's period, short enough that prose keeps its share


def _words(text: str) -> list[str]:
    """The words (CJK: characters) of a text's last `MAX_SCAN` characters, lower-cased."""
    return [w.lower() for w in _WORDS.findall(text[-MAX_SCAN:])]


def distinct_word_ratio(text: str) -> float:
    """Distinct words (CJK: characters) over all words, averaged over windows of `RATIO_WINDOW` words; 1.0 for
    texts too short to tell. Measured on the whole text, the share falls with length in any prose (a 340-word
    English answer about tensor parallelism, cut at its 400 tokens, has 0.47): within a window it stays high for
    prose and low for a loop, whatever the length."""
    return _windowed_ratio(_words(text))


def _windowed_ratio(words: list[str]) -> float:
    if len(words) < 20:
        return 1.0
    if len(words) <= RATIO_WINDOW:
        return len(set(words)) / len(words)
    starts = range(0, len(words) - RATIO_WINDOW + 1, RATIO_WINDOW // 2)
    return sum(len(set(words[i:i + RATIO_WINDOW])) for i in starts) / (RATIO_WINDOW * len(starts))


def _repeated_share(words: list[str], n: int = REPEAT_NGRAM) -> float:
    """The share of the runs of `n` words that occur more than once, for words that were still saying a passage a
    third time near where they were cut: a loop whose period is longer than the windows of `distinct_word_ratio`
    repeats nearly all of them, prose a few set phrases. A passage quoted once and then given again (an original and
    its corrected copy) has no third time, and gives 0."""
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    if len(grams) < RATIO_WINDOW:  # too short to tell a passage said again from set phrases
        return 0.0
    counts = Counter(grams)
    # the loop must reach the cut: one of the last runs (the very last may hold a cut word; a counter the passage
    # carries, 'Attempt 4:', makes a few runs unique) was said a third time
    if max(counts[gram] for gram in grams[-2 * n:-1]) < 3:
        return 0.0
    return sum(1 for gram in grams if counts[gram] > 1) / len(grams)


def is_looping(text: str, cut_at_limit: bool = False) -> bool:
    """True when the text repeats itself: a short unit over and over, the same lines again and again,
    a long text that compresses to almost nothing, or (for an answer cut at the length limit) one that
    uses few distinct words."""
    sample = text[-MAX_SCAN:]
    if cut_at_limit:
        words = _words(_CODE_BLOCK.sub(" ", sample))
        if _windowed_ratio(words) < 0.5 or _repeated_share(words) >= 0.5:
            return True
    if tiny_vocabulary_run(sample.strip().strip("\"'`").split()) or _CJK_UNIT_RUN.search(sample):
        return True
    if sentence_pattern_loop(sample) or passage_repeats_under_markup(sample):
        return True
    end = len(sample.rstrip())
    for m in _REPEATED_UNIT.finditer(sample):
        # a unit of digits or symbols repeats legitimately (tables, rulers, a Markdown title's '=====' underline)
        # unless the answer ran to the limit still repeating it: the run reaches the cut
        ran_to_cut = cut_at_limit and bool(m.group(1).strip()) and m.end() + len(m.group(1)) >= end
        if len(m.group(0)) >= 30 and (LETTER.search(m.group(1)) or ran_to_cut):
            return True
    lines = [line.strip() for line in sample.splitlines() if len(line.strip()) >= 12]
    if len(lines) >= 6:
        counts = Counter(lines)
        repeated = sum(c for c in counts.values() if c >= 3)
        if repeated >= 0.4 * len(lines):
            return True
    raw = sample.encode("utf-8", "replace")
    return len(raw) >= 400 and len(zlib.compress(raw)) < 0.2 * len(raw)


def tiny_vocabulary_run(tokens: list[str], run: int = _FEW_TOKENS_MIN, most: int = 3) -> bool:
    """True when `run` tokens in a row are drawn from at most `most` distinct ones, one of them a word: two
    words alternating for dozens of tokens ('camin naman camin naman ...'), or a whole text of three tokens
    ('| | |ــ |'). No language writes so; digits and symbols alone are a matrix or a ruler someone asked for.
    The run may stand anywhere: an answer can start sensibly and then fall into it, in no fixed period."""
    window: Counter[str] = Counter()
    for index, token in enumerate(tokens):
        window[token] += 1
        if index >= run:
            gone = tokens[index - run]
            window[gone] -= 1
            if not window[gone]:
                del window[gone]
        if index >= run - 1 and len(window) <= most and LETTER.search(" ".join(window)):
            return True
    return False


def writes_next_turns(text: str) -> bool:
    """True when, after some text of its own, the answer opens a user turn and then an assistant turn: the
    model did not stop at its end-of-turn token and plays both sides of the conversation."""
    user = _USER_TURN.search(text[:MAX_SCAN])
    if user is None or not text[: user.start()].strip():
        return False
    if _ASSISTANT_TURN.search(text, user.end(), MAX_SCAN) is not None:
        return True
    # or it wrote its end-of-sequence token as text right before the user turn it opened: the server did not
    # stop on that token (a fine-tune that ends turns with '<|endoftext|>' served with '<|im_end|>' as the stop)
    return bool(_END_OF_SEQUENCE_BEFORE.search(text[: user.start()]))


def repeated_phrase(text: str) -> tuple[str, int] | None:
    """The phrase a looping text repeats and how often: the shortest word cycle the end of the text keeps
    (started where a sentence starts, when one does), else the longest run of 3 to 12 words seen 3 times, else
    a short unit repeated in a row (text without spaces). The evidence an admin reads."""
    words = text[-MAX_SCAN:].split()
    tail = words[-240:]
    for period in range(1, min(40, len(tail) // 3) + 1):
        pairs = len(tail) - period
        if sum(tail[i] == tail[i + period] for i in range(pairs)) >= 0.9 * pairs:
            cycle = tail[-period:]
            start = next((i for i, w in enumerate(cycle) if w[:1].isupper()), 0)
            phrase = tuple(cycle[start:] + cycle[:start])
            count = sum(tuple(words[i:i + period]) == phrase for i in range(len(words) - period + 1))
            if count >= 3:
                return " ".join(phrase), count
    for n in range(12, 2, -1):
        if len(words) < 3 * n:
            continue
        gram, count = Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1)).most_common(1)[0]
        if count >= 3:
            return " ".join(gram), count
    unit = _REPEATED_UNIT.search(text[-MAX_SCAN:])
    if unit is not None:
        return unit.group(1), len(unit.group(0)) // len(unit.group(1))
    return None
