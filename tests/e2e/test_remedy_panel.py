"""Issue 13's "Done when", in a real browser: the app started with a context the KV cache cannot hold (vLLM hits
it: no preflight), the admin opens the panel, presses "Apply fix" on the finding and sees the card become
verified and the override listed, with its cause and an Undo button."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from chainlit_app.testing.hooks import ENGINE_STATE
from tests.e2e.conftest import ADMIN_PASSWORD, login, run_app, save_screenshot, warm_engine_facts
from tests.e2e.test_diagnostics_panel import open_panel

pytestmark = pytest.mark.e2e
TOO_LONG = 65536  # x 45 KiB per token (demo model, float32) > the 1 GiB CPU KV cache
FAULT = {"CHAT_MAX_MODEL_LEN": str(TOO_LONG), "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "CHAT_PREFLIGHT": "0",
         "CHAT_MAX_RESTARTS": "0"}


def test_apply_fix_in_the_panel_until_verified(demo_model: Path, tmp_path: Path, page: Page) -> None:
    with run_app(tmp_path, ("failed",), CHAT_MODEL="demo", **FAULT) as app:
        login(page, app.url, "admin", ADMIN_PASSWORD)
        panel = open_panel(page)
        card = panel.finding("out_of_memory", remedy="fit_max_model_len")
        apply = card.apply_button("fit_max_model_len")
        expect(apply).to_be_visible(timeout=30_000)
        expect(apply).to_have_accessible_name("Apply fix fit_max_model_len")
        proposal = card.remedy("fit_max_model_len").inner_text()
        assert f"max_model_len {TOO_LONG} →" in proposal, proposal
        expect(panel.no_overrides()).to_be_visible()

        clicked = time.monotonic()
        card.apply_fix("fit_max_model_len")
        state = card.remedy_state
        expect(state).to_have_attribute("data-state", "running", timeout=5_000)
        running_text = state.inner_text()
        expect(state).to_have_attribute("data-state", "verified", timeout=300_000)
        seconds = time.monotonic() - clicked
        print(f"\nclick -> card verified: {seconds:.1f} s (running said: {running_text!r}; "
              f"verified says: {state.inner_text()!r})")
        assert "Fixed by fit_max_model_len" in state.inner_text()
        expect(page.locator(ENGINE_STATE)).to_have_attribute("data-state", "ready", timeout=10_000)
        expect(panel.finding_cards()).to_have_count(0)  # open findings: "stopped before ready" too

        override = panel.overrides("fit_max_model_len")
        expect(override).to_have_count(1)
        assert override.get_attribute("data-auto") == "no"
        text = override.inner_text()
        assert f"max_model_len: {TOO_LONG} →" in text and "by an admin" in text, text
        assert "out_of_memory" in text and "estimated maximum model length" in text, "the cause is not listed"
        undo = panel.undo_button("fit_max_model_len")
        expect(undo).to_have_accessible_name("Undo fit_max_model_len")
        expect(undo).to_be_enabled()
        state.scroll_into_view_if_needed()  # the screenshot shows the card's state; the overrides are below it
        save_screenshot(page, "remedy-applied.png")


def custom_code_model(demo_model: Path, folder: Path) -> Path:
    """The demo model's files under an architecture that only the model's own code would define (config.json
    auto_map, as remote-code models do): the doctor refuses it without --trust-remote-code. The code itself is
    not there, so trusting it cannot help either."""
    folder.mkdir()
    for item in demo_model.iterdir():
        if item.name != "config.json":
            (folder / item.name).symlink_to(item)
    config = json.loads((demo_model / "config.json").read_text())
    config["architectures"] = ["DemoCustomForCausalLM"]
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_demo_custom.DemoCustomForCausalLM"}
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_unsafe_fix_states_its_risk_first_and_a_fix_that_fails_leaves_the_finding_open(
        demo_model: Path, tmp_path: Path, page: Page) -> None:
    model = custom_code_model(demo_model, tmp_path / "custom-model")
    data = tmp_path / "data"
    warm_engine_facts(data)  # the doctor knows which architectures this vLLM implements
    with run_app(data, ("failed",), CHAT_MODEL=str(model), CHAT_MAX_RESTARTS="0") as app:
        # Over HTTP, without the confirmation: refused, with the risk, and nothing changed.
        with httpx.Client(base_url=app.url, timeout=30) as http:
            assert http.post("/login", data={"username": "admin", "password": ADMIN_PASSWORD}).status_code == 200
            refused = http.post("/api/remedies/apply", json={"kind": "startup_failure", "remedy": "trust_remote_code"})
        assert refused.status_code == 400, refused.text
        assert refused.json()["needs_confirmation"] and "Python code" in refused.json()["risk"]
        assert not (data / "overrides.json").exists()

        login(page, app.url, "admin", ADMIN_PASSWORD)
        panel = open_panel(page)
        card = panel.finding("startup_failure", remedy="trust_remote_code")  # the auto_map card offers it
        apply = card.apply_button("trust_remote_code")
        expect(apply).to_be_visible(timeout=30_000)
        assert "auto_map" in card.root.inner_text()
        assert card.remedy().first.get_attribute("data-safe") == "no"
        card.apply_fix("trust_remote_code")
        dialog = card.confirm_dialog
        expect(dialog).to_be_visible()
        assert dialog.get_attribute("role") == "alertdialog"
        assert "Python code from the model's folder" in card.risk.inner_text()
        card.confirm(apply=False)
        expect(dialog).to_have_count(0)
        expect(card.remedy_state).to_have_count(0)
        assert not (data / "overrides.json").exists(), "Cancel applied the unsafe fix"

        card.apply_fix("trust_remote_code")
        clicked = time.monotonic()
        card.confirm(apply=True)
        state = card.remedy_state
        expect(state).to_have_attribute("data-state", "failed", timeout=300_000)
        print(f"\nconfirmed trust_remote_code -> card failed: {time.monotonic() - clicked:.1f} s; "
              f"it says: {state.inner_text()[:300]!r}")
        assert "Not fixed by trust_remote_code" in state.inner_text()
        assert card.root.get_attribute("data-resolved") == "no", "a fix that did not help closed the finding"
        override = panel.overrides("trust_remote_code")
        expect(override).to_have_count(1)  # kept, and listed, so the admin can undo it
        save_screenshot(page, "remedy-not-fixed.png")
