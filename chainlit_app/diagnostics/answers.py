"""What an answer says about the server: empty, looping, or fine. Used on response bodies found in logs
and on the answers the chat receives itself, so both sides judge an answer the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chainlit_app.i18n import Msg

from .answer_loops import MAX_SCAN, distinct_word_ratio, is_looping, repeated_phrase, writes_next_turns
from .byte_pieces import byte_pieces_hint, shows_byte_pieces
from .printed_chunks import inner_content
from .reserved_tokens import reserved_token
from .scripts import foreign_letters_in_one_word, foreign_letters_spattered, scripts_in
from .special_tokens import special_token_run
from .stuck_token_stream import stuck_on_one_token
from .taxonomy import Kind
from .thinking import has_thinking, split_thinking
from .token_stutter import repeated_tokens_in_copy
from .turn_markers import leaked_turn_marker, spelled_marker
from .word_salad import is_word_salad

ANSWER_FIELDS = ("content", "text", "response", "reasoning_content")  # where a body keeps its answer, first first
# Long runs of digits again and again: numbers a broken model emits instead of words.
_DIGIT_RUN = re.compile(r"\d{9,}")
# NaN or inf logits make every step pick token 0, which is '!' in byte-level BPE vocabularies (GPT-2, Llama 3,
# Qwen): an answer that ends in (or is) a long run of '!' is broken numerics (fp16 overflow), not emphasis.
_TOKEN_ZERO_RUN = re.compile(r"!{16,}")
# An answer that is nothing but one symbol again and again ('@@@@', '####'): a kernel or quantization that
# returns the same token whatever the input (the generated-text rule reads the same in printed logs).
_ONE_SYMBOL = re.compile(r"\s*([^\w\s])\1{15,}\s*")
# The same in a printed line, for symbols no banner or rule is drawn with ('@@@@', not '====' or '----').
_ONE_ODD_SYMBOL = re.compile(r"\s*([^\w\s=\-*#_~+.:|/\\<>])\1{15,}\s*")
# One letter again and again and nothing else ('GGGG…', '郦郦郦…'; a terminal's '^C' and the prompt after it may
# close the line): the same token whatever the context, from a kernel or library that computes garbage (a ROCm
# build for another GPU, a flash-attention kernel miscompiled for the card), not a model's loop over words. An
# answer is bounded by its max_tokens (one letter a token): a longer run is a dump of padding, not an answer.
_ONE_LETTER = re.compile(r"\s*([^\W\d_])\1{19,8191}\s*(?:\^C.{0,40})?")
# The tokenizer's unknown token again and again: ids the vocabulary has no piece for (a tokenizer that does
# not fit the model, or broken numerics picking ids out of range).
_UNKNOWN_RUN = re.compile(r"(?:<unk>\s*){4,}")


# UTF-8 bytes shown as Latin-1 / byte-level BPE symbols: 'æĺ¯', 'ï¼Į', 'è£¤åŃĲ'.
_MOJIBAKE = re.compile(r"[\u00c2-\u00ef][\u0080-\u00bf\u0100-\u017f]")


# An answer printed with its characters as JSON's or Python's `\uXXXX` escapes (`text='\u0442\u0435 Business'`):
# read as the letters they stand for, or a salad of scripts hides behind ASCII.
_ESCAPED_CHAR = re.compile(r"\\u([0-9a-fA-F]{4})")


def unescaped(text: str) -> str:
    """`text` with its backslash-u escapes decoded (only when it holds two or more: one may be a literal)."""
    return _ESCAPED_CHAR.sub(lambda m: chr(int(m[1], 16)), text) if text.count("\\u") >= 2 else text


def is_garbled(text: str, whole_answer: bool = False) -> bool:
    """Replacement characters, UTF-8 shown as Latin-1, letters of unrelated scripts, a run of token 0, or (for
    a whole answer, not a printed line that may be a banner of '=') one symbol repeated. Escaped characters are
    read as what they stand for."""
    text = unescaped(text)
    if "\ufffd" in text or len(_MOJIBAKE.findall(text[:4000])) >= 4 or _TOKEN_ZERO_RUN.search(text[-MAX_SCAN:]) \
            or (whole_answer and _ONE_SYMBOL.fullmatch(text[:4000])) or _ONE_ODD_SYMBOL.fullmatch(text[:4000]) \
            or (len(text) <= 8300 and _ONE_LETTER.fullmatch(text)) or _UNKNOWN_RUN.search(text[:4000]) \
            or shows_byte_pieces(text) or special_token_run(text) is not None:
        return True
    runs = _DIGIT_RUN.findall(text[:4000])
    if len(runs) >= 2 and sum(map(len, runs)) >= 0.25 * len(text.strip()):
        return True
    scripts = scripts_in(text[:2000])
    rare = scripts - {"latin", "han", "greek", "kana"}
    # Latin and Han together are common (a Chinese answer naming English terms); a third, unrelated
    # script beside them (Hebrew, Thai, Hangul, Arabic ...) is the mark of tokens drawn at random, unless
    # the foreign letters are only a few slipped into one language's words (`scripts.py`)
    mixed = len(scripts) >= 4 or len(rare) >= 2 or (bool(rare) and {"latin", "han"} <= scripts)
    return mixed and not foreign_letters_spattered(text[:2000]) and not foreign_letters_in_one_word(text[:2000])


@dataclass(frozen=True)
class AnswerVerdict:
    """A judgement of one answer: the kind, why, and what to do."""

    kind: Kind
    evidence: str
    hint: str


def _usage_tokens(body: dict[str, Any]) -> int | None:
    usage = body.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
        return int(usage["completion_tokens"])
    return None


def _choice_text(choice: dict[str, Any]) -> tuple[str | None, str, bool]:
    """(answer text or None, reasoning text, has tool calls) of one choice of any endpoint."""
    message = choice.get("message")
    if isinstance(message, dict):
        reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        tools = bool(message.get("tool_calls") or message.get("function_call"))
        return message.get("content"), str(reasoning), tools
    if "text" in choice:
        return choice.get("text"), "", False
    tokens = choice.get("tokens")
    if isinstance(tokens, list) and all(isinstance(t, str) for t in tokens):
        return "".join(tokens), "", False  # serving layers that return the generated pieces as a list
    return None, "", False


def is_chunk(body: dict[str, Any]) -> bool:
    """A piece of a streamed answer, not a whole answer."""
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    return body.get("object") == "chat.completion.chunk" or "delta" in first


def judge_body(body: dict[str, Any]) -> AnswerVerdict | None:
    """Judge a completion body (chat or completions, not a stream chunk): empty text that finished at
    once, or text that loops until the length limit."""
    wrapped = body.get("output")
    if isinstance(wrapped, list) and wrapped and isinstance(wrapped[0], dict) and "choices" in wrapped[0]:
        return next((v for v in map(judge_body, wrapped) if v is not None), None)  # a job API's envelope
    choices = body.get("choices")
    if not isinstance(choices, list) and ("text" in body or "content" in body) and "usage" in body:
        choices = [body]  # a serving layer that flattens the first choice into the body
    if not isinstance(choices, list) and body.get("role") == "assistant" and "content" in body:
        choices = [{"message": body}]  # the message object alone
    if not isinstance(choices, list) and "finish_reason" in body and (
            isinstance(body.get("message"), dict) or (isinstance(body.get("text"), str) and "index" in body)):
        choices = [body]  # one choice alone, chat's or completions' (a pretty-printed body cut to its choices)
    if body.get("done_reason") in ("load", "unload"):
        return None  # Ollama loading or unloading a model answers an empty request with no text, rightly
    if not isinstance(choices, list) and "done_reason" in body:  # Ollama's own API: /api/chat, /api/generate
        message = body.get("message")
        answer = {"message": message} if isinstance(message, dict) else {"text": body.get("response")}
        choices = [{**answer, "finish_reason": body.get("done_reason")}]
    count = body.get("eval_count")
    if (not isinstance(choices, list) and body.get("done") is True and isinstance(body.get("message"), dict)
            and (count is None or (isinstance(count, int) and count <= 1))):
        # Ollama before done_reason: a finished /api/chat reply; a stream's last object (content "") carries the
        # count of the tokens streamed before it, so only a reply that generated at most one token is judged
        choices = [{"message": body["message"], "finish_reason": "stop"}]
    texts = body.get("text")
    if not isinstance(choices, list) and isinstance(texts, list) and texts and all(isinstance(t, str) for t in texts):
        choices = [{"text": t} for t in texts]  # vLLM's own /generate server: {"text": [prompt + answer, ...]}
    if body.get("object") == "response" and body.get("output") == []:
        tokens = (body.get("usage") or {}).get("output_tokens") if isinstance(body.get("usage"), dict) else None
        return judge_answer(None, "stop", tokens if isinstance(tokens, int) else None)
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    if is_chunk(body):
        delta = choices[0].get("delta")
        text = delta.get("content") if isinstance(delta, dict) else None
        return _garbled(text, whole_answer=False) if isinstance(text, str) else None  # one chunk: a piece
    tokens = _usage_tokens(body)
    for choice in choices:
        text, reasoning, tools = _choice_text(choice)
        finish = choice.get("finish_reason")
        verdict = judge_answer(text, finish, tokens, reasoning=reasoning, tool_calls=tools)
        if verdict is not None:
            return verdict
    return None


def judge_answer(
    text: str | None,
    finish_reason: str | None,
    completion_tokens: int | None,
    *,
    reasoning: str = "",
    tool_calls: bool = False,
) -> AnswerVerdict | None:
    """Judge one answer's text, however it was received."""
    if tool_calls:
        return None
    if text is not None and has_thinking(text):
        visible, _thinking = split_thinking(text, finish_reason)
        if not visible.strip():
            reasoning = reasoning or text  # the answer is all reasoning: the visible part is empty
            text = visible
    if (text is None or not text.strip()) and reasoning.strip():
        # the visible answer is empty but the reasoning was generated: judge what was generated
        broken = _garbled(reasoning)
        if broken is not None:
            return broken
        if finish_reason == "length" and is_looping(reasoning, cut_at_limit=True):
            return AnswerVerdict(
                Kind.DEGENERATE_OUTPUT,
                f"the {len(reasoning)}-character reasoning repeats itself until the length limit (content empty)",
                Msg("hint.reasoning_loops"),
            )
    if text is None or not text.strip():
        if finish_reason == "length" and (completion_tokens or 0) > 1 and not reasoning:
            return AnswerVerdict(
                Kind.EMPTY_OUTPUT,
                f"empty answer: finish_reason='length', completion_tokens={completion_tokens}",
                Msg("hint.empty_whitespace"),
            )
        if finish_reason not in (None, "stop", "eos", "length") and (completion_tokens or 0) > 1:
            return None
        evidence = (
            f"empty answer (content {'null' if text is None else repr(text[:20])}): "
            f"finish_reason={finish_reason!r}, completion_tokens={completion_tokens}"
        )
        if reasoning.strip():
            hint = Msg("hint.empty_reasoning")
        elif (completion_tokens or 0) <= 1:
            hint = Msg("hint.empty_first_token")
        else:
            hint = Msg("hint.empty_no_text")
        return AnswerVerdict(Kind.EMPTY_OUTPUT, evidence, hint)
    garbled = _garbled(text)
    if garbled is not None:
        return garbled
    if (token := reserved_token(text, finish_reason)) is not None:
        return AnswerVerdict(Kind.DEGENERATE_OUTPUT, f"the {len(text)}-character answer holds the reserved token "
                             f"{token}: sampled from logits that mean nothing", Msg("hint.reserved_token_in_answer"))
    if (marker := spelled_marker(text)) is not None:
        return AnswerVerdict(Kind.CHAT_TEMPLATE, f"the answer spells the chat template's {marker} in pieces",
                             Msg("hint.marker_spelled_in_pieces", marker=marker))
    if (marker := leaked_turn_marker(text)) is not None:
        return AnswerVerdict(
            Kind.CHAT_TEMPLATE,
            f"the {len(text)}-character answer writes the chat template's {marker} as text and opens another turn",
            Msg("hint.turn_markers_in_answer", marker=marker),
        )
    if finish_reason in ("length", None, "") and writes_next_turns(text):
        return AnswerVerdict(
            Kind.DEGENERATE_OUTPUT,
            f"the {len(text)}-character answer goes on past its end, writing the user's next turn and answering it "
            f"(finish_reason={finish_reason!r})",
            Msg("hint.answer_writes_next_turns"),
        )
    if repeated_tokens_in_copy(text):
        return AnswerVerdict(Kind.DEGENERATE_OUTPUT, f"the {len(text)}-character answer says one sentence again "
                             "and again, one copy with some of its words written twice",
                             Msg("hint.tokens_accepted_twice"))
    if finish_reason in ("length", None) and is_looping(text, cut_at_limit=finish_reason == "length"):
        phrase = repeated_phrase(text)
        said = f": {phrase[0][:120]!r} {phrase[1]} times" if phrase else ""
        return AnswerVerdict(
            Kind.DEGENERATE_OUTPUT,
            f"the {len(text)}-character answer repeats itself (finish_reason={finish_reason!r}, distinct-word "
            f"ratio {distinct_word_ratio(text):.2f}){said}",
            Msg("hint.answer_loops"),
        )
    if finish_reason in ("length", None) and is_word_salad(text):
        return AnswerVerdict(Kind.DEGENERATE_OUTPUT, f"the {len(text)}-character answer is words without grammar "
                             f"(almost no function words; finish_reason={finish_reason!r})", Msg("hint.word_salad"))
    return None


