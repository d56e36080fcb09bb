"""The visible answer and the thinking of one answer text whose reasoning sits inline (`<think>...</think>`).

A closed block is thinking. A block that is never closed is thinking only when the answer was cut at the
length limit (the model was still thinking): a model that stopped by itself after an opening `<think>` wrote
its answer after the tag (Qwen3 with an empty thinking prefix: `<think>\\n\\n\\n我是通义千问...`, stop), and
that answer is not empty.
"""

from __future__ import annotations

import re

_CLOSED = re.compile(r"<think>.*?</think>", re.DOTALL)
_OPEN = re.compile(r"<think>.*", re.DOTALL)
# Finish reasons of an answer cut before the model was done: an open block ran to the end.
_CUT = ("length",)


def has_thinking(text: str) -> bool:
    """The text holds an inline thinking block, closed or not."""
    return "<think>" in text


def split_thinking(text: str, finish_reason: str | None) -> tuple[str, str]:
    """(visible answer, thinking) of an answer text."""
    thinking = "".join(_CLOSED.findall(text))
    visible = _CLOSED.sub("", text)
    if finish_reason in _CUT:
        opened = _OPEN.search(visible)
        if opened is not None:
            thinking += opened.group(0)
            visible = visible[: opened.start()]
    else:
        visible = visible.replace("<think>", "", 1) if visible.lstrip().startswith("<think>") else visible
    return visible, thinking
