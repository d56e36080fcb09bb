"""The app in Simplified Chinese for a Chinese browser (Chromium with locale zh-CN), English for en-US.

One app on the demo model, watched from its start: the welcome and the start-up state in Chinese, a streamed
answer, then a real fault (a request for a model vLLM does not serve, which vLLM logs as an ERROR) named in
Chinese by /api/diagnostics?lang=zh-CN and on the panel's card, whose texts come from that API; the log
line itself stays as vLLM wrote it. The README.zh-CN screenshots are taken here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from chainlit_app.testing import ChatPage, DiagnosticsPanel
from tests.e2e.conftest import (
    ADMIN_PASSWORD,
    AppServer,
    ask,
    run_app,
    run_in_thread,
    save_screenshot,
    warm_engine_facts,
)

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u4e00-\u9fff]")
MISSING_MODEL = "no-such-model-zh"


@pytest.fixture(scope="module")
def starting_app(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The app as soon as its web server answers, while vLLM is still starting (CHAT_LANGUAGE=auto)."""
    data_dir = tmp_path_factory.mktemp("zh-app")
    warm_engine_facts(data_dir)
    with run_app(data_dir, ("preparing", "starting", "ready"), CHAT_MODEL="demo", CHAT_MAX_MODEL_LEN="2048",
                 CHAT_TEMPERATURE="0") as server:
        yield server


def _context(browser: Browser, locale: str) -> BrowserContext:
    return browser.new_context(viewport={"width": 1400, "height": 900}, locale=locale)