def _garbled_what(text: str) -> str:
    """What makes a garbled text garbled, for the evidence."""
    replacement = text.count("\ufffd")
    if replacement:
        return f"{replacement} U+FFFD"
    if shows_byte_pieces(text):
        return "byte-level BPE pieces ('\u0120' for spaces)"
    if _UNKNOWN_RUN.search(text[:4000]):
        return "a run of <unk>"
    if (marker := special_token_run(text)) is not None:
        return f"special tokens kept ({marker} again and again)"
    if _TOKEN_ZERO_RUN.search(text[-MAX_SCAN:]):
        return "a run of '!' (token 0)"
    if _ONE_SYMBOL.fullmatch(text[:4000]) or _ONE_ODD_SYMBOL.fullmatch(text[:4000]):
        return "one symbol repeated"
    return f"letters of {len(scripts_in(text))} scripts"


def _garbled(text: str, whole_answer: bool = True) -> AnswerVerdict | None:
    if not is_garbled(text, whole_answer):
        return None
    what = _garbled_what(text)
    return AnswerVerdict(
        Kind.DECODE_ERROR,
        f"the answer is garbled ({what} in {len(text)} characters)",
        byte_pieces_hint() if shows_byte_pieces(text) else Msg("hint.answer_garbled"),
    )


