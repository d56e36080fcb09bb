"""The general mechanism of the round-33 pass (issue 11: holdout round 33's misses, moved to dev), on the real
line it was written from and beside the shape that must keep its reading: HF tokenizers refusing an id past its
vocabulary, seen alone, without the detokenizer's frames that used to name it by where it was raised.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_an_id_past_the_tokenizers_vocabulary_alone() -> None:
    # LeoLM's discussion #4 on Hugging Face: a tokenizer of 32,002 ids beside an embedding of 32,128 rows
    line = "TypeError: argument 'tokens': 'NoneType' object cannot be converted to 'PyString'"
    assert _root([line]) == ("decode_error", "token_id_not_decodable")
    # another argument the same library refuses, alone, is no decoding failure named by this rule
    other = "TypeError: argument 'text': 'NoneType' object cannot be converted to 'PyString'"
    assert _root([other])[1] != "token_id_not_decodable"
