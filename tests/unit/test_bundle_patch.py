"""The installed Chainlit's page script holds the quadratic e-mail expression exactly once and is served with the
linear one: a Chainlit upgrade that changes the bundle fails here, so that bundle_patch.py is looked at again.
(The browser tests measure the effect: tests/e2e/test_big_paste.py and test_long_words.py.)"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import chainlit
from fastapi import FastAPI
from httpx import ASGITransport, AsyncClient

from chainlit_app.bundle_patch import (
    LINEAR_EMAIL,
    QUADRATIC_EMAIL,
    bundle_router,
    entry_script,
    patch_text,
    patched_bundle,
)

BUILD_DIR = Path(chainlit.__file__).parent / "frontend" / "dist"


def test_the_installed_bundle_holds_the_expression_once_and_is_patched() -> None:
    script = entry_script(BUILD_DIR)
    assert script is not None and script.is_file()
    original = script.read_text(encoding="utf-8")
    assert original.count(QUADRATIC_EMAIL) == 1
    patched = patch_text(original)
    assert patched is not None and patched.count(LINEAR_EMAIL) == 1 and QUADRATIC_EMAIL not in patched
    assert len(patched) - len(original) == len(LINEAR_EMAIL) - len(QUADRATIC_EMAIL)


def test_a_bundle_without_it_or_with_it_twice_is_left_alone() -> None:
    assert patch_text("let a = 1;") is None
    assert patch_text(QUADRATIC_EMAIL + ";" + QUADRATIC_EMAIL) is None


def test_the_expressions_differ_only_by_the_look_behind() -> None:
    assert LINEAR_EMAIL.replace(r"(?<![-.\w+])", "") == QUADRATIC_EMAIL


def test_python_reads_the_same_addresses_with_both() -> None:
    """Python's re has the same semantics for these constructs: addresses that start a word match the same."""
    old = re.compile(QUADRATIC_EMAIL.strip("/g"))
    new = re.compile(LINEAR_EMAIL.strip("/g"))
    for text in ["write to ops@example.com or a.b+c@mail.example.org.", "(x@y.cn)", "邮箱：dev@baidu.com。",
                 "no address here", "foo@bar", "trailing dot a@b.c."]:
        assert [m.span() for m in old.finditer(text)] == [m.span() for m in new.finditer(text)], text


def test_the_route_serves_the_patched_script_with_an_etag() -> None:
    app = FastAPI()
    app.include_router(bundle_router(BUILD_DIR))
    script = entry_script(BUILD_DIR)
    assert script is not None

    async def fetch() -> tuple[int, str, str, int]:
        async with AsyncClient(transport=ASGITransport(app=app), base_url="http://test") as client:
            first = await client.get(f"/assets/{script.name}")
            again = await client.get(f"/assets/{script.name}", headers={"If-None-Match": first.headers["etag"]})
            return first.status_code, first.text, first.headers["content-type"], again.status_code

    status, text, content_type, revalidated = asyncio.run(fetch())
    assert status == 200 and content_type.startswith("text/javascript")
    assert LINEAR_EMAIL in text and QUADRATIC_EMAIL not in text
    assert revalidated == 304
    bundle = patched_bundle(script)
    assert bundle is not None and bundle.text == text
