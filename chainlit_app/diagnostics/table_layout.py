"""Printed tables are layout, not an answer (`table_rows_not_answers`).

A benchmark tool's summary (evalscope's `+----+----+` grid of 100 of 100 requests succeeded, tabulate's
`| Key | Value |` rows, markdown's `|---|---|`) repeats its border line between every row and gives its rows one
shape: read as printed lines, the repeated border looked like a model's loop (PR #27776's healthy benchmark
was named degenerate_output). A line that is a table's border or one of its rows is skipped by the printed
readings: a model's looping answer never comes out as a drawn grid.
"""

from __future__ import annotations

import re

MECHANISM_ID = "table_rows_not_answers"
# a border: rule characters joined at '+' or '|' corners ('+-----+-----+', '|===|===|', '|:---|---:|')
_BORDER = re.compile(r"[+|]?(?:[ \t]*:?[-=─━═]{2,}:?[ \t]*[+|┼│])+[ \t]*(?::?[-=─━═]{2,}:?)?[ \t]*")
# a row: two or more cells between pipes ('| Total requests | 100 |')
_ROW = re.compile(r"[|│][^|│\n]*(?:[|│][^|│\n]*){1,}[|│]")


def is_table_line(line: str) -> bool:
    """True for a printed table's border or row (two cells or more between pipes)."""
    text = line.strip()
    return bool(_BORDER.fullmatch(text) or _ROW.fullmatch(text))
