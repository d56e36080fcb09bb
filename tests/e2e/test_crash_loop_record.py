"""A crash loop stops with its record shown (issue 13, item 5): the app launches vLLM with a flag vLLM refuses
(the preflight off, so the fault reaches vLLM itself), every start exits, the supervisor gives up; the admin's
panel shows the given-up launch opened, with vLLM's own last lines, not only the state `failed`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import need_engine
from tests.e2e.conftest import ADMIN_PASSWORD, AppServer, login, run_app, save_screenshot
from tests.e2e.test_diagnostics_panel import open_panel

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def looping_app(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    need_engine()
    with run_app(tmp_path_factory.mktemp("loop-app"), ("failed",), CHAT_MODEL="demo", CHAT_PREFLIGHT="false",
                 CHAT_EXTRA_ARGS="--no-such-flag-for-vllm", CHAT_MAX_RESTARTS="1") as server:
        yield server


def test_the_given_up_launch_is_listed_and_opened_with_its_last_lines(looping_app: AppServer, page: Page) -> None:
    with httpx.Client(base_url=looping_app.url, timeout=15) as admin:
        admin.post("/login", data={"username": "admin", "password": ADMIN_PASSWORD})
        body = admin.get("/api/diagnostics").json()
        launches = body["launches"]
        assert body["engine"]["state"] == "failed"
        assert [x["launch"] for x in launches] == [2, 1], "one start and one retry, newest first"
        assert launches[0]["gave_up"] and not launches[1]["gave_up"]
        assert all(x["exit"] == "code 2" for x in launches), launches  # argparse's exit status
        detail = admin.get(f"/api/diagnostics/launches/{launches[0]['id']}").json()
    print(f"\ncrash loop: {launches[0]['cause']}; last line: {detail['last_lines'][-1][:160]}")
    assert launches[0]["cause"] == "exited before it was ready with code 2; the supervisor gave up"
    assert any("unrecognized arguments: --no-such-flag-for-vllm" in line for line in detail["last_lines"])
    assert "--no-such-flag-for-vllm" in detail["command"]

    login(page, looping_app.url, "admin", ADMIN_PASSWORD)
    panel = open_panel(page)
    expect(panel.crash_loop()).to_contain_text("gave up", timeout=30_000)
    newest = panel.launches(launches[0]["id"])
    expect(newest).to_have_attribute("data-gave-up", "yes")
    expect(panel.launch_lines(launches[0]["id"])).to_contain_text("unrecognized arguments", timeout=15_000)
    save_screenshot(page, "diagnostics-crash-loop.png")
