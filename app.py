"""Chainlit entry point: wires Chainlit's hooks to the chainlit_app package and nothing more."""

from __future__ import annotations

import logging

from chainlit_app import prelaunch
from chainlit_app.applog import configure_logging
from chainlit_app.runtime import Runtime
from chainlit_app.settings import settings_or_exit

configure_logging()

SETTINGS = settings_or_exit()
# vLLM takes 20 s to minutes to start. Usually it was launched when the interpreter started, before
# Chainlit's own imports (chainlit_app/prelaunch.py); else it is launched now, before the imports below
# (openai, SQLAlchemy: about 0.7 s). Start-up (on_app_startup) then waits for that launch, or does the
# whole start itself when something slow must come first (see Runtime.launch_early). A `chainlit run -w`
# reload runs this file again in the same process: it keeps the running Runtime and its vLLM.
RUNTIME, RELOADED = prelaunch.process_runtime(lambda: Runtime(SETTINGS))
if not RELOADED:
    RUNTIME.launch_early()

from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import chainlit as cl  # noqa: E402
import chainlit.config  # noqa: E402
import chainlit.server  # noqa: E402
from chainlit.config import config as chainlit_config  # noqa: E402
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer  # noqa: E402
from chainlit.types import ThreadDict  # noqa: E402

from chainlit_app import chat, notices, panel, remedy_notices, remedy_routes  # noqa: E402
from chainlit_app.auth import (  # noqa: E402
    announce_login,
    current_user_is_admin,
    ensure_auth_secret,
    login_router,
    make_user,
)
from chainlit_app.bundle_patch import bundle_router  # noqa: E402
from chainlit_app.cleaning import MAX_MESSAGE_BYTES  # noqa: E402
from chainlit_app.gc_tuning import freeze_startup_objects  # noqa: E402
from chainlit_app.history import conversation_turns, database_url, make_data_layer, prepare_schema  # noqa: E402
from chainlit_app.i18n import t  # noqa: E402
from chainlit_app.notices import ADMIN_ONLY  # noqa: E402
from chainlit_app.origins import OriginPolicy  # noqa: E402
from chainlit_app.private_files import private_dir  # noqa: E402
from chainlit_app.session_language import apply_language, session_language  # noqa: E402
from chainlit_app.sessions import install_session_checks  # noqa: E402
from chainlit_app.throttle import LoginThrottle  # noqa: E402
from chainlit_app.users import UserDirectory  # noqa: E402
from chainlit_app.web import health_router, input_limits_router, install_origin_checks, install_routes  # noqa: E402

# Chainlit keeps session files in ./.files and deletes that whole folder when any instance started from
# this directory shuts down, pulling it from under the others (seen: FileNotFoundError when the panel
# opened). Each app keeps them in its own data folder instead.
chainlit.config.FILES_DIRECTORY = SETTINGS.storage.data_dir / "files"
private_dir(chainlit.config.FILES_DIRECTORY)  # uploads and session files: owner-only like the history
# A socket frame over 1 MiB is refused by the transport (the page would reconnect and the message be lost):
# public/input_guard.js keeps such a message in the composer and says why (limits from /api/input-limits);
# below that, chat.py checks a message's length before anything else and refuses one over 200,000
# characters with a clear answer.
# 8 MB used to be accepted and cleaned on the event loop first (1.8 s per paste).
chainlit.server.sio.eio.max_http_buffer_size = MAX_MESSAGE_BYTES
# Logins: users and roles are checked against this directory on every request and socket connection
# (sessions.py), failed logins are throttled per client address and name (throttle.py), and only the
# app's own origin and CHAT_ALLOWED_ORIGINS may act with a user's cookies (origins.py).
USERS = UserDirectory(SETTINGS, token_key=ensure_auth_secret(SETTINGS))
LOGIN_THROTTLE = LoginThrottle()
install_session_checks(USERS, lifetime=SETTINGS.auth.session_hours * 3600)
install_origin_checks(OriginPolicy(SETTINGS.auth.origins))
install_routes(login_router(LOGIN_THROTTLE, SETTINGS.chat.language))
install_routes(health_router(lambda: RUNTIME))
install_routes(input_limits_router(lambda: RUNTIME.settings.chat.language))
install_routes(panel.diagnostics_router(lambda: RUNTIME))
install_routes(remedy_routes.remedy_router(lambda: RUNTIME))
# The page's markdown renderer made e-mail links with a quadratic expression: one long word froze the page for a
# minute (bundle_patch.py says how it was measured); its entry script is served with a linear one in its place.
install_routes(bundle_router(Path(chainlit.server.build_dir)))
if not RELOADED:  # a `-w` reload keeps the Runtime, whose desk already has its listener
    remedy_notices.tell_open_sessions(RUNTIME)
