"""The README's list of test ids (a supported interface) and the code that draws them stay in step."""

from __future__ import annotations

import re
import subprocess
import sys

from chainlit_app.notices import CHAT_TEST_IDS
from chainlit_app.settings import PROJECT_ROOT
from chainlit_app.testing import hooks

README = PROJECT_ROOT / "README.md"
PANEL = PROJECT_ROOT / "public" / "elements" / "Diagnostics.jsx"
NOTICE = PROJECT_ROOT / "public" / "elements" / "ChatNotice.jsx"
INPUT_GUARD = PROJECT_ROOT / "public" / "input_guard.js"  # Chainlit's custom_js: the composer's size alert


def readme_ids() -> set[str]:
    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- test-ids: start -->", 1)[1].split("<!-- test-ids: end -->", 1)[0]
    ids: set[str] = set()
    for row in table.splitlines():
        if row.startswith("| `"):
            first_cell = row.split("|")[1]
            ids.update(re.findall(r"`((?:chat|diag)-[a-z-]+)`", first_cell))
    return ids


def guard_ids() -> set[str]:
    """The ids input_guard.js sets on the elements it draws (setAttribute("data-testid", "...") in plain JS)."""
    return set(re.findall(r'setAttribute\("data-testid", "([a-z-]+)"\)', INPUT_GUARD.read_text(encoding="utf-8")))


def drawn_ids() -> set[str]:
    jsx = PANEL.read_text(encoding="utf-8") + NOTICE.read_text(encoding="utf-8")
    return set(re.findall(r'data-testid="([a-z-]+)"', jsx)) | set(CHAT_TEST_IDS) | guard_ids()


def test_every_drawn_id_is_listed_in_the_readme() -> None:
    missing = drawn_ids() - readme_ids()
    assert not missing, f"drawn but not in the README's list: {sorted(missing)}"


def test_every_listed_id_is_drawn() -> None:
    extra = readme_ids() - drawn_ids()
    assert not extra, f"in the README's list but drawn nowhere: {sorted(extra)}"


def test_ids_are_prefixed_by_where_they_are() -> None:
    panel = set(re.findall(r'data-testid="([a-z-]+)"', PANEL.read_text(encoding="utf-8")))
    assert panel and all(i.startswith("diag-") for i in panel), panel
    assert all(i.startswith("chat-") for i in CHAT_TEST_IDS)
    guard = guard_ids()
    assert guard == {"chat-input-too-large"}, guard


def test_the_page_objects_use_only_listed_ids() -> None:
    used = set()
    for value in vars(hooks).values():
        if isinstance(value, str):
            used.update(re.findall(r"data-testid[=^]*'?\"?((?:chat|diag)-[a-z-]+)", value))
    assert used and used <= readme_ids(), sorted(used - readme_ids())


def test_the_hooked_attributes_are_drawn() -> None:
    """The attributes scripts filter on (README) are on the panel's elements."""
    jsx = PANEL.read_text(encoding="utf-8")
    for attribute in ("data-state={engine.state}", "data-kind={f.kind}", "data-severity={f.severity}",
                      "data-level={l.level}", 'data-resolved={f.resolved ? "yes" : "no"}'):
        assert attribute in jsx, attribute


def test_importing_the_app_needs_no_playwright() -> None:
    """Playwright is a test/smoke extra: the app imports without it, and the smoke command says what is
    missing (exit 2) instead of a traceback."""
    code = ("import sys; sys.modules['playwright'] = None; import chainlit_app, chainlit_app.chat, "
            "chainlit_app.panel, chainlit_app.notices, chainlit_app.smoke; print('ok')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT,
                            check=False)
    assert result.stdout.strip() == "ok", result.stderr
    smoke = ("import runpy, sys; sys.modules['playwright'] = None; sys.argv = ['smoke', '--password', 'x']; "
             "runpy.run_module('chainlit_app.smoke', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", smoke], capture_output=True, text=True, cwd=PROJECT_ROOT,
                            check=False)
    assert result.returncode == 2 and "Playwright is missing" in result.stderr, (result.returncode, result.stderr)
