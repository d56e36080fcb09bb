"""The live tail agrees with `classify` on a run that served (issue 11: `healthy` is a claim): torchao's note that it
skipped its C++ extensions names a version mismatch in the panel while the server starts, and is marked resolved
once the log shows the server serving, as `classify` drops it. The monitor follows a real log file through its own
tail (a Kaggle gpt-oss-120b run that served its 200s); a start that never serves keeps the note open."""

from __future__ import annotations

import asyncio
from pathlib import Path

from chainlit_app.diagnostics import classify_file, classify_lines
from chainlit_app.monitor import Monitor

SERVED = Path(__file__).resolve().parents[1] / "data" / "logs" / "dev" / "healthy" / \
    "round58h_aimo3_gptoss120b_kaggle_v0112_served_200s_safetensors_retry_errors.log"
NOTE_RULE = "cpp_extensions_need_newer_torch"


async def _tail(lines: list[str], tmp_path: Path) -> list[dict[str, object]]:
    log = tmp_path / "llm.log"
    log.write_text("")
    monitor = Monitor(lambda: log, lambda: None, probe_interval=0.1)
    monitor.start()
    try:
        with log.open("a") as out:  # written as vLLM writes it, while the tail follows
            for line in lines:
                out.write(line + "\n")
                out.flush()
        for _ in range(100):
            await asyncio.sleep(0.05)
            if len(monitor.ring) >= len(lines):
                break
        await asyncio.sleep(0.2)
        return [entry for entry in monitor.store.snapshot() if entry["rule"] == NOTE_RULE]
    finally:
        await monitor.stop()


async def test_the_note_is_resolved_once_the_server_serves(tmp_path: Path) -> None:
    lines = SERVED.read_text().splitlines()
    assert classify_file(SERVED).kind == "healthy"
    notes = await _tail(lines, tmp_path)
    assert notes, "the note was never named while the server started"
    assert all(entry["resolved"] for entry in notes), notes
    assert all(entry["resolved_reason"] for entry in notes)


async def test_a_start_that_never_serves_keeps_the_note(tmp_path: Path) -> None:
    lines = SERVED.read_text().splitlines()[:14]  # the note, the start's first lines, the note again
    notes = await _tail(lines, tmp_path)
    assert notes and not any(entry["resolved"] for entry in notes), notes


TORCHAO_FAILS = [  # the note's op then fails for want of its kernel (the session's review)
    "(EngineCore_DP0 pid=236) ERROR 03-02 07:20:00 [core.py:700] EngineCore encountered a fatal error.",
    "(EngineCore_DP0 pid=236) ERROR 03-02 07:20:00 [core.py:700] Traceback (most recent call last):",
    '(EngineCore_DP0 pid=236) ERROR 03-02 07:20:00 [core.py:700]   File "/usr/local/lib/python3.12/site-packages/'
    'torchao/ops.py", line 40, in quant_llm_linear',
    "(EngineCore_DP0 pid=236) ERROR 03-02 07:20:00 [core.py:700] NotImplementedError: Could not run "
    "'torchao::quant_llm_linear' with arguments from the 'CUDA' backend.",
]


async def test_a_withdrawn_note_opens_again_when_a_later_failure_names_torchao(tmp_path: Path) -> None:
    served = SERVED.read_text().splitlines()
    lines = served[:109] + TORCHAO_FAILS  # while serving, after its first 200s
    assert classify_lines(lines).kind == "version_mismatch"  # what `classify` says of the same lines
    notes = await _tail(lines, tmp_path)
    assert notes and not any(entry["resolved"] for entry in notes), notes


async def test_a_note_that_explains_a_failure_is_not_withdrawn_by_its_twin(tmp_path: Path) -> None:
    served = SERVED.read_text().splitlines()
    failure = ("(EngineCore_DP0 pid=236) ERROR 03-02 07:08:58 [utils.py:10] Failed to load torchao kernel library: "
               "libtorchao_ops.so: undefined symbol: _ZN3c10")
    lines = [served[0], failure, *served[1:]]  # the note, a failure naming torchao, the note again, then serving
    notes = await _tail(lines, tmp_path)
    assert notes and not any(entry["resolved"] for entry in notes), notes
