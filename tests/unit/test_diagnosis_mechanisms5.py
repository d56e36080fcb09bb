"""The general mechanisms the fifth generalising pass added, each on the real lines it was written from.

Ray's own log format ("ERROR services.py:1207 -- ..."), a negative return code as the signal that killed a
child, and a server that moved up past a port another process holds (uvicorn's port against a listing of
listening sockets). Each has a negative: the healthy shape of the same lines raises nothing.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.events import _FATAL
from chainlit_app.diagnostics.lineformat import parse_line
from chainlit_app.diagnostics.ports import PortWatch

# langchain #9646 (Ray's dashboard died of SIGSEGV when tensor_parallel_size=2)
RAY_LINE = "2023-08-23 08:52:55,683\tERROR services.py:1207 -- Failed to start the dashboard, return code -11"
# the jishuzhan.net ms-swift post: asked for 8012, 8012 and 8013 held by older services, server on 8014
MOVED = [
    "Uvicorn running on http://0.0.0.0:8014",
    "python3.1 2779809 hc TCP *:8012 (LISTEN)",
    "python3.1 509851 hc TCP *:8013 (LISTEN)",
    "python3.1 528965 hc TCP *:8014 (LISTEN)",
]


def test_ray_line_format_gives_level_and_logger() -> None:
    parsed = parse_line(RAY_LINE)
    assert (parsed.level, parsed.logger) == ("ERROR", "services.py:1207")
    assert parsed.message.startswith("Failed to start the dashboard")


def test_negative_return_code_is_a_fatal_signal() -> None:
    assert _FATAL.search(RAY_LINE)
    assert _FATAL.search("subprocess exited with returncode=-6")
    assert not _FATAL.search("Failed to start the dashboard, return code 1")  # an exit, not a signal
    assert classify_lines([RAY_LINE]).kind != HEALTHY


def test_server_moved_past_a_taken_port_is_port_in_use() -> None:
    report = classify_lines(MOVED)
    assert report.kind == "port_in_use"
    assert report.findings[0].rule == "server_moved_past_taken_port"
    assert "8013" in report.findings[0].hint


def test_listing_formats_of_ss_and_netstat_are_read() -> None:
    for listing in (
        'LISTEN 0      2048         0.0.0.0:8013      0.0.0.0:*    users:(("python3",pid=509851,fd=3))',
        "tcp        0      0 0.0.0.0:8013            0.0.0.0:*               LISTEN      509851/python3",
    ):
        watch = PortWatch()
        for line in ("Uvicorn running on http://0.0.0.0:8014", listing):
            watch.observe(line, 1)
        assert watch.moved() is not None, listing


def test_own_socket_or_no_listing_raises_nothing() -> None:
    assert classify_lines(["Uvicorn running on http://0.0.0.0:8000"]).kind == HEALTHY
    # the server's own process listens on both ports (an API port and a metrics port): not a move
    own = ["Uvicorn running on http://0.0.0.0:8001", "python3 100 u TCP *:8000 (LISTEN)",
           "python3 100 u TCP *:8001 (LISTEN)"]
    assert classify_lines(own).kind == HEALTHY
    # another process listens, but not just below the server's port
    apart = ["Uvicorn running on http://0.0.0.0:8000", "postgres 77 pg TCP *:5432 (LISTEN)"]
    assert classify_lines(apart).kind == HEALTHY


# Langchain-Chatchat #2129: FastChat's vllm_worker endpoint fails while handling a request (no phase marker)
ENDPOINT_STACK = [
    "Traceback (most recent call last):",
    '  File "/env/lib/python3.10/site-packages/fastapi/routing.py", line 191, in run_endpoint_function',
    "    return await dependant.call(**values)",
    '  File "/env/lib/python3.10/site-packages/fastchat/serve/vllm_worker.py", line 206, in api_get_conv',
    "    return worker.get_conv_template()",
    "NameError: name 'worker' is not defined",
]


def test_stack_through_a_web_framework_endpoint_is_serving() -> None:
    assert classify_lines(ENDPOINT_STACK).kind == "engine_error"
    # the same error without the framework's frame shows no phase: read as start-up
    without = [ENDPOINT_STACK[0], *ENDPOINT_STACK[3:]]
    assert classify_lines(without).kind == "startup_failure"


# vllm-dgx-spark #3: curl refused while the start script counts the model load past 26 minutes
REFUSED = "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Couldn’t connect to server"


def test_refused_while_loading_for_minutes_is_the_slow_load() -> None:
    still = "[2025-12-02 16:53:46] ⏳ Still loading… (26m 2s) - this is normal for large models"
    report = classify_lines([REFUSED, still])
    assert report.kind == "slow_or_stalled"
    assert report.findings[0].rule == "model_load_elapsed_minutes"
    assert classify_lines([REFUSED]).kind == "connection"
    normal = "[2025-12-02 16:29:46] ⏳ Still loading… (2m 2s) - this is normal for large models"
    assert classify_lines([REFUSED, normal]).kind == "connection"  # a load of two minutes explains nothing
