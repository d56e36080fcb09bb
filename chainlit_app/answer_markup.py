"""An answer carrying so much markdown markup that the reader's page would stall is shown as text from then on.

Chainlit's page parses an answer's markdown again for every streamed piece, in the browser's main thread, and the
parser's resolution of emphasis and link delimiters (`*`, `_`, `[`, `]`, `~`) grows faster than their number.
Measured through the app on this machine (`python -m bench.answer_markup`, a real Chromium, answers replayed at
200 tokens/s), the end of an answer showed after its last token: 2,000 tokens of words 0.8 s, of `[a]` 4.3 s, of
`**a` 25 s; 1,000 tokens of ` **b**` 6.8 s. A model caught in a loop writes just such runs (`**Note:** **Note:**`).
Past the bound the message gets Chainlit's `language` "text": the page wraps it in a code fence, which the parser
reads in one linear pass, so every character still shows and the page stays free. The stored answer keeps the
language, so a resumed thread shows it the same way.
"""

from __future__ import annotations

import re

DEFAULT_BOUND = 1_000  # delimiters: about 250 bold phrases; 500 tokens of `**a` (1,000) cost the page about 0.5 s
# `_` only where it can open or close emphasis: snake_case and __dunder__ names in code are not counted inside words
_DELIMITERS = re.compile(r"[*\[\]~]|(?<!\w)_|_(?!\w)")


class MarkupBudget:
    """Counts an answer's delimiters as its pieces arrive (each piece once: the count costs O(piece), not
    O(answer)); `exceeded` turns true once the count passes the bound and stays so. A bound of 0 never trips."""

    def __init__(self, bound: int = DEFAULT_BOUND) -> None:
        self.bound = bound
        self.count = 0
        self._previous = ""  # the last character before this piece, for `_`'s look-behind

    def add(self, piece: str) -> bool:
        """Count `piece`; True when the answer so far holds more delimiters than the bound."""
        text = self._previous + piece
        self.count += sum(1 for _ in _DELIMITERS.finditer(text, len(self._previous)))
        self._previous = piece[-1:] or self._previous
        return self.exceeded

    @property
    def exceeded(self) -> bool:
        return self.bound > 0 and self.count > self.bound
