"""The app killed with SIGKILL (no shutdown hook runs) must not leave a vLLM behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from chainlit_app.settings import PROJECT_ROOT
from tests.conftest import need_engine

pytestmark = pytest.mark.integration

OWNER = """
import asyncio, json, sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.conftest import make_supervisor

async def main():
    sup = make_supervisor(Path({model!r}), Path({logs!r}), served="tiny", max_model_len=512)
    await sup.start()
    print(json.dumps([p.pid for p in sup.process.group_members()]), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def _alive(pids: list[int]) -> list[int]:
    return [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


def test_sigkilled_owner_takes_vllm_with_it(tiny_ernie: Path, tmp_path: Path) -> None:
    need_engine()
    script = OWNER.format(root=str(PROJECT_ROOT), model=str(tiny_ernie), logs=str(tmp_path))
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    try:
        assert owner.stdout is not None
        line = owner.stdout.readline()
        pids = json.loads(line)
        assert pids and _alive(pids)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=10)
        deadline = time.monotonic() + 20
        while _alive(pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(pids), f"vLLM processes outlived their owner: {_alive(pids)}"
    finally:
        if owner.poll() is None:
            owner.kill()
