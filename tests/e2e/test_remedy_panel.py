"""Issue 13's "Done when", in a real browser: the app started with a context the KV cache cannot hold (vLLM hits
it: no preflight), the admin opens the panel, presses "Apply fix" on the finding and sees the card become
verified and the override listed, with its cause and an Undo button."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import ADMIN_PASSWORD, login, run_app, save_screenshot
from tests.e2e.test_diagnostics_panel import open_panel

pytestmark = pytest.mark.e2e
TOO_LONG = 65536  # x 45 KiB per token (demo model, float32) > the 1 GiB CPU KV cache
FAULT = {"CHAT_MAX_MODEL_LEN": str(TOO_LONG), "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "CHAT_PREFLIGHT": "0",
         "CHAT_MAX_RESTARTS": "0"}


def test_apply_fix_in_the_panel_until_verified(demo_model: Path, tmp_path: Path, page: Page) -> None:
    with run_app(tmp_path, ("failed",), CHAT_MODEL="demo", **FAULT) as app:
        login(page, app.url, "admin", ADMIN_PASSWORD)
        open_panel(page)
        card = page.locator(".diag-finding[data-kind=out_of_memory]").first
        apply = card.locator("[data-testid=diag-remedy-apply][data-remedy=fit_max_model_len]")
        expect(apply).to_be_visible(timeout=30_000)
        expect(apply).to_have_accessible_name("Apply fix fit_max_model_len")
        proposal = card.locator("[data-testid=diag-remedy][data-remedy=fit_max_model_len]").inner_text()
        assert f"max_model_len {TOO_LONG} →" in proposal, proposal
        expect(page.locator("[data-testid=diag-no-overrides]")).to_be_visible()

        clicked = time.monotonic()
        apply.click()
        state = card.locator("[data-testid=diag-remedy-state]")
        expect(state).to_have_attribute("data-state", "running", timeout=5_000)
        running_text = state.inner_text()
        expect(state).to_have_attribute("data-state", "verified", timeout=300_000)
        seconds = time.monotonic() - clicked
        print(f"\nclick -> card verified: {seconds:.1f} s (running said: {running_text!r}; "
              f"verified says: {state.inner_text()!r})")
        assert "Fixed by fit_max_model_len" in state.inner_text()
        expect(page.locator("#diag-engine-state")).to_have_text("ready", timeout=10_000)
        expect(page.locator(".diag-finding[data-resolved=no]")).to_have_count(0)  # "stopped before ready" too

        override = page.locator("[data-testid=diag-override][data-remedy=fit_max_model_len]")
        expect(override).to_have_count(1)
        assert override.get_attribute("data-auto") == "no"
        text = override.inner_text()
        assert f"max_model_len: {TOO_LONG} →" in text and "by an admin" in text, text
        assert "out_of_memory" in text and "estimated maximum model length" in text, "the cause is not listed"
        expect(override.locator("[data-testid=diag-remedy-undo]")).to_have_accessible_name("Undo fit_max_model_len")
        expect(override.locator("[data-testid=diag-remedy-undo]")).to_be_enabled()
        state.scroll_into_view_if_needed()  # the screenshot shows the card's state; the overrides are below it
        save_screenshot(page, "remedy-applied.png")
