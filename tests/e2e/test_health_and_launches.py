"""Issue 13, items 4 and 5, against the running app and its own real vLLM; nothing is fed to the app.

Degraded: vLLM's `/health` asks only whether the API server considers its engine dead (AsyncLLM.check_health
reads an `errored` flag). SIGSTOP of the EngineCore process leaves the API server answering `/health` 200 while
no completion can be answered: a real hang, which the app's idle one-token probe must name `degraded`, then
clear after SIGCONT, and answer by a restart when it lasts. Crash records: SIGKILL of the server under the app;
the admin reads the launch, its signal and last lines through /api/diagnostics and the panel, and the launch's
key is in neither the record file nor the API. Three vLLM starts: the app's, the degraded restart, the relaunch.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import need_engine
from tests.e2e.conftest import ADMIN_PASSWORD, USER_PASSWORD, AppServer, login, run_app, warm_engine_facts
from tests.e2e.test_diagnostics_panel import _engine_key, open_panel

pytestmark = pytest.mark.e2e
PROBE_SECONDS = 3
PROBE_TIMEOUT = 5
RESTART_AFTER = 3


@pytest.fixture(scope="module")
def app(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    need_engine()
    data_dir = tmp_path_factory.mktemp("health-app")
    warm_engine_facts(data_dir)
    with run_app(data_dir, ("ready",), CHAT_MODEL="demo", CHAT_MAX_MODEL_LEN="2048",
                 CHAT_HEALTH_PROBE_SECONDS=str(PROBE_SECONDS), CHAT_HEALTH_PROBE_TIMEOUT=str(PROBE_TIMEOUT),
                 CHAT_DEGRADED_RESTART_AFTER=str(RESTART_AFTER)) as server:
        yield server


@contextmanager
def _admin(server: AppServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=15) as client:
        assert client.post("/login", data={"username": "admin", "password": ADMIN_PASSWORD}).status_code == 200
        yield client


def _wait(client: httpx.Client, what: str, check: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
    """Poll /api/diagnostics until `check(body)`; the failure names what was last seen."""
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = client.get("/api/diagnostics").json()
        if check(body):
            return body
        time.sleep(0.5)
    seen = {"engine": {k: body.get("engine", {}).get(k) for k in ("state", "launches", "error")},
            "probe": body.get("probe"), "findings": [(f["kind"], f["resolved"]) for f in body.get("findings", [])]}
    raise AssertionError(f"not seen within {timeout:.0f} s: {what}; last seen {seen}")


def _degraded(body: dict[str, Any], resolved: bool) -> dict[str, Any] | None:
    return next((f for f in body["findings"] if f["kind"] == "degraded" and f["resolved"] == resolved), None)


def _engine_core(server_pid: int) -> psutil.Process:
    """vLLM's engine core: the API server's child process that runs the model (its title says EngineCore)."""
    children = psutil.Process(server_pid).children(recursive=True)
    for child in children:
        with contextlib.suppress(psutil.Error):
            if "EngineCore" in " ".join(child.cmdline()) or "EngineCore" in child.name():
                return child
    raise AssertionError(f"no EngineCore among {[(c.pid, c.name()) for c in children]}")


def _probe_answered(body: dict[str, Any]) -> bool:
    last = body["probe"]["last"]
    return body["engine"]["state"] == "ready" and last is not None and last["ok"]


def test_a_stopped_engine_core_is_degraded_while_health_answers_and_clears_after(app: AppServer) -> None:
    with _admin(app) as admin:
        body = _wait(admin, "the probe after the start answered", _probe_answered, 120)
        launches_before = body["engine"]["launches"]
        core = _engine_core(int(body["engine"]["pid"]))
        started = time.monotonic()
        core.suspend()  # SIGSTOP: the process exists, holds its memory, answers nothing
        try:
            body = _wait(admin, "an open degraded finding",
                         lambda b: _degraded(b, resolved=False) is not None, 4 * (PROBE_SECONDS + PROBE_TIMEOUT) + 30)
            found_after = time.monotonic() - started
            health = httpx.get(f"http://127.0.0.1:{body['engine']['port']}/health", timeout=5)
            healthz = httpx.get(app.url + "/healthz", timeout=5).json()
        finally:
            core.resume()
        entry = _degraded(body, resolved=False)
        assert entry is not None
        print(f"\ndegraded named {found_after:.1f} s after SIGSTOP of EngineCore {core.pid}; evidence: "
              f"{entry['evidence'][0]['text'][:200]}")
        assert health.status_code == 200, "the fault must be the one /health does not see"
        assert body["engine"]["state"] == "degraded" and body["engine"]["healthy"] is False
        assert healthz["engine"] == "degraded"
        assert entry["source"] == "probe" and entry["count"] >= 1 and len(entry["evidence"]) == 1
        assert "/health OK for" in entry["evidence"][0]["text"] and "Timeout" in entry["evidence"][0]["text"]
        assert [f for f in body["findings"] if f["kind"] == "degraded"] == [entry], "one finding, updated"

        resumed = time.monotonic()
        body = _wait(admin, "the degraded finding resolved by a probe that answered",
                     lambda b: _degraded(b, resolved=False) is None and _probe_answered(b), 120)
        print(f"cleared {time.monotonic() - resumed:.1f} s after SIGCONT")
        cleared = _degraded(body, resolved=True)
        assert cleared is not None and cleared["resolved_reason"] == "a probe completion succeeded again"
        assert body["engine"]["launches"] == launches_before, "recovered without a restart"
        assert body["engine"]["healthy"] is True


def test_an_engine_core_that_stays_stopped_is_restarted(app: AppServer) -> None:
    with _admin(app) as admin:
        body = _wait(admin, "a ready engine", _probe_answered, 120)
        launches_before = body["engine"]["launches"]
        core = _engine_core(int(body["engine"]["pid"]))
        started = time.monotonic()
        core.suspend()
        try:
            body = _wait(admin, "a restarted engine whose probe answers",
                         lambda b: b["engine"]["launches"] > launches_before and _probe_answered(b)
                         and _degraded(b, resolved=False) is None, 600)
        finally:
            with contextlib.suppress(psutil.NoSuchProcess):
                core.resume()
        print(f"\nrestarted and verified {time.monotonic() - started:.1f} s after SIGSTOP "
              f"(restart after {RESTART_AFTER} failed probes)")
        assert body["probe"]["restarts_asked"] == 1
        assert not psutil.pid_exists(core.pid) or psutil.Process(core.pid).status() == psutil.STATUS_ZOMBIE
        stopped = next(launch for launch in body["launches"] if launch["launch"] == launches_before)
        assert stopped["exit"] == "stopped" and stopped["cause"].startswith("stopped by the app")


def test_a_killed_engine_leaves_a_record_without_the_key(app: AppServer, page: Page) -> None:
    with _admin(app) as admin:
        body = _wait(admin, "a ready engine", lambda b: b["engine"]["state"] == "ready", 300)
        pid = int(body["engine"]["pid"])
        key = _engine_key(pid)
        launch_number = body["engine"]["launches"]
        os.kill(pid, signal.SIGKILL)
        body = _wait(admin, "the killed launch listed with its signal",
                     lambda b: any(x["launch"] == launch_number and x["ended"] for x in b["launches"]), 60)
        summary = next(x for x in body["launches"] if x["launch"] == launch_number)
        assert summary["exit"] == "SIGKILL" and summary["exit_code"] == -9 and summary["pid"] == pid
        assert summary["cause"].startswith("killed while serving by SIGKILL")
        detail_response = admin.get(f"/api/diagnostics/launches/{summary['id']}")
        assert detail_response.status_code == 200
        detail = detail_response.json()
        print(f"\nrecord {summary['id']}: {summary['cause']}; {len(detail['last_lines'])} last lines, "
              f"findings {[f['kind'] for f in detail['findings']]}")
        assert "vllm.entrypoints.openai.api_server" in " ".join(detail["command"])
        assert detail["last_lines"] and any("Application startup complete" in line for line in detail["last_lines"])
        assert detail["settings"]["launch"]["served_model_name"] == body["engine"]["served_model_name"]
        assert "api_key" not in detail["settings"]["launch"] and "api_key" not in detail["settings"]["engine"]
        record_file = app.data_dir / "launches" / f"{summary['id']}.json"
        assert stat.S_IMODE(record_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(record_file.parent.stat().st_mode) == 0o700
        assert key not in record_file.read_text(encoding="utf-8"), "the key is in the record file"
        assert key not in json.dumps(detail) and key not in json.dumps(body), "the key is in the API"
        assert admin.get("/api/diagnostics/launches/not-a-record").status_code == 404
        auth_secret = (app.data_dir / "auth_secret").read_text().strip()
        assert auth_secret not in admin.get("/api/diagnostics/launches/..%2Fauth_secret").text  # Chainlit's page
    with httpx.Client(base_url=app.url, timeout=15) as alice:
        assert alice.get(f"/api/diagnostics/launches/{summary['id']}").status_code == 401
        alice.post("/login", data={"username": "alice", "password": USER_PASSWORD})
        assert alice.get(f"/api/diagnostics/launches/{summary['id']}").status_code == 403

    login(page, app.url, "admin", ADMIN_PASSWORD)
    panel = open_panel(page)
    expect(panel.launches(summary["id"])).to_have_attribute("data-exit", "SIGKILL", timeout=30_000)
    panel.open_launch(summary["id"])
    expect(panel.launch_command(summary["id"])).to_contain_text("api_server", timeout=15_000)
    expect(panel.launch_lines(summary["id"])).to_contain_text("Application startup complete")
    assert key not in page.content()