DATABASE_URL = database_url(SETTINGS.storage.data_dir)


@cl.data_layer
def data_layer() -> SQLAlchemyDataLayer:
    return make_data_layer(DATABASE_URL, on_failure=RUNTIME.monitor.observe_history_failure,
                           on_recovered=RUNTIME.monitor.observe_history_recovered,
                           language=lambda: session_language(RUNTIME))


@cl.on_app_startup
async def on_app_startup() -> None:
    await prepare_schema(DATABASE_URL)
    announce_login(USERS, SETTINGS, f"http://{chainlit_config.run.host}:{chainlit_config.run.port}")
    RUNTIME.share_findings(DATABASE_URL, f"{chainlit_config.run.host}:{chainlit_config.run.port}")
    RUNTIME.start_background()
    freeze_startup_objects()  # full collections no longer stall every stream for 0.1 s (gc_tuning.py)


@cl.on_app_shutdown
async def on_app_shutdown() -> None:
    await RUNTIME.stop()


@cl.password_auth_callback
async def on_login(username: str, password: str) -> cl.User | None:
    return await make_user(USERS, LOGIN_THROTTLE, username, password)


@cl.on_chat_start
async def on_chat_start() -> None:
    apply_language(RUNTIME)
    if current_user_is_admin():
        await panel.offer_panel()
        await chat.start_chat(RUNTIME, actions=[panel.open_action()], is_admin=True)
    else:
        await chat.start_chat(RUNTIME)


@cl.on_chat_resume
async def on_chat_resume(thread: ThreadDict) -> None:
    apply_language(RUNTIME)
    steps: list[dict[str, Any]] = [dict(step) for step in thread.get("steps", [])]
    chat.resume_chat(RUNTIME, conversation_turns(steps, chat.AUTHOR))
    if current_user_is_admin():
        await panel.offer_panel()


@cl.action_callback(notices.RETRY_ACTION)
async def on_retry(action: cl.Action) -> None:
    apply_language(RUNTIME)
    await chat.retry(RUNTIME, action.payload, current_user_is_admin())


@cl.action_callback(notices.OPEN_DIAGNOSTICS_ACTION)
async def on_open_diagnostics(_action: cl.Action) -> None:
    apply_language(RUNTIME)
    if current_user_is_admin():
        await panel.open_panel()


@cl.on_settings_update
async def on_settings_update(values: dict[str, Any]) -> None:
    apply_language(RUNTIME)
    chat.update_settings(RUNTIME, values)


@cl.on_message
async def on_message(message: cl.Message) -> None:
    apply_language(RUNTIME)
    admin = current_user_is_admin()
    if panel.is_command(message.command) or message.content.strip().lower() in ("/diagnostics", "/diag"):
        await (panel.open_panel() if admin else chat.say(t("chat.admins_only"), ADMIN_ONLY))
        return
    await chat.handle_message(RUNTIME, message, admin)


@cl.on_stop
async def on_stop() -> None:
    logging.getLogger("chat").info("answer stopped by the user")
