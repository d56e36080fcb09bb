"""A printed system inventory is a list of fields, not an answer (`inventory_fields_not_loop`).

A tool such as neofetch, `nvidia-smi -L` pasted beside it, or a script printing its settings writes one
`Label: value` line per field, and one identical line per device or worker of the same model
(`GPU: NVIDIA RTX 6000 Ada Generation` three times for three GPUs). Counted as printed lines, three identical
lines looked like an answer repeating itself (the round-24 Xinference post was named degenerate_output on its
GPU line). A line is skipped from that count when it is such a field inside a block of consecutive field lines
naming at least three different labels (OS, Kernel, CPU, GPU, Memory): a model's loop repeats its own words,
it does not print an inventory around them. One label repeated alone ('Answer: C' again and again) or two
alternating labels stay countable, and a block printed again as a whole is still read by `PrintedCycle`.
"""

from __future__ import annotations

import re

MECHANISM_ID = "inventory_fields_not_loop"
# 'GPU: NVIDIA RTX 6000 Ada Generation', 'Kernel: 6.8.0-31-generic', 'Memory: 26786MiB / 257222MiB':
# a label of one to three words, a colon, a short value on the same line
_FIELD = re.compile(r"(?P<label>[A-Za-z][\w.()/-]*(?: [\w.()/-]+){0,2}):[ \t]+\S.{0,100}")
MIN_LABELS = 3


class InventoryBlock:
    """The labels of the current run of consecutive printed field lines (a line between ends the run)."""

    def __init__(self) -> None:
        self._labels: set[str] = set()
        self._last = -1

    def holds(self, key: str, lineno: int, previous: int) -> bool:
        """Record one printed line (`previous`: the log's last non-blank line before it); True when it is a
        field of an inventory: a `Label: value` line in a run of field lines with MIN_LABELS labels or more."""
        m = _FIELD.fullmatch(key.strip())
        if m is None:
            self._labels.clear()
            return False
        if previous != self._last:
            self._labels.clear()  # another line came between: a new run
        self._last = lineno
        self._labels.add(m.group("label").lower())
        return len(self._labels) >= MIN_LABELS
