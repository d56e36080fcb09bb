"""The openai library's printed answer objects, read as answers (`openai_answer_repr`).

A client that prints the response it got (`print(completion)`) writes pydantic's repr: `ChatCompletion(id=…,
choices=[Choice(finish_reason='stop', …, message=ChatCompletionMessage(content='\\n\\n', …))], …,
usage=CompletionUsage(completion_tokens=2, …))`, or for the completions endpoint `Completion(… choices=
[CompletionChoice(finish_reason='stop', …, text='')] …)`. Its fields are read back (the quoted strings as
Python literals, never evaluated as code) and judged by `answers.judge_answer` (`printed.py`), as a JSON body
is: an answer of whitespace only, an empty one beside its reasoning, one that loops or is garbled. Only the
first choice is read.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

RULE_ID = "openai_answer_repr"
_OBJECT = re.compile(r"\b(?:ChatCompletion|Completion)\(id=")
_LITERAL = r"(?P<v>None|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
_CONTENT = re.compile(r"\bChatCompletionMessage\(content=" + _LITERAL)
_TEXT = re.compile(r"\bCompletionChoice\([^()]*?\btext=" + _LITERAL)
_REASONING = re.compile(r"\breasoning(?:_content)?=" + _LITERAL)
_FINISH = re.compile(r"\bfinish_reason='(\w+)'")
_TOKENS = re.compile(r"\bcompletion_tokens=(\d+)")
_TOOLS = re.compile(r"\btool_calls=\[\w")


@dataclass(frozen=True)
class PrintedAnswer:
    """What a printed response object says of its first answer."""

    text: str | None
    finish_reason: str | None
    completion_tokens: int | None
    reasoning: str
    tool_calls: bool


def _literal(match: re.Match[str] | None) -> str | None:
    if match is None or match.group("v") == "None":
        return None
    try:
        value = ast.literal_eval(match.group("v"))
    except (ValueError, SyntaxError):
        return match.group("v")[1:-1]
    return value if isinstance(value, str) else None


def read_printed_answer(message: str) -> PrintedAnswer | None:
    """The first answer of a printed `ChatCompletion(...)` or `Completion(...)`; None for anything else."""
    if _OBJECT.search(message) is None:
        return None
    field = _CONTENT.search(message) or _TEXT.search(message)
    if field is None:
        return None
    finish = _FINISH.search(message)
    tokens = _TOKENS.search(message)
    return PrintedAnswer(
        _literal(field),
        finish.group(1) if finish else None,
        int(tokens.group(1)) if tokens else None,
        _literal(_REASONING.search(message)) or "",
        _TOOLS.search(message) is not None,
    )

