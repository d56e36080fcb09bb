"""Issue 14, items 5 and 6, through the running app (`chainlit run app.py` as a subprocess):

- the folders and files it creates (data folder, files folder, chat.db, the auth secret, its log folder and
  the vLLM log it writes) are owner-only under a permissive umask, and a loose log folder is tightened;
- credentials written into the engine log it tails, and echoed by the server in an error body, are masked
  in the panel API, in the chat and in the app's own log (the key of the launch as a literal);
- users who are not admins see the start-up phase, not the progress line's paths.

The attached server is a small local HTTP server (the engine is irrelevant to these paths); the spawned
engine of the last test is a script that writes vLLM's start-up lines and waits, because what is tested
is what the app makes of those lines, at a moment a real start passes in seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.apps import AppServer, start_app
from bench.chainlit_client import ChainlitSession
from tests.local_http import AttachChecksHandler, serving, until

ADMIN_PASSWORD = "adm-pass-123456"
ALICE_PASSWORD = "alice-pass-123"
KEY = "Zq3wL9pX2mK7vB1nC5dF8h"  # the attached server's key: no shape gives it away, only the literal can
URL_PASSWORD = "UrlPass-9911"
DB_PASSWORD = "DbPass-4242"
BASIC = "b3BzOnNlY3JldC1iYXNpYw=="
GITHUB = "ghp_" + "Ab12Cd34Ef" * 4
AWS = "AKIA" + "QWERTYUIOPASDFGH"
PHRASE = "correct horse battery"
SECRETS = (KEY, URL_PASSWORD, DB_PASSWORD, BASIC, GITHUB, AWS, PHRASE, "hf_secrettoken99", "sk-proj-Abcdefgh123")

# What an engine log may hold: vLLM echoing its arguments, a proxy's request dump, a pasted curl command.
ENGINE_LINES = [
    f"(APIServer pid=11) INFO 12-01 10:00:00 [utils.py:233] non-default args: {{'model': '/srv/m', "
    f"'api_key': ['{KEY}'], 'hf_token': 'hf_secrettoken99'}}",
    f"(APIServer pid=11) INFO 12-01 10:00:01 [launcher.py:1] python -m vllm.entrypoints.openai.api_server "
    f"--api-key={KEY} --hf-token hf_secrettoken99 --port 8000",
    f"(APIServer pid=11) WARNING 12-01 10:00:02 [db.py:7] could not reach postgresql://chat:{DB_PASSWORD}@db:5432/c",
    f"(APIServer pid=11) INFO 12-01 10:00:03 [proxy.py:9] headers: Authorization: Basic {BASIC}",
    f"(APIServer pid=11) INFO 12-01 10:00:04 [proxy.py:9] login form: password={PHRASE}",
    f"(APIServer pid=11) INFO 12-01 10:00:05 [hub.py:3] git remote https://{GITHUB}@github.com/o/r.git",
    f"(APIServer pid=11) INFO 12-01 10:00:06 [s3.py:3] AWS_ACCESS_KEY_ID={AWS} client=sk-proj-Abcdefgh123",
    f"(APIServer pid=11) INFO 12-01 10:00:07 [api_server.py:1] request with key {KEY} accepted",
    "(APIServer pid=11) INFO 12-01 10:00:08 [api_server.py:1] end of the pasted lines",
]
# The body of the attached server's refusal, which the chat quotes and the app logs.
ERROR_BODY = (f"upstream postgresql://svc:{DB_PASSWORD}@db/x refused key {KEY}; "
              f"Authorization: Basic {BASIC}; token={PHRASE}")


class _Server(AttachChecksHandler):
    """Answers the attach checks like vLLM, and refuses every chat request with credentials in the body."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_json(400, {"object": "error", "message": ERROR_BODY, "type": "BadRequestError", "code": 400})


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """The app inherits the umask most systems default to: unguarded, folders are 0755 and files 0644."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _texts(session: ChainlitSession) -> list[str]:
    """Every message text the browser was sent."""
    return [str(e.data.get("output", "")) for e in session.events
            if e.name in ("new_message", "update_message") and isinstance(e.data, dict)]


def _start(tmp_path: Path, data_dir: Path, **env: str) -> AppServer:
    """The app with the given data folder (not made beforehand); its output goes to tmp_path/run/app.log."""
    return start_app(tmp_path / "run", admin_password=ADMIN_PASSWORD, chat_user="alice",
                     user_password=ALICE_PASSWORD, CHAT_DATA_DIR=str(data_dir), **env)


@pytest.mark.usefixtures("permissive_umask")
def test_attached_app_masks_credentials_and_keeps_its_files_owner_only(tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh" / "data"
    old_logs = tmp_path / "old-logs"  # an older install's log folder, made with the default umask
    old_logs.mkdir(mode=0o755)
    (old_logs / "vllm.log.1").write_text("a previous launch\n")
    os.chmod(old_logs / "vllm.log.1", 0o644)
    engine_log = tmp_path / "attached" / "vllm.log"
    engine_log.parent.mkdir()
    engine_log.write_text("")
    with serving(_Server) as server_url:
        url = server_url.replace("http://", f"http://ops:{URL_PASSWORD}@") + "/v1"
        app = _start(tmp_path, data_dir, CHAT_MODE="attach", CHAT_VLLM_URL=url, CHAT_API_KEY=KEY,
                     CHAT_LOG_FILE=str(engine_log), CHAT_LOG_DIR=str(old_logs))
        try:
            asyncio.run(_exercise_attached(app, engine_log))
        finally:
            app.stop()
    log_text = app.log_text()
    print(log_text[-3000:])

    # Item 6: the app's own log quotes the refusal, masked
    assert "chat request failed: BadRequestError" in log_text
    for secret in SECRETS:
        assert secret not in log_text, f"{secret!r} in the app log"
    assert "postgresql://svc:***@db/x refused key ***; Authorization: Basic ***; token=***" in log_text

    # Item 5: what the app created is owner-only; the old log folder was tightened, with a log line
    modes = {p.relative_to(tmp_path).as_posix(): oct(mode(p)) for p in [
        tmp_path / "fresh", data_dir, data_dir / "files", data_dir / "auth_secret", *data_dir.glob("chat.db*"),
        old_logs, old_logs / "vllm.log.1"]}
    print(modes)
    assert (data_dir / "chat.db").exists()
    assert {name: m for name, m in modes.items() if m != oct(0o600)} == {
        "fresh": oct(0o700), "fresh/data": oct(0o700), "fresh/data/files": oct(0o700), "old-logs": oct(0o700)}
    assert f"{old_logs} was readable by other users (mode 755); now owner-only (700)" in log_text
    assert "vllm.log.1 was readable by other users (mode 644)" in log_text


async def _exercise_attached(app: AppServer, engine_log: Path) -> None:
    await app.wait_http(120)
    # The server refuses every chat request: the app's completion probe may already call it degraded.
    await app.wait_engine(("attached", "degraded"), timeout=60)
    with engine_log.open("a") as handle:  # the attached server writes its log; the app tails it
        handle.write("\n".join(ENGINE_LINES) + "\n")

    async def tail_complete() -> dict[str, Any] | None:
        payload = await app.diagnostics()
        texts = [line["text"] for line in payload["log_tail"]]
        return payload if any("end of the pasted lines" in t for t in texts) else None

    payload = await until("the pasted lines in the panel's log tail", tail_complete)
    shown = json.dumps(payload)
    tail = [line["text"] for line in payload["log_tail"]]
    print("\n".join(tail))
    for secret in SECRETS:
        assert secret not in shown, f"{secret!r} in the panel API"
    assert any("'api_key': ***, 'hf_token': '***'" in t for t in tail)
    assert any("postgresql://chat:***@db:5432/c" in t for t in tail)
    assert any(t.endswith("request with key *** accepted") for t in tail)  # the key, as a literal

    async with ChainlitSession(app.url, "alice", ALICE_PASSWORD) as alice:
        await alice.ask("Hello?", timeout=60)
        chat = "\n".join(_texts(alice))
    print(chat)
    assert "rejected the request (400)" in chat  # the refusal is quoted to the user ...
    for secret in SECRETS:
        assert secret not in chat, f"{secret!r} in the chat"  # ... without the credentials it carried


FAKE_ENGINE = """#!/bin/sh
# Writes what vLLM writes at start-up (to the log the app gave it), then waits like a loading server.
echo "(APIServer pid=$$) INFO 12-01 10:00:00 [api_server.py:1] vLLM API server version 0.11.0"
echo "(APIServer pid=$$) INFO 12-01 10:00:01 [model_runner.py:1] Starting to load model /srv/secret-project/weights"
exec sleep 600
"""


@pytest.mark.usefixtures("permissive_umask")
def test_spawned_start_shows_users_the_phase_and_writes_an_owner_only_log(tmp_path: Path) -> None:
    venv = tmp_path / "engine-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(FAKE_ENGINE)
    os.chmod(venv / "bin" / "python", 0o755)
    data_dir = tmp_path / "fresh-data"
    app = _start(tmp_path, data_dir, CHAT_ENGINE_VENV=str(venv), CHAT_PREFLIGHT="0",
                 CHAT_LOG_DIR=str(data_dir / "logs"))
    try:
        admin_text, alice_text = asyncio.run(_welcomes(app))
    finally:
        app.stop()
    print(admin_text, alice_text, sep="\n")
    assert "Starting to load model /srv/secret-project/weights" in admin_text  # admins: the detail
    assert "The model server is starting" in alice_text and "— loading" in alice_text
    assert "/srv/" not in alice_text and "secret-project" not in alice_text
    assert (mode(data_dir / "logs"), mode(data_dir / "logs" / "vllm.log")) == (0o700, 0o600)


async def _welcomes(app: AppServer) -> tuple[str, str]:
    await app.wait_http(120)

    async def loading() -> bool:
        progress = (await app.diagnostics())["engine"].get("progress") or ""
        return "Starting to load model" in progress

    await until("the engine's progress line", loading)
    texts = []
    for user, password in (("admin", ADMIN_PASSWORD), ("alice", ALICE_PASSWORD)):
        async with ChainlitSession(app.url, user, password) as session:
            texts.append(next(t for t in _texts(session) if t.startswith("Welcome!")))
    return texts[0], texts[1]