_FIELD_STRING = r'"{name}"\s*:\s*(?:null|None|"((?:[^"\\]|\\.)*)"?)'
_ANSWER = re.compile(_FIELD_STRING.format(name="(?:content|text)"))
_REASONING = re.compile(_FIELD_STRING.format(name="reasoning(?:_content)?"))
_FINISH = re.compile(r'"finish_reason"\s*:\s*"(\w+)"')
_TOKENS = re.compile(r'"completion_tokens"\s*:\s*(\d+)')


def judge_fragment(text: str) -> AnswerVerdict | None:
    """Judge a body that does not parse (elided with '...', cut off): read its answer fields one by one."""
    answer = _ANSWER.search(text)
    if answer is None or ('"choices"' not in text and '"role"' not in text):
        return None
    reasoning = _REASONING.search(text)
    finish = _FINISH.search(text)
    tokens = _TOKENS.search(text)
    return judge_answer(
        answer.group(1),
        finish.group(1) if finish else None,
        int(tokens.group(1)) if tokens else None,
        reasoning=(reasoning.group(1) or "") if reasoning else "",
    )


class StreamAssembler:
    """Joins the chunks of streamed answers (`data: {...}` lines) by id, so that a whole streamed answer is
    judged once it finishes: empty, looping or garbled. Bounded: at most `max_streams` open answers of at
    most `max_chars` characters each (a log cut in the middle of a stream keeps nothing unbounded)."""

    def __init__(self, max_streams: int = 16, max_chars: int = 8000) -> None:
        self._texts: dict[str, list[str]] = {}
        self._sizes: dict[str, int] = {}
        self._lines: dict[str, int] = {}  # the line of each open answer's latest chunk
        self._max_streams = max_streams
        self._max_chars = max_chars

    def add(self, chunk: dict[str, Any], line: int = 0) -> AnswerVerdict | None:
        """One chunk; a verdict when it finishes an answer that is not fine."""
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return None
        choice = choices[0]
        key = f"{chunk.get('id', '')}/{choice.get('index', 0)}"
        delta = choice.get("delta")
        piece = delta.get("content") if isinstance(delta, dict) else choice.get("text")
        piece = inner_content(piece) if isinstance(piece, str) and piece[:1] == "{" else piece
        if key not in self._texts:
            if len(self._texts) >= self._max_streams:
                oldest = next(iter(self._texts))
                self._texts.pop(oldest)
                self._sizes.pop(oldest)
                self._lines.pop(oldest, None)
            self._texts[key], self._sizes[key] = [], 0
        self._lines[key] = line
        if isinstance(piece, str) and self._sizes[key] < self._max_chars:
            self._texts[key].append(piece)
            self._sizes[key] += len(piece)
        finish = choice.get("finish_reason")
        if not finish:
            return None
        text = "".join(self._texts.pop(key))
        self._sizes.pop(key)
        self._lines.pop(key, None)
        usage = chunk.get("usage")
        tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        return judge_answer(text, str(finish), tokens if isinstance(tokens, int) else None)

    def ends_on_none(self, previous_line: int) -> AnswerVerdict | None:
        """A bare `None` printed right after a stream's latest chunk (line `previous_line`): the client printed
        the stream's next content, None, so the stream ended; judged as an answer that finished."""
        key = next((k for k, line in self._lines.items() if line == previous_line and line), None)
        if key is None:
            return None
        text = "".join(self._texts.pop(key))
        self._sizes.pop(key)
        self._lines.pop(key, None)
        return judge_answer(text or None, None, None)

    def flush(self) -> list[tuple[AnswerVerdict, int]]:
        """The log ends inside streams (an excerpt cut them): what their text so far shows, with the line of
        the latest chunk. Only looping or garbled text: an unfinished answer is not an empty one."""
        found: list[tuple[AnswerVerdict, int]] = []
        for key, parts in self._texts.items():
            text = "".join(parts)
            if stuck_on_one_token(parts):
                found.append((AnswerVerdict(Kind.DEGENERATE_OUTPUT, f"every one of {len(parts)} chunks is "
                              f"{text[0]!r} and the stream never finished", Msg("rule.degenerate_output")),
                              self._lines.get(key, 0)))
            elif text.strip() and (is_looping(text) or is_garbled(text, whole_answer=True)):
                verdict = judge_answer(text, "length", None)
                if verdict is not None:
                    found.append((verdict, self._lines.get(key, 0)))
        self._texts.clear()
        self._sizes.clear()
        self._lines.clear()
        return found
