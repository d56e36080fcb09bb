"""Chainlit's page with one regular expression of its markdown renderer replaced, served in front of the original.

Why: the page turns e-mail addresses in every message into links with `/([-.\\w+]+)@([-\\w]+(?:\\.[-\\w]+)+)/g`
(mdast-util-gfm-autolink-literal 1.x, bundled in Chainlit 2.12). On a long run of letters without an `@` it tries
every start position and scans to the end of the run from each: quadratic. Measured in Chromium on this machine,
a message of one 25,000-letter word took 0.7 s to show, 50,000 took 3.6 s, 100,000 took 10.8 s, and 300,000
blocked the page for about a minute, long enough for the socket to miss its pings and drop the message. A base64
blob pasted by a user, or a model answer repeating one letter, does the same while it streams. The library's later
versions fixed it with a look-behind that starts a match only where a word starts; this module applies the same
idea to the bundle the installed Chainlit ships: `(?<![-.\\w+])` in front, so each run is tried once (linear).
Where a match starts at the start of a word (every address in practice) the links are the same.

The bundle is read once, on the first request for it; if the expression is not in it (a Chainlit that fixed it,
or a different build), nothing is replaced and Chainlit serves its own file (tests/unit/test_bundle_patch.py fails
then, so that the change is looked at).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fastapi import APIRouter, Request, Response

log = logging.getLogger(__name__)

QUADRATIC_EMAIL = r"/([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)/g"
LINEAR_EMAIL = r"/(?<![-.\w+])([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)/g"
_ENTRY_SCRIPT = re.compile(r'<script\b[^>]*\bsrc="/assets/(index-[\w-]+\.js)"')


@dataclass(frozen=True)
class PatchedBundle:
    """The page's entry script with the linear expression, and its ETag."""

    text: str
    etag: str


def entry_script(build_dir: Path) -> Path | None:
    """The script index.html loads (its name carries a content hash, so it changes with every Chainlit build)."""
    found = _ENTRY_SCRIPT.search((build_dir / "index.html").read_text(encoding="utf-8"))
    return build_dir / "assets" / found.group(1) if found else None


def patch_text(bundle: str) -> str | None:
    """`bundle` with the quadratic expression replaced, or None unless it holds it exactly once."""
    if bundle.count(QUADRATIC_EMAIL) != 1:
        return None
    return bundle.replace(QUADRATIC_EMAIL, LINEAR_EMAIL)


@cache
def patched_bundle(script: Path) -> PatchedBundle | None:
    """Read and patch once per process (4.6 MB of JavaScript in Chainlit 2.12: kept in memory, not re-read)."""
    text = patch_text(script.read_text(encoding="utf-8"))
    if text is None:
        log.warning("the quadratic e-mail expression is not in %s (Chainlit changed?): served unpatched", script.name)
        return None
    return PatchedBundle(text, '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"')


def bundle_router(build_dir: Path) -> APIRouter:
    """A route for the page's entry script alone, to be installed in front of Chainlit's /assets route."""
    router = APIRouter()
    script = entry_script(build_dir)
    if script is None or not script.is_file():
        log.warning("Chainlit's page script not found under %s: its markdown renderer is served unpatched", build_dir)
        return router

    @router.get(f"/assets/{script.name}")
    async def entry(request: Request) -> Response:
        bundle = patched_bundle(script)
        if bundle is None:  # not patchable: the same bytes Chainlit would serve
            return Response(script.read_bytes(), media_type="text/javascript")
        if request.headers.get("if-none-match") == bundle.etag:
            return Response(status_code=304, headers={"ETag": bundle.etag})
        return Response(bundle.text, media_type="text/javascript", headers={"ETag": bundle.etag})

    return router
