"""The round-65 pass (issue 11: holdout round 65's three misses, moved to dev), on the real lines they were written
from: a socket connect that timed out (macOS's `[Errno 60] Operation timed out`, under urllib3's ConnectTimeoutError)
is a connection never made, not a slow server; a launcher's `[GPU 0] ` tag before each record is taken off as a
collector's prefix; a traceback vLLM logs at WARNING was caught and survived; and an optional package's notice that
says how to install it is no failure sentence. A read that timed out, an ERROR-level traceback and a missing file
still read as they did.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

CONNECT = [  # tzuhsiang's langflow notebook: requests to a vLLM server on another host (ANSI colours as stored)
    "\x1b[0;31mTimeoutError\x1b[0m                              Traceback (most recent call last)",
    "\x1b[0;32m---> 73\x1b[0m sock.connect(sa)",
    "\x1b[0;31mTimeoutError\x1b[0m: [Errno 60] Operation timed out",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "\x1b[0;31mConnectTimeoutError\x1b[0m: (<urllib3.connection.HTTPConnection object at 0x112f82e90>, 'Connection to "
    "10.7.106.41 timed out. (connect timeout=None)')",
]


def test_a_connect_that_timed_out_is_a_connection_failure() -> None:
    report = classify_lines(CONNECT)
    assert report.kind == "connection"
    assert report.findings[0].line == 3


def test_a_read_that_timed_out_is_still_slow() -> None:
    assert classify_lines(["openai.APITimeoutError: Request timed out."]).kind == "slow_or_stalled"
    assert classify_lines(["requests.exceptions.ReadTimeout: HTTPConnectionPool(host='localhost', port=8000): Read "
                           "timed out. (read timeout=60)"]).kind == "slow_or_stalled"


TAGGED = [  # quyetttcoder's T4 notebook: a launcher's tag before every record of vLLM 0.24.0
    "[GPU 0] (EngineCore pid=267) INFO 08-08 02:37:38 [parallel_state.py:1588] world_size=1 rank=0 local_rank=0",
    "[GPU 0] [W808 02:37:38.862333900 socket.cpp:207] [c10d] The hostname of the client socket cannot be retrieved. "
    "err=-3",
    "[GPU 0] (EngineCore pid=267) WARNING 08-08 02:39:03 [import_utils.py:408] Module vllm.third_party.deep_gemm was "
    "found but failed to import",
    "[GPU 0] (EngineCore pid=267) WARNING 08-08 02:39:03 [import_utils.py:408] Traceback (most recent call last):",
    '[GPU 0] (EngineCore pid=267) WARNING 08-08 02:39:03 [import_utils.py:408]   File "/usr/local/lib/python3.12/'
    'dist-packages/vllm/third_party/deep_gemm/__init__.py", line 16, in <module>',
    "[GPU 0] (EngineCore pid=267) WARNING 08-08 02:39:03 [import_utils.py:408]     from . import _C",
    "[GPU 0] (EngineCore pid=267) WARNING 08-08 02:39:03 [import_utils.py:408] ImportError: libnvrtc.so.13: cannot "
    "open shared object file: No such file or directory",
    "[GPU 0] (EngineCore pid=267) INFO 08-08 02:39:23 [model_runner.py:726] Graph capturing finished in 20 secs",
    "[GPU 0] (APIServer pid=205) INFO:     Application startup complete.",
]


def test_a_launchers_tag_and_a_traceback_logged_as_a_warning_are_no_failure() -> None:
    assert classify_lines(TAGGED).kind == "healthy"


def test_the_same_traceback_logged_at_error_still_fails() -> None:
    at_error = [line.replace(" WARNING ", " ERROR ") for line in TAGGED[3:7]]
    assert classify_lines(at_error).kind != "healthy"
    bare = [line.split("[import_utils.py:408] ", 1)[1] for line in TAGGED[3:7]]
    assert classify_lines(bare).kind != "healthy"


OPTIONAL = [  # SAMeh-ZAGhloul's Colab notebook: vLLM 0.2's Mixtral module imported, OPT-125m served
    "INFO 07-20 10:41:38 llm_engine.py:73] Initializing an LLM engine with config: model='facebook/opt-125m'",
    "MegaBlocks not found. Please install it by `pip install megablocks`. Note that MegaBlocks depends on "
    "mosaicml-turbo, which only supports Python 3.10 for now.",
    "STK not found: please see https://github.com/stanford-futuredata/stk",
    "INFO 07-20 10:41:41 llm_engine.py:222] # GPU blocks: 22431, # CPU blocks: 7281",
    "Processed prompts: 100%|██████████| 4/4 [00:00<00:00, 23.75it/s]",
]


def test_an_optional_packages_notice_is_no_failure_sentence() -> None:
    assert classify_lines(OPTIONAL).kind == "healthy"
    assert classify_lines(["Model weights not found in /models/llama: the download failed"]).kind != "healthy"


# The session's third review: each shape below read wrong as this pass first had it.
def test_a_missing_driver_with_install_advice_is_still_a_failure() -> None:
    for line in ("NVIDIA driver not found. Please install the driver from https://www.nvidia.com/Download",
                 "vllm not installed. Please install it with pip install vllm; the server could not start",
                 "Please note the server failed to start"):
        assert classify_lines([line]).kind != "healthy", line


def test_none_joined_with_none_is_a_bug_not_python() -> None:
    line = "TypeError: unsupported operand type(s) for |: 'NoneType' and 'NoneType'"
    assert classify_lines([line]).kind != "version_mismatch"
