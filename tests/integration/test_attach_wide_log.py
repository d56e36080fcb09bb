"""Attach mode tailing a log that Windows PowerShell wrote: `docker logs -f vllm > llm.log` there writes UTF-16-LE
behind a byte-order mark, and that file is what an admin hands the app as `CHAT_LOG_FILE`.

Through the running app (`chainlit run app.py` as a subprocess, attached to a small local HTTP server that
answers like vLLM): the engine's lines are appended to the file as PowerShell writes them, two bytes a character,
and the panel's API must show them as text (no NUL between letters, the Chinese path intact) and name the
failure they hold from the log, with the traceback's last line as its evidence. Read as UTF-8, the same bytes
are letters split by NULs that no rule matches: the failure would go unnamed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bench.apps import AppServer, start_app
from tests.local_http import AttachChecksHandler, serving, until

BOM_UTF16_LE = b"\xff\xfe"
FIRST_LINES = [  # what the file held before the app started: PowerShell's mark opens it
    "(APIServer pid=7) INFO 12-04 10:00:00 [api_server.py:1885] vLLM API server version 0.11.0",
    "(APIServer pid=7) INFO 12-04 10:00:01 [utils.py:233] non-default args: {'model': '/srv/模型/ernie-0.3b'}",
]
SERVING_FAILURE = [  # appended while the app watches: the engine dies of memory while serving
    "(APIServer pid=7) INFO 12-04 10:01:00 [launcher.py:29] Route: /v1/chat/completions, Methods: POST",
    "(EngineCore_DP0 pid=9) ERROR 12-04 10:01:05 [core.py:710] EngineCore encountered a fatal error.",
    "(EngineCore_DP0 pid=9) ERROR 12-04 10:01:05 [core.py:710] Traceback (most recent call last):",
    '(EngineCore_DP0 pid=9) ERROR 12-04 10:01:05 [core.py:710]   File "/usr/lib/python3/vllm/v1/engine/core.py", '
    "line 701, in run_engine_core",
    "(EngineCore_DP0 pid=9) ERROR 12-04 10:01:05 [core.py:710]     engine_core.run_busy_loop()",
    "(EngineCore_DP0 pid=9) ERROR 12-04 10:01:05 [core.py:710] torch.OutOfMemoryError: CUDA out of memory. "
    "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.06 GiB is free.",
]


def _powershell_lines(lines: list[str]) -> bytes:
    """Lines as PowerShell's `>` writes them: UTF-16-LE, CRLF endings."""
    return "".join(line + "\r\n" for line in lines).encode("utf-16-le")


def test_attached_app_reads_a_utf16_log_and_names_its_failure(tmp_path: Path) -> None:
    engine_log = tmp_path / "llm.log"
    engine_log.write_bytes(BOM_UTF16_LE + _powershell_lines(FIRST_LINES))
    with serving(AttachChecksHandler) as server_url:
        app = start_app(tmp_path / "run", CHAT_MODE="attach", CHAT_VLLM_URL=server_url + "/v1",
                        CHAT_API_KEY="wide-log-key", CHAT_LOG_FILE=str(engine_log))
        try:
            payload = asyncio.run(_exercise(app, engine_log))
        finally:
            app.stop()
    print(app.log_text()[-2000:])
    tail = [line["text"] for line in payload["log_tail"]]
    print("\n".join(tail))
    assert not any("\x00" in text for text in tail)
    assert any(text.endswith("1.06 GiB is free.") for text in tail)
    found = [f for f in payload["findings"] if f["kind"] == "out_of_memory" and not f["resolved"]]
    assert found, payload["findings"]
    assert found[0]["source"] == "log"
    assert any("torch.OutOfMemoryError: CUDA out of memory" in e["text"] for e in found[0]["evidence"])


async def _exercise(app: AppServer, engine_log: Path) -> dict[str, Any]:
    await app.wait_http(120)
    await app.wait_engine(("attached", "degraded"), timeout=60)
    with engine_log.open("ab") as handle:  # what PowerShell appends, one record at a time
        for line in SERVING_FAILURE:
            handle.write(_powershell_lines([line]))
            handle.flush()

    async def named() -> dict[str, Any] | None:
        payload = await app.diagnostics()
        kinds = {f["kind"] for f in payload["findings"] if not f["resolved"]}
        return payload if "out_of_memory" in kinds else None

    payload: dict[str, Any] = await until("the out_of_memory finding from the wide log", named)
    return payload
