"""A printed message chunk whose content is empty (`empty_chunks_repeat`): repeated, it is an empty answer, not a loop.

A client that prints each chunk of a stream (LangChain's `print(chunk)` writes `content='' additional_kwargs={}
response_metadata={} id='run-…'`) gives identical lines when every chunk is empty: the chunks of one run share
their id, and nothing else in them changes. Counted as plain lines, three identical ones read as an answer that
loops; but what repeats is the empty content, so the reader got no answer at all (QwQ through LangChain,
langchain #30580: the text was in a field the client did not read). A chunk that carries reasoning or a tool call
differs from the next, so only chunks with nothing in them repeat.
"""

from __future__ import annotations

import re

RULE_ID = "empty_chunks_repeat"
# the repr of a LangChain message (chunk), bare or in its class's brackets, whose content is the empty string
_EMPTY_MESSAGE = re.compile(r"^(?:\w*Message\w*\()?content=(?:''|\"\")(?:\s+\w+=|,|\)|$)")


def is_empty_message_chunk(line: str) -> bool:
    """Whether a printed line is a message chunk with empty content."""
    return _EMPTY_MESSAGE.match(line.strip()) is not None
