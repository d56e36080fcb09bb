"""How a pasted or collected log reaches the classifier (`pasted_text.py`), on the cases a review found: the text
an issue's HTML holds is kept, a stack printed on purpose is no failure, a traceback cut by interleaved output
yields to its exception line, an over-long line of a UTF-16 file keeps the numbering, standard input is read once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from chainlit_app.diagnostics import HEALTHY, classify_file, classify_lines

ROOT = Path(__file__).resolve().parents[2]
SERVING = ["INFO 12-03 10:00:00 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000",
           "INFO:     Application startup complete.",
           'INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK']


def test_the_error_an_issues_summary_holds_is_read() -> None:
    lines = ["<details>", "<summary>torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
             "</summary>", "", "```", "INFO 12-03 10:00:00 [gpu_model_runner.py:1] Loading model", "```", "</details>"]
    assert classify_lines(lines).kind == "out_of_memory"
    assert classify_lines(["<pre>Cannot POST /v1/chat/completions</pre>"]).kind != HEALTHY


def test_a_stack_printed_on_purpose_is_no_failure() -> None:
    """logging's `stack_info=True` and `traceback.print_stack()` print frames and no exception."""
    stack = ["WARNING 12-03 10:00:01 [scheduler.py:99] Slow step, stack follows",
             "Stack (most recent call last):",
             '  File "/usr/lib/python3.12/threading.py", line 1030, in _bootstrap',
             "    self._bootstrap_inner()",
             '  File "/x/site-packages/vllm/v1/core/sched/scheduler.py", line 99, in schedule',
             '    logger.warning("Slow step, stack follows", stack_info=True)']
    assert classify_lines([*SERVING, *stack, *SERVING[2:]]).kind == HEALTHY


def test_a_traceback_cut_by_interleaved_output_yields_to_its_exception_line() -> None:
    lines = [*SERVING, "Traceback (most recent call last):",
             '  File "/x/site-packages/vllm/v1/worker/gpu_model_runner.py", line 1, in execute_model',
             "    hidden = self.model(input_ids)",
             'INFO:     127.0.0.1:51240 - "GET /health HTTP/1.1" 200 OK',
             "RuntimeError: shapes cannot be multiplied (4x3 and 5x6)"]
    report = classify_lines(lines)  # no rule names it: the exception line, not the cut stack, is the evidence
    assert report.kind == "engine_error" and report.root is not None and report.root.line == len(lines)


def test_an_over_long_line_of_a_utf16_file_is_one_line(tmp_path: Path) -> None:
    text = "INFO x\n" + "y" * 70_000 + "\ntorch.OutOfMemoryError: CUDA out of memory.\n"
    for encoding, name in (("utf-8", "a.log"), ("utf-16", "b.log")):
        (tmp_path / name).write_bytes(text.encode(encoding))
    want, got = classify_file(tmp_path / "a.log"), classify_file(tmp_path / "b.log")
    assert want.root is not None and got.root is not None and want.root.line == got.root.line == 3


def test_a_body_of_several_choices_is_not_shown_at_the_healthy_one() -> None:
    lines = ["{", '  "choices": [', '    {"index": 0, "message": {', '      "role": "assistant",',
             '      "content": "Paris is the capital of France."', "    }, \"finish_reason\": \"stop\"},",
             '    {"index": 1, "message": {', '      "role": "assistant",', '      "content": ""',
             "    }, \"finish_reason\": \"stop\"}", "  ]", "}"]
    report = classify_lines(lines)
    if report.root is not None:  # whatever the verdict, it does not point at the right answer's line
        assert report.root.line != 5


def test_standard_input_is_read_once() -> None:
    done = subprocess.run([sys.executable, "-m", "chainlit_app.diagnostics", "classify", "-", "-"], input=b"x\n",
                          capture_output=True, timeout=120, cwd=ROOT, check=False)
    assert done.returncode == 2 and b"-" in done.stderr and not done.stdout


def test_a_utf32_mark_cut_by_a_pipes_first_read_is_still_utf32() -> None:
    """A pipe's first read may hold only FF FE, which is UTF-16's whole mark and half of UTF-32-LE's."""
    import os
    import threading
    import time

    from chainlit_app.diagnostics.pasted_text import iter_stream_lines

    data = "\ufeffINFO:     Started server process [4242]\nERROR:    [Errno 98] address already in use\n"
    encoded = data.encode("utf-32-le")
    read_end, write_end = os.pipe()

    def write() -> None:
        os.write(write_end, encoded[:2])
        time.sleep(0.3)
        os.write(write_end, encoded[2:])
        os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    with open(read_end, "rb") as fh:
        lines = [text for _, text, _ in iter_stream_lines(fh)]
    writer.join()
    assert lines == ["INFO:     Started server process [4242]\n", "ERROR:    [Errno 98] address already in use\n"]
