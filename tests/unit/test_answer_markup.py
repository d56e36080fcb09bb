"""The markup budget that turns an answer heavy with markdown delimiters into text (answer_markup.py)."""

from __future__ import annotations

import pytest

from chainlit_app.answer_markup import DEFAULT_BOUND, MarkupBudget
from chainlit_app.settings import Settings


def test_a_loop_of_bold_markers_trips_the_bound_within_its_first_tokens() -> None:
    budget = MarkupBudget(10)
    tripped = [budget.add(piece) for piece in ["**Note:**", " the", " **Note:**", " **Note:**"]]
    assert tripped == [False, False, False, True]
    assert budget.count == 12 and budget.exceeded


def test_link_brackets_and_strikethrough_count() -> None:
    budget = MarkupBudget()
    budget.add("[a](b) ~~c~~ [d]")
    assert budget.count == 8


@pytest.mark.parametrize("code", [
    "def __init__(self, max_tokens):\n    self.max_model_len = max_tokens",
    "snake_case_name = other_name",
])
def test_underscores_inside_words_are_not_delimiters(code: str) -> None:
    budget = MarkupBudget()
    budget.add(code)
    # `_` is a word character: of __init__, only the outer underscores stand at a word's edge
    assert budget.count == (2 if "__init__" in code else 0)


def test_an_underscore_at_a_pieces_edge_sees_the_piece_before() -> None:
    whole, split = MarkupBudget(), MarkupBudget()
    whole.add("max_model_len")
    for piece in ["max", "_model", "_", "len"]:
        split.add(piece)
    assert whole.count == 0
    # the look-behind sees the previous piece; the look-ahead cannot see the next one, so an underscore that
    # ends a piece counts once too often at most
    assert split.count <= 1


def test_a_bound_of_zero_never_trips_and_an_ordinary_answer_stays_markdown() -> None:
    never = MarkupBudget(0)
    assert not never.add("**a" * 10_000)
    ordinary = MarkupBudget()
    answer = "\n".join(f"- **Step {n}.** Run `make test` and read [the log](x)." for n in range(100))
    assert not ordinary.add(answer) and ordinary.count == 600 < DEFAULT_BOUND


def test_the_limit_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAT_ANSWER_MARKUP_LIMIT", "0")
    assert Settings().chat.answer_markup_limit == 0
    monkeypatch.setenv("CHAT_ANSWER_MARKUP_LIMIT", "-1")
    with pytest.raises(ValueError):
        Settings()
