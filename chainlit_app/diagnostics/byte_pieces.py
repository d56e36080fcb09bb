"""An answer still written in byte-level BPE pieces: the detokenizer was not applied.

GPT-2-style byte-level tokenizers (GPT-2, Llama 3, Qwen, DeepSeek) store a space as 'Ġ' (U+0120), a newline
as 'Ċ' (U+010A) and a tab as 'ĉ' (U+0109) inside their pieces. A server that returns the pieces joined
instead of decoding them (a tokenizer.json without its ByteLevel decoder, a serving plugin that skips the
detokenizer) shows text like 'ĠI'mĠtryingĠto': readable words, but the markers stand where the spaces
belong. Text *about* tokenizers quotes a few markers between ordinary spaces, so the markers must
outnumber the spaces and newlines.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

RULE_ID = "byte_level_pieces"
_MARKERS = ("\u0120", "\u010a", "\u0109")
_MIN_MARKERS = 5
_SCAN = 4000


def shows_byte_pieces(text: str) -> bool:
    """True when byte-level BPE markers stand in for the spaces and newlines of `text`."""
    sample = text[:_SCAN]
    markers = sum(sample.count(m) for m in _MARKERS)
    return markers >= _MIN_MARKERS and markers > sample.count(" ") + sample.count("\n")


def byte_pieces_hint() -> Msg:
    """What to do about it: the tokenizer's decoder, not the model."""
    return Msg("hint.byte_level_pieces")
