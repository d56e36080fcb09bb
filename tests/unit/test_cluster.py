"""The cluster's refusals and the haproxy configuration it writes (checked by haproxy itself when installed).

Starting, stickiness through a real browser and stopping are tested in tests/e2e/test_cluster_browser.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.sections.gpu_rate import processes_of
from chainlit_app.cluster import SHARED_FINDINGS, STICKY_COOKIE, Cluster, Layout, haproxy_config, problems
from chainlit_app.settings import PROJECT_ROOT, Settings
from tests.conftest import need_haproxy

GOOD = {"CHAT_MODE": "attach", "CHAT_VLLM_URL": "http://127.0.0.1:9/v1", "DATABASE_URL": "postgresql://chat@db/chat"}
LAYOUT = Layout("127.0.0.1", 8000, 3, 8001)


def test_a_complete_attach_setup_has_no_problems() -> None:
    assert problems(GOOD, "/usr/sbin/haproxy", LAYOUT) == []
    assert problems({**GOOD, "DATABASE_URL": "postgres://chat@db/chat"}, "/usr/sbin/haproxy", LAYOUT) == []


@pytest.mark.parametrize(("environ", "haproxy", "layout", "says"), [
    (GOOD, None, LAYOUT, "haproxy is not installed"),
    ({**GOOD, "DATABASE_URL": ""}, "haproxy", LAYOUT, "DATABASE_URL must point at PostgreSQL"),
    ({**GOOD, "DATABASE_URL": "sqlite+aiosqlite:///chat.db"}, "haproxy", LAYOUT, "it is 'sqlite+aiosqlite:...'"),
    ({k: v for k, v in GOOD.items() if k != "CHAT_MODE"}, "haproxy", LAYOUT, "CHAT_MODE must be attach"),
    ({**GOOD, "CHAT_MODE": "spawn"}, "haproxy", LAYOUT, "spawn mode runs as one process"),
    (GOOD, "haproxy", Layout("127.0.0.1", 8000, 0, 8001), "--processes must be between 1 and 64"),
    (GOOD, "haproxy", Layout("127.0.0.1", 8002, 3, 8001), "among the processes' ports"),
    (GOOD, "haproxy", Layout("127.0.0.1", 8000, 3, 65534), "ports out of range"),
])
def test_each_problem_is_named_with_its_fix(environ: dict[str, str], haproxy: str | None, layout: Layout,
                                            says: str) -> None:
    found = problems(environ, haproxy, layout)
    assert len(found) == 1 and says in found[0], found


def test_the_database_password_is_not_repeated_in_the_refusal() -> None:
    found = problems({**GOOD, "DATABASE_URL": "mysql://chat:s3cret@db/chat"}, "haproxy", LAYOUT)
    assert "s3cret" not in " ".join(found) and "'mysql:...'" in found[0]


def test_the_config_keeps_a_browser_on_one_process_and_passes_websockets() -> None:
    text = haproxy_config(LAYOUT)
    assert f"cookie {STICKY_COOKIE} insert indirect nocache httponly" in text
    assert "bind 127.0.0.1:8000" in text and "timeout tunnel 1h" in text and "option forwardfor" in text
    servers = [line.split() for line in text.splitlines() if line.strip().startswith("server ")]
    assert [(s[1], s[2], s[4]) for s in servers] == [("app1", "127.0.0.1:8001", "app1"),
                                                     ("app2", "127.0.0.1:8002", "app2"),
                                                     ("app3", "127.0.0.1:8003", "app3")]


def test_haproxy_accepts_the_config(tmp_path: Path) -> None:
    haproxy = need_haproxy()
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_config(LAYOUT))
    done = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _cluster(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "chainlit_app.cluster", *args], capture_output=True, text=True,
                          env=environ, cwd=PROJECT_ROOT, timeout=60, check=False)


def test_the_command_refuses_without_haproxy_and_postgres_and_starts_nothing(tmp_path: Path) -> None:
    """A PATH without haproxy and a SQLite URL: exit 2, both reasons on stderr, no process left behind."""
    empty = tmp_path / "bin"
    empty.mkdir()
    environ = {**{k: v for k, v in os.environ.items() if not k.startswith("CHAT_")}, "PATH": str(empty),
               "PYTHONPATH": str(PROJECT_ROOT), "CHAT_MODE": "attach", "DATABASE_URL": "sqlite:///x.db"}
    done = _cluster(environ, "--processes", "2", "--port", "18000")
    assert done.returncode == 2
    assert "haproxy is not installed" in done.stderr and "DATABASE_URL must point at PostgreSQL" in done.stderr
    assert "Chat console" not in done.stdout


def test_print_config_shows_what_would_run() -> None:
    done = _cluster({**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}, "--print-config", "--processes", "2",
                    "--port", "9000")
    assert done.returncode == 0
    assert "server app2 127.0.0.1:9002 cookie app2" in done.stdout


def test_bench_kinds_name_their_process_count() -> None:
    assert [processes_of(k) for k in ("app-1p", "app-3p", "app", "seed", "app-xp", "before-1p", "before")] == [
        1, 3, 0, 0, 0, 1, 0]


def test_the_apps_share_their_findings_unless_the_operator_said_no(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: the cluster turns CHAT_SHARED_FINDINGS on for its apps (their settings read it); an
    explicit false stays."""
    layout = Layout("127.0.0.1", 18000, 2, 18001)
    for given, wanted in (({}, True), ({SHARED_FINDINGS: "false"}, False)):
        cluster = Cluster(layout, "haproxy", tmp_path / "haproxy.cfg", {"DATABASE_URL": "postgresql://h/db", **given})
        monkeypatch.setenv(SHARED_FINDINGS, cluster.environ[SHARED_FINDINGS])
        assert Settings().storage.shared_findings is wanted
    monkeypatch.delenv(SHARED_FINDINGS)
    assert Settings().storage.shared_findings is False, "a single app keeps its own findings"