def _login(page: Page, url: str, welcome: str) -> None:
    page.goto(url + "/login")
    page.fill("#email", "admin")
    page.fill("#password", ADMIN_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector(f"text={welcome}", timeout=60_000)


@contextmanager
def _admin(server: AppServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert client.post("/login", data={"username": "admin", "password": ADMIN_PASSWORD}).status_code == 200
        yield client


def _engine_key(pid: int) -> str:
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return next(item.split(b"=", 1)[1].decode() for item in environ if item.startswith(b"VLLM_API_KEY="))


def _make_model_not_found(server: AppServer) -> None:
    """Ask the app's vLLM for a model it does not serve: a real 404 that vLLM logs as an ERROR."""
    with _admin(server) as client:
        engine = client.get("/api/diagnostics").json()["engine"]
    vllm = openai.OpenAI(base_url=f"http://127.0.0.1:{engine['port']}/v1", api_key=_engine_key(int(engine["pid"])))
    with pytest.raises(openai.NotFoundError):
        vllm.chat.completions.create(model=MISSING_MODEL, messages=[{"role": "user", "content": "hi"}])


def _wait_for_fault(client: httpx.Client, timeout: float = 30.0) -> None:
    """Until the app's log tail has named the 404 (the panel polls the same API)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(f["kind"] == "model_not_found" for f in client.get("/api/diagnostics").json()["findings"]):
            return
        time.sleep(0.5)
    raise AssertionError("no model_not_found finding in /api/diagnostics")


def _finding(body: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in body["findings"] if f["kind"] == "model_not_found" and any(
        MISSING_MODEL in e["text"] for e in f["evidence"]))


def test_chinese_browser_sees_chinese_from_start_to_a_named_fault(starting_app: AppServer, browser: Browser) -> None:
    context = _context(browser, "zh-CN")
    page = context.new_page()
    try:
        _login(page, starting_app.url, "欢迎使用")
        welcome = page.get_by_text("欢迎使用").first.inner_text()
        assert "模型服务正在启动" in welcome or "正在确定要加载的模型" in welcome or "已就绪" in welcome, welcome
        if "已就绪" not in welcome:
            save_screenshot(page, "zh-CN-starting.png")
        expect(page.locator("[data-testid=chat-open-diagnostics]").first).to_contain_text("诊断")

        ask(page, "What is the capital of France?")
        answer = page.locator(".ai-message .message-content", has_text="Paris")
        answer.first.wait_for(timeout=600_000)  # a question asked during start-up is answered once ready
        # Chainlit disables the welcome's buttons while an answer streams: wait until it has ended
        ChatPage(page, starting_app.url).wait_answer(timeout=600)
        expect(page.get_by_text("服务就绪后会马上回答你的问题")).to_have_count(0)  # the waiting note is gone
        save_screenshot(page, "zh-CN-chat.png")

        _make_model_not_found(starting_app)
        with _admin(starting_app) as client:
            _wait_for_fault(client)
            chinese = client.get("/api/diagnostics", params={"lang": "zh-CN"}).json()
            english = client.get("/api/diagnostics", params={"lang": "en"}).json()
            by_browser = client.get("/api/diagnostics", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).json()
        zh, en = _finding(chinese), _finding(english)
        assert chinese["language"] == "zh-CN" and english["language"] == "en" and by_browser["language"] == "zh-CN"
        assert (zh["id"], zh["kind"], zh["rule"], zh["basis"], zh["source"]) == (
            en["id"], en["kind"], en["rule"], en["basis"], en["source"])
        assert zh["title"] == "找不到模型：模型名称不存在（404）或路径不存在" \
            and en["title"] == "Model not found: name not served (404) or path missing"
        assert CJK.search(zh["hint"]) and "--served-model-name" in zh["hint"]
        assert all(CJK.search(step) for step in zh["fix"]) and not CJK.search(" ".join(en["fix"]))
        assert [e["text"] for e in zh["evidence"]] == [e["text"] for e in en["evidence"]]  # log lines as written

        DiagnosticsPanel(page).open()
        card = page.locator(".diag-finding[data-kind=model_not_found]", has_text=MISSING_MODEL).first
        card.wait_for(timeout=15_000)
        expect(card).to_contain_text("找不到模型：模型名称不存在（404）或路径不存在")
        expect(card).to_contain_text(zh["fix"][0])
        expect(card).to_contain_text("does not exist")  # vLLM's own line, untranslated
        expect(card).to_contain_text("判定依据：")
        _panel_labels_are(page, CHINESE_LABELS)
        expect(page.locator("#side-view-title")).to_have_text("诊断")  # not the element's name, Diagnostics
        assert chinese["labels"]["apply_fix"] == "应用修复" and english["labels"]["apply_fix"] == "Apply fix"
        assert set(chinese["labels"]) == set(english["labels"])
        save_screenshot(page, "zh-CN-diagnostics.png")
    finally:
        context.close()


def test_english_browser_still_sees_english(starting_app: AppServer, browser: Browser) -> None:
    context = _context(browser, "en-US")
    page = context.new_page()
    try:
        _login(page, starting_app.url, "Welcome!")
        starting_app_ready(starting_app)
        page.reload()
        page.wait_for_selector("text=is ready", timeout=60_000)
        assert not CJK.search(page.get_by_text("Welcome!").first.inner_text())
        page.locator("button:not([data-sidebar])", has_text="Diagnostics").first.click()
        page.wait_for_selector("#diagnostics-panel", timeout=30_000)
        card = page.locator(".diag-finding[data-kind=model_not_found]").first
        card.wait_for(timeout=15_000)
        expect(card).to_contain_text("Model not found: name not served (404) or path missing")
        assert not CJK.search(card.inner_text())
        _panel_labels_are(page, ENGLISH_LABELS)
        expect(page.locator("#side-view-title")).to_have_text("Diagnostics")
        assert not CJK.search(page.locator("#diagnostics-panel").inner_text())
    finally:
        context.close()


# What the reader sees of the panel's own words: the section titles, the log's Pause button, the no-overrides line.
CHINESE_LABELS = {"#diag-engine": "引擎", "#diag-findings": "诊断结果", "#diag-metrics": "指标", "#diag-log": "日志",
                  "[data-testid=diag-overrides]": "覆盖项", "#diag-follow": "暂停",
                  "[data-testid=diag-no-overrides]": "没有覆盖项"}
ENGLISH_LABELS = {"#diag-engine": "Engine", "#diag-findings": "Findings", "#diag-metrics": "Metrics",
                  "#diag-log": "Log", "[data-testid=diag-overrides]": "Overrides", "#diag-follow": "Pause",
                  "[data-testid=diag-no-overrides]": "No overrides"}


def _panel_labels_are(page: Page, labels: dict[str, str]) -> None:
    for selector, label in labels.items():
        expect(page.locator(selector).first).to_contain_text(label)
    state = page.locator("#diag-engine-state").inner_text()
    assert bool(CJK.search(state)) == (labels is CHINESE_LABELS), state


TOO_LONG = 65536  # x 45 KiB per token (demo model, float32) > the 1 GiB CPU KV cache: vLLM fails, a remedy exists
FAULT = {"CHAT_MAX_MODEL_LEN": str(TOO_LONG), "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "CHAT_PREFLIGHT": "0",
         "CHAT_MAX_RESTARTS": "0"}


def test_chinese_apply_fix_button(demo_model: Path, tmp_path: Path, browser: Browser) -> None:
    """A finding with a remedy: the card's button reads Chinese and keeps its test id and data-remedy."""
    with run_app(tmp_path, ("failed",), CHAT_MODEL="demo", **FAULT) as app:
        context = _context(browser, "zh-CN")
        page = context.new_page()
        try:
            _login(page, app.url, "欢迎使用")
            DiagnosticsPanel(page).open()
            card = page.locator(".diag-finding[data-kind=out_of_memory]").first
            apply = card.locator("[data-testid=diag-remedy-apply][data-remedy=fit_max_model_len]")
            expect(apply).to_be_visible(timeout=30_000)
            expect(apply).to_have_text("应用修复")
            expect(apply).to_have_accessible_name("应用修复 fit_max_model_len")
            proposal = card.locator("[data-testid=diag-remedy][data-remedy=fit_max_model_len]").inner_text()
            assert proposal.startswith("修复：") and f"max_model_len {TOO_LONG} →" in proposal, proposal
            expect(page.locator("#diag-engine-state")).to_have_text("启动失败")
            expect(page.locator("[data-testid=diag-launches]")).to_contain_text("启动记录")
            print(f"\nthe card in Chinese: {card.inner_text()!r}")
            # The thread the button began is listed by the button's label, not the action's id.
            expect(page.locator("#thread-history")).to_contain_text("诊断", timeout=15_000)
            expect(page.locator("#thread-history")).not_to_contain_text("open_diagnostics")
            apply.scroll_into_view_if_needed()
            save_screenshot(page, "zh-CN-remedy.png")
        finally:
            context.close()


def starting_app_ready(server: AppServer) -> None:
    """The first test made the model_not_found finding; when this one runs alone, make it here."""
    run_in_thread(server.wait_engine(("ready",), timeout=600, poll=1.0))
    with _admin(server) as client:
        if not any(f["kind"] == "model_not_found" for f in client.get("/api/diagnostics").json()["findings"]):
            _make_model_not_found(server)
            _wait_for_fault(client)
