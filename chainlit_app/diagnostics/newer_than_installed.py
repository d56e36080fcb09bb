"""A model newer than the installed code (`model_version_above_supported`): a refusal that lists the versions of a
model family the code supports and names the version it got, when the one it got is above every listed one.

Why a figure comparison: vLLM's MiniCPM-V class checks the checkpoint's `version` against the versions its release
implements ('Currently, MiniCPMV only supports versions 2.0, 2.5, 2.6, 4.0. Got version: (4, 5)'). A version above
all of them is a model released after this vLLM (a later release adds it: version_mismatch); one below or between
them is a checkpoint no release serves (a start-up failure), which the pattern alone cannot tell apart. Releases
before 0.10 print the list without the version they got ('Currently, MiniCPMV only supports versions 2.0, 2.5, and
2.6', MiniCPM-V 4 refused: round 26): a family's releases add versions and never drop one, so a refusal that names
none is read as the newer model too.
"""

from __future__ import annotations

import re

MECHANISM_ID = "model_version_above_supported"
PATTERN = (r"only supports? versions? (?P<listed>\d+(?:\.\d+)*(?:\s*(?:,|and|or|, and)\s*\d+(?:\.\d+)*)*)\.?\s*"
           r"(?:Got version:?\s*(?P<got>\(?\d+(?:\s*[.,]\s*\d+)*\)?)|$)")
_READ = re.compile(PATTERN, re.IGNORECASE)
_VERSION = re.compile(r"\d+(?:\.\d+)*")


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def version_above_supported(message: str) -> bool:
    """Whether the version a refusal got is above every version it lists as supported."""
    m = _READ.search(message)
    if m is None:
        return False
    listed = [_parts(v) for v in _VERSION.findall(m.group("listed"))]
    if m.group("got") is None:  # the refusal names no version: the newer model (see above)
        return bool(listed)
    return bool(listed) and _parts(m.group("got")) > max(listed)
