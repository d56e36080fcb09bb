"""Lines a terminal, a mail or a page broke at a fixed width, joined again before they are read.

A log pasted through `fold`, an e-mail client or a fixed-width page loses its line ends: `CUDA out of memory`
lands on one line and `Tried to allocate` on the next, a JSON body is cut inside its strings, and the pieces
read as nothing, so a failure came back `healthy` (36 of 556 failing dev logs at 120 columns, 56 at 80) and
healthy logs raised findings (6 and 15 of 172). The cut width is the longest length at least `MIN_CUT_LINES` lines
share and no line exceeds; a line of that width is joined to the next unless what follows starts as a line does.

What is *not* a cut, each seen in the corpus as posted (tables were why a first joining was dropped):
- a table's row: it ends on a border (`|`, `+`, `│`, ...) or the next line starts with the same border;
- a line repeated as such (a looping answer printed line after line, numbered or not);
- a line followed by one that starts like it (the same template: stats lines, `Added request ...`), and then
  every line of that template at the width, the last of a run too (what follows it is another line);
- a line followed by one that carries a log line's own prefix (time, process tag, level, logger, a line number
  or a quote's `>` put before every line) or a traceback's start; but a piece that ends in a digit followed by
  one that starts with digits and a colon is a number cut in two (`utils.py:10` then `6: UserWarning`), when the
  piece itself bears no line number: `grep -n` numbers every line, not one.

Bounded: the width and the repeated lines are taken from the first `WRAP_WINDOW` lines (a whole log may be
large; the live tail never goes through here: vLLM's own log is not wrapped), and a joined line stops growing at
`MAX_JOINED_CHARS`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import chain, islice, pairwise

from chainlit_app.diagnostics.lineformat import EXCEPTION_START, ParsedLine, parse_line
from chainlit_app.diagnostics.request_line_fold import RequestLineFold

WRAP_WINDOW = 256
MIN_CUT_WIDTH = 60  # narrower "widths" are short lines that happen to be equal, not a terminal's
MIN_CUT_LINES = 2
MAX_JOINED_CHARS = 64 * 1024
_BORDERS = frozenset("|+│┃┆╎║-=─━*#")
_SAME_START = 6  # characters two lines of one template share at least
_LINE_NUMBER = re.compile(r"\s*\d{1,7}[:\t-]")
_TEMPLATE_START = 16  # characters of their message

Numbered = tuple[int, str, bool]


def unwrapped(numbered: Iterable[Numbered]) -> Iterator[Numbered]:
    """The lines with the pieces of each cut line joined; a joined line keeps its first piece's number."""
    lines = iter(numbered)
    window = list(islice(lines, WRAP_WINDOW))
    texts = [_bare(text) for _, text, _ in window]  # a file's lines come with their line end
    width = cut_width(texts)
    if width is None:
        yield from chain(window, lines)
        return
    whole = _whole_at_width(texts, width)
    held: Numbered | None = None
    last = ""
    request = RequestLineFold()
    for item in chain(window, lines):
        _, text, replaced = item
        bare = _bare(text)
        so_far = _bare(held[1]) if held is not None else ""
        if held is not None and len(so_far) < MAX_JOINED_CHARS \
                and (_is_cut(last, bare, width, whole) or request.inside(so_far, last, bare, width)):
            held = (held[0], so_far + text, held[2] or replaced)
        else:
            if held is not None:
                yield held
            held = item
            request.reset()
        last = bare
    if held is not None:
        yield held


def _bare(text: str) -> str:
    return text.rstrip("\r\n")


def cut_width(texts: list[str]) -> int | None:
    """The width the lines were broken at, or None: the longest length, if at least `MIN_CUT_LINES` lines
    have it and it is at least `MIN_CUT_WIDTH`."""
    lengths = Counter(len(text) for text in texts)
    if not lengths:
        return None
    top = max(lengths)
    if top < MIN_CUT_WIDTH or lengths[top] < MIN_CUT_LINES:
        return None
    return top


def _whole_at_width(texts: list[str], width: int) -> tuple[set[str], set[tuple[str, str]]]:
    """Lines of the width seen whole: (a line followed by itself, the starts of a template whose line of the width
    was followed by another of its kind). A cut's piece is followed by its rest, never by a line like it."""
    parsed = [parse_line(text) for text in texts]  # once per line, not once per side of each pair
    pairs = list(pairwise(zip(texts, parsed, strict=True)))
    repeated = {a for (a, pa), (_b, pb) in pairs if pa.message == pb.message}
    templates = {_template_of(pa) for (a, pa), (b, pb) in pairs
                 if len(a) == width and a[:_SAME_START] == b[:_SAME_START] and _template_of(pa) == _template_of(pb)}
    return repeated, templates


def _template(text: str) -> tuple[str, str]:
    """What lines of one template share: their logger and the start of their message (not the process tag or
    the time, which every line of a process shares)."""
    return _template_of(parse_line(text))


def _template_of(parsed: ParsedLine) -> tuple[str, str]:
    return parsed.logger, parsed.message[:_TEMPLATE_START]


def _is_cut(line: str, following: str, width: int, whole: tuple[set[str], set[tuple[str, str]]]) -> bool:
    """Whether `following` is the rest of `line`, broken off at `width` (the module's list of what is not)."""
    repeated, templates = whole
    if len(line) != width or not following or line in repeated or _template(line) in templates:
        return False
    if line[-1] in _BORDERS or (following[0] in _BORDERS and following[0] == line[0]):
        return False
    if following[:_SAME_START] == line[:_SAME_START]:
        return False
    if line[-1].isdigit() and _LINE_NUMBER.match(following) and not _LINE_NUMBER.match(line):
        return True
    return not _starts_as_a_line(following)


def _starts_as_a_line(text: str) -> bool:
    parsed = parse_line(text)
    # anything taken off as a prefix (a time, a process tag, a level, grep's or cat's line number, a quote's `>`),
    # or an exception's class opening the line: two lines of one length ending on one, each a record of its own
    return parsed.message != text or bool(parsed.level) or text.startswith(("Traceback", "  File ")) \
        or EXCEPTION_START.match(text) is not None
