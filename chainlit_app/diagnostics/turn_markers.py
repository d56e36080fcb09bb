"""A chat template's turn markers written into an answer as text (`turn_markers_in_answer`).

When the server formats a conversation with a template of another model family (vLLM's default ChatML for a
tokenizer that has no chat template, such as phi-2), the model never learnt that the template's end-of-turn
marker ends its answer: the marker is not its stop token and comes out as plain text, and so does the next
turn's opening ('…launch new products successfully.\\n<|im_end|>\\n<|im_start|>user\\nThank you…', a
chat.completion body from vLLM serving ai-dive/phi-2_GPTQ, llama.cpp #5941). An answer whose text closes a turn
with such a marker and then opens another is a chat-template mismatch, not a model that merely talks on
(degenerate_output, `answer_loops.writes_next_turns`, reads plain labels such as '\\nUSER:'). Text that
explains a template quotes its markers in code (backticks, a fenced block) and is not read so.

A model whose vocabulary has no token for the marker at all (Baichuan-13B under vLLM 0.2.6's default ChatML,
Baichuan2 #202) spells it in pieces and cannot stop: the marker's opening without its closing `>` and then its
pieces again and again (`None<|im_end| | | | | …`), `marker_spelled_in_pieces`: the same mismatch.
"""

from __future__ import annotations

import re

MECHANISM_ID = "turn_markers_in_answer"
SPELLED_ID = "marker_spelled_in_pieces"
# the end-of-turn markers of the common templates (ChatML, Llama 3, Gemma, Phi-3) ...
_END_OF_TURN = re.compile(r"<\|im_end\|>|<\|eot_id\|>|<end_of_turn>|<\|end\|>")
# ... and the markers that open the next turn
_TURN_OPENS = re.compile(r"<\|im_start\|>|<\|start_header_id\|>|<start_of_turn>|<\|(?:user|assistant|system)\|>")


def leaked_turn_marker(text: str) -> str | None:
    """The end-of-turn marker an answer wrote as text before opening another turn; None when it did not (or
    when the markers are quoted as code)."""
    end = _END_OF_TURN.search(text)
    if end is None or not text[: end.start()].strip() or "`" in text:
        return None
    return end.group(0) if _TURN_OPENS.search(text, end.end()) else None


# a template marker's opening never closed by its '>', then the marker's own pieces ('|') five times or more
_SPELLED = re.compile(r"<\|(?:im_end|im_start|endoftext|eot_id|end|user|assistant)\|(?!>)(?:\s*\|){5}")


def spelled_marker(text: str) -> str | None:
    """The marker an answer spells in pieces it cannot stop ('<|im_end|' then '| | | …'); None otherwise (or
    when quoted as code)."""
    m = _SPELLED.search(text)
    return None if m is None or "`" in text else m.group(0).split("|", 2)[1].join(("<|", "|>"))
