"""GET /api/input-limits: what public/input_guard.js needs to keep a too-large message in the composer.

The route is mounted on a bare FastAPI app and called over ASGI (the real handler, the real catalogue)."""

from __future__ import annotations

import re

import httpx
from fastapi import FastAPI

from chainlit_app.cleaning import MAX_MESSAGE_BYTES
from chainlit_app.i18n import placeholders
from chainlit_app.settings import PROJECT_ROOT
from chainlit_app.web import FRAME_RESERVE_BYTES, INPUT_LIMITS_PATH, input_limits_router

GUARD = PROJECT_ROOT / "public" / "input_guard.js"
CONFIG = PROJECT_ROOT / ".chainlit" / "config.toml"


async def _get(setting: str, **kwargs: object) -> dict[str, object]:
    app = FastAPI()
    app.include_router(input_limits_router(lambda: setting))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        response = await client.get(INPUT_LIMITS_PATH, **kwargs)  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


async def test_the_limit_comes_from_the_transport_limit_less_the_json_around_the_text() -> None:
    body = await _get("en")
    assert body["frame_bytes"] == MAX_MESSAGE_BYTES
    assert body["limit_bytes"] == MAX_MESSAGE_BYTES - FRAME_RESERVE_BYTES
    assert 0 < FRAME_RESERVE_BYTES < MAX_MESSAGE_BYTES // 8


async def test_the_sentence_has_the_limit_and_leaves_the_size_to_the_script() -> None:
    body = await _get("en")
    message = str(body["message"])
    assert placeholders(message) == {"size"}  # the only blank: the script fills in the size it measured
    assert f"{MAX_MESSAGE_BYTES - FRAME_RESERVE_BYTES:,}" in message and "shorten" in message
    assert body["language"] == "en"


async def test_the_language_follows_the_browser_unless_chat_language_is_set() -> None:
    chinese = await _get("auto", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    assert chinese["language"] == "zh-CN" and "字节" in str(chinese["message"])
    english = await _get("en", headers={"Accept-Language": "zh-CN"})
    assert english["language"] == "en"
    asked = await _get("en", params={"lang": "zh-CN"})
    assert asked["language"] == "zh-CN"


def test_chainlit_loads_the_guard_and_the_guard_asks_the_route() -> None:
    assert re.search(r'^custom_js = "/public/input_guard\.js"$', CONFIG.read_text(encoding="utf-8"), re.M)
    script = GUARD.read_text(encoding="utf-8")
    assert f'"{INPUT_LIMITS_PATH}"' in script
    assert "stopImmediatePropagation" in script and "TextEncoder" in script
    # No words of its own: every text it shows is the route's message (the catalogue's).
    assert not re.search(r"textContent\s*=\s*[\"'`]", script)
