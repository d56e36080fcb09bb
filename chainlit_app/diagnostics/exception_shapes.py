"""Exceptions printed in shapes other than a plain traceback: torch's message without its class, a whole
traceback folded onto one line, and an exception group's tracebacks behind their `|` gutter. Each is read as the
exception it is, so that it is never passed over.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .events import MAX_FRAMES, Traceback
from .lineformat import ParsedLine

# torch's messages for a tensor of the wrong shape, device or type, printed without their class (a poster
# quoting the message alone, a wrapper logging str(exc)): the words are torch's own, so the class is known.
UNTYPED_TORCH_MESSAGES: tuple[tuple[str, str], ...] = (
    ("dimension out of range (expected to be in range of", "IndexError"),
    ("index out of range in self", "IndexError"),
    ("the expanded size of the tensor (", "RuntimeError"),
    ("the size of tensor a (", "RuntimeError"),
    ("mat1 and mat2 shapes cannot be multiplied", "RuntimeError"),
    ("expected all tensors to be on the same device", "RuntimeError"),
)
# A traceback whose line breaks a page or a chat folded away, so frames, code and exception share one line:
# `ile ".../tokenization_baichuan.py", line 101, in vocab_size return self.sp_model.get_piece_size()
# AttributeError: 'BaichuanTokenizer' object has no attribute 'sp_model'` (Baichuan2 #204). The exception is
# the first exception-named class after the last frame.
_FLAT_FRAME = re.compile(r"(?P<path>[^\s\"“”]+)[\"“”]\s*,\s*line \d+,? in (?P<func>[\w<>.]+)")
_FLAT_EXCEPTION = re.compile(r"\s(?P<type>(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)):\s")
# Python 3.11's exception groups (anyio and Starlette in vLLM's API server) print each sub-exception's traceback
# behind a gutter: "  | Traceback (most recent call last):", "    |   File …", "    | TypeError: …" (vLLM #39683).
# Without its gutter such a line is the traceback line it stands for; a table's row ("| gsm8k | 3 |") is not.
_GROUP_GUTTER = re.compile(r"^\s*[|+] (?=\s*(?:Traceback \(most recent call last\)|Exception Group Traceback|"
                           r"File \"|(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Group|Exit|Interrupt)(?::|$)))")


def untyped_torch_exception(parsed: ParsedLine, lineno: int) -> Traceback | None:
    """torch's message printed without its class (`UNTYPED_TORCH_MESSAGES`), as the exception it is."""
    message = parsed.message.strip()
    low = message.lower()
    for words, exception_type in UNTYPED_TORCH_MESSAGES:
        if low.startswith(words):
            return Traceback(first_line=lineno, line=lineno, exception_type=exception_type, message=message,
                             process=parsed.process, text=message)
    return None


def flattened_traceback(parsed: ParsedLine, lineno: int) -> Traceback | None:
    """A whole traceback printed on one line (`_FLAT_FRAME`): its frames and its exception, or None."""
    message = parsed.message
    found = list(_FLAT_FRAME.finditer(message))
    if not found:
        return None
    frames = [(m.group("path"), m.group("func")) for m in found][:MAX_FRAMES]
    last_frame_end = found[-1].end()
    exception = _FLAT_EXCEPTION.search(message, last_frame_end)  # its message may name other classes
    if exception is None:
        return None
    return Traceback(first_line=lineno, line=lineno, exception_type=exception.group("type"),
                     message=message[exception.end():].strip(), frames=frames, process=parsed.process,
                     text=message[exception.start("type"):].strip(),
                     last_code=message[last_frame_end:exception.start()].strip()[:200])


def without_group_gutter(parsed: ParsedLine) -> ParsedLine:
    """The line without an exception group's `|` gutter (`_GROUP_GUTTER`), or the line as it was."""
    gutter = _GROUP_GUTTER.match(parsed.message)
    return replace(parsed, message=parsed.message[gutter.end():]) if gutter else parsed
