"""What a client shows of an answer it received: a streamed chunk cut mid-field, UTF-8 read in a legacy code
page, an Ollama answer that only loaded the model, a test's recall that stutters, a model hub's cache file
missing on a worker.

Learnt from holdout round 18 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms18.py`).
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

import re

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind
from .token_stutter import recall_stutters

# Lead bytes of two-byte UTF-8 sequences for Latin-1 letters and marks (C2, C3), Latin Extended-A (C5) and
# Cyrillic (D0, D1), as the DOS code page 437 shows them: '┬', '├', '┼', '╨', '╤'.
_CP437_LEADS = bytes((0xC2, 0xC3, 0xC5, 0xD0, 0xD1)).decode("cp437")
_CP437_PAIR = re.compile(f"[{_CP437_LEADS}][^\\x00-\\x7f]")
MIN_CP437_LETTERS = 2


def utf8_read_as_cp437(message: str) -> bool:
    """True when MIN_CP437_LETTERS pairs of code-page-437 characters are, as bytes, UTF-8 for one letter or
    Spanish mark each ('├│' is 'ó', '┬┐' is '¿'). A box drawn with '├──' is no such pair: '─' is no
    continuation byte."""
    letters = 0
    for m in _CP437_PAIR.finditer(message):
        try:
            char = m.group(0).encode("cp437").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        letters += char.isalpha() or char in "¿¡"
    return letters >= MIN_CP437_LETTERS


SHOWN_RULES: tuple[Rule, ...] = (
    rule(
        "stream_chunk_cut",
        Kind.DECODE_ERROR,
        # JavaScriptCore's (Bun's, Safari's) words for JSON it could not parse, and a client's log of the text it
        # tried: a server-sent event cut mid-field, the next 'data: {' glued into it. The answer's stream
        # reached the client broken, whatever the model wrote
        r"\bJSON Parse error: (?:Expected|Unexpected|Unterminated)\b|"
        r"JSON parsing failed: Text: \{.{0,400}data: \{|"
        # a client's own words for it, with Python's json error for a string the event cut
        r"\bstream\w* (?:returned|sent|gave|yielded) invalid JSON\W+Unterminated string starting at\b",
        hint=Msg("hint.stream_chunk_cut"),
        examples=(
            "Error message: JSON Parse error: Expected '}'",  # zai-org/GLM-5 #66
            'JSON parsing failed: Text: {"id":"20260430204055297b97348c8e426c","created":1777552855,"object":'
            '"chat.cdata: {"id":"2026043020420635c6abc56a2741ac",',
            "LLM stream returned invalid JSON: Unterminated string starting at: line 1 column ...",  # maw #123
        ),
    ),
    rule(
        "utf8_read_as_code_page",
        Kind.DECODE_ERROR,
        # UTF-8 bytes shown in the DOS code page 437 (a Windows console's default): each accented letter turns
        # into a box-drawing character and another sign. The answer's bytes are right, the reading is not
        "|".join(f"{lead}[^\\x00-\\x7f]" for lead in _CP437_LEADS),
        hint=Msg("hint.utf8_read_as_code_page"),
        check=utf8_read_as_cp437,
        examples=("assistant: Hola! ┬┐C├│mo est├ís?",),  # ollama-js #168
    ),
    rule(
        "answer_only_loaded_model",
        Kind.EMPTY_OUTPUT,
        # Ollama's done_reason 'load' says the call only loaded the model and generated nothing; with the
        # message's content empty, an agent (LangChain's ChatOllama) got an empty answer and went on with it
        r"\bcontent=(?:''|\"\").{0,400}['\"]done_reason['\"]: ['\"](?:load|unload)['\"]",
        hint=Msg("hint.answer_only_loaded_model"),
        examples=(
            "{'messages': [AIMessage(content='', additional_kwargs={}, response_metadata={'model': 'qwen2.5', "
            "'created_at': '2025-04-24T09:13:29.983043Z', 'done': True, 'done_reason': 'load', "
            "'total_duration': None}, id='run-6a897b3a-1971-437b-8a98-95f06bef3f56-0')]}",  # langchain-mcp #111
        ),
    ),
    rule(
        "recall_stutters",
        Kind.DEGENERATE_OUTPUT,
        # a test's expected words beside the words it got, where the got words stutter ('ig iguana',
        # 'violet violet'): tokens written twice (`token_stutter.py`)
        r"\bexpected\s+['\"][^'\"]{1,200}['\"]\s*,?\s*got\s+['\"]",
        hint=Msg("hint.tokens_accepted_twice"),
        check=recall_stutters,
        examples=(
            "    ✗  58569 tokens: expected 'silver iguana 24', got 'silver ig iguana '",  # vLLM #40831
            "    ✗  91070 tokens: expected 'violet chinchilla 67', got 'violet violet chinchinchillailla 6 66 '",
        ),
    ),
    rule(
        "hub_cache_file_missing",
        Kind.MODEL_NOT_FOUND,
        # a file under a model hub's cache (ModelScope's, Hugging Face's) that the process cannot open: the
        # model was not downloaded on this node (a Ray worker on another machine, a cache not mounted)
        r"No such file or directory: ['\"][^'\"]*/(?:modelscope|huggingface)/hub/",
        hint=Msg("hint.hub_cache_file_missing"),
        examples=(
            "No such file or directory: '/home/ray/.cache/modelscope/hub/qwen/Qwen-14B-Chat/-home-ray-.cache-"
            "modelscope-hub-qwen-Qwen-14B-Chat.lock'",  # vLLM #2056
        ),
    ),
)
