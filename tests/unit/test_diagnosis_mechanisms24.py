"""The general mechanisms of the round-24 pass (issue 11: the misses of holdout round 24, moved to dev), each on
the real lines it was written from and each beside the healthy shape that must stay quiet.

c10d's client socket timing out inside the engine's own start (and in seconds, as older torch prints it), a log
that stops on NCCL's communicator being built (the first all-reduce between the GPUs hangs), and a printed
system inventory whose one line per GPU is not an answer repeating itself.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.inventory_lines import InventoryBlock


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


# GLM-4 #677: GLM-4's own start script, vLLM's AsyncLLMEngine in a container whose IP was misconfigured
_ENGINE_START = [
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/async_llm_engine.py", line 386, in '
    "from_engine_args",
    "    engine = cls(",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/async_llm_engine.py", line 340, in __init__',
    "    self.engine = self._init_engine(*args, **kwargs)",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/async_llm_engine.py", line 462, in _init_engine',
    "    return engine_class(*args, **kwargs)",
    "torch.distributed.DistNetworkError: The client socket has timed out after 600s while trying to connect to "
    "(10.60.2.1, 53591).",
]


def test_c10d_timeout_inside_the_engines_start_is_a_start_up_failure() -> None:
    assert _root(_ENGINE_START) == ("startup_failure", "c10d_store_unreachable_at_start")
    # the seconds form is the store's words too: with no engine frame it is a client that cannot connect
    assert _root([_ENGINE_START[-1]]) == ("connection", "c10d_store_unreachable")
    # a trainer joining vLLM's weight-sync group (TRL #3736): the client's connection, as before
    trainer = ("W715 09:24:02.297720466 TCPStore.cpp:330] [c10d] TCP client failed to connect/validate to host "
               "0.0.0.0:51216 - retrying (try=0, timeout=300000ms, delay=59547ms): The client socket has timed out "
               "after 300000ms while trying to connect to (0.0.0.0, 51216).")
    assert _root([trainer]) == ("connection", "c10d_store_unreachable")
    # a store that answered, and a timeout setting printed in an argument dump, stay quiet
    assert classify_lines(["INFO 05-01 10:00:00 parallel_state.py:100] world_size=2 rank=0 local_rank=0 "
                           "distributed_init_method=tcp://10.60.2.1:53591 backend=nccl",
                           "INFO 05-01 10:00:02 loader.py:10] Loading model weights took 9.3 GB",
                           "INFO: Application startup complete.",
                           "Namespace(dist_timeout=600, host='10.60.2.1')"]).kind == HEALTHY


# a Chinese blog post: Xinference's vLLM engine, Qwen1.5-110B-AWQ with TP 2 on RTX 6000 Ada; fixed by PCI ACS
_INVENTORY = [
    "OS: Ubuntu 24.04 LTS x86_64 ",
    "Kernel: 6.8.0-31-generic ",
    "Shell: bash 5.2.21 ",
    "CPU: AMD Ryzen Threadripper 7960X ",
    "GPU: NVIDIA RTX 6000 Ada Generation ",
    "GPU: NVIDIA RTX 6000 Ada Generation ",
    "GPU: NVIDIA RTX 6000 Ada Generation ",
    "Memory: 26786MiB / 257222MiB ",
    "",
]
_NCCL = [
    "(VllmWorkerProcess pid=2602361) INFO 07-12 19:04:18 pynccl.py:63] vLLM is using nccl==2.20.5",
    "",
    "REDACTED:3312182:3312204 [0] NCCL INFO comm 0x5654d4843400 rank 0 nranks 2 cudaDev 0 nvmlDev 2 busId 41000 "
    "commId 0x737ce38e08817c77 - Init COMPLETE",
    "REDACTED:3312183:3312205 [1] NCCL INFO comm 0x561a161881d0 rank 1 nranks 2 cudaDev 1 nvmlDev 3 busId 61000 "
    "commId 0x737ce38e08817c77 - Init COMPLETE",
]


def test_a_printed_inventory_is_not_an_answer_that_loops() -> None:
    assert classify_lines(_INVENTORY).kind == HEALTHY
    assert "printed_output_loops" not in [f.rule for f in classify_lines(_INVENTORY + _NCCL).findings]
    # one label repeated alone is still an answer repeating itself, and so is a sentence
    assert _root(["Answer: C"] * 2 + ["Answer: C is the right option here"] + ["Answer: C is the right option here"]
                 * 2)[0] == "degenerate_output"
    assert _root(["Here is the output:"] * 3) == ("degenerate_output", "printed_output_loops")
    assert _root(["Question: what is 1+1", "Answer: the answer is two", "Answer: the answer is two",
                  "Answer: the answer is two"]) == ("degenerate_output", "printed_output_loops")
    # a line between two field lines ends the run: three labels apart are no inventory
    block = InventoryBlock()
    assert not block.holds("OS: Ubuntu 24.04", 1, 0)
    assert not block.holds("Kernel: 6.8.0", 2, 1)
    assert block.holds("GPU: NVIDIA A100", 3, 2)
    assert not block.holds("GPU: NVIDIA A100", 5, 4)  # line 4 was another line: a new run


def test_a_log_that_stops_on_ncclls_communicator_stalled_in_the_first_all_reduce() -> None:
    assert _root(_INVENTORY + _NCCL) == ("slow_or_stalled", "start_ends_nccl_comm_ready")
    assert _root(_NCCL) == ("slow_or_stalled", "start_ends_nccl_comm_ready")
    # the next step logged, a one-rank communicator (no transfer between GPUs), and a server that served stay quiet
    after = ["INFO 07-12 19:04:20 custom_all_reduce_utils.py:232] reading GPU P2P access cache from "
             "/root/.cache/vllm/gpu_p2p_access_cache_for_0,1.json",
             "INFO 07-12 19:04:30 model_runner.py:160] Loading model weights took 27.6 GB"]
    assert classify_lines(_NCCL + after).kind == HEALTHY
    single = ["host:1:2 [0] NCCL INFO comm 0x5654d4843400 rank 0 nranks 1 cudaDev 0 busId 41000 commId 0x73 - "
              "Init COMPLETE"]
    assert classify_lines(single).kind == HEALTHY
    served = ["INFO 07-12 19:05:00 launcher.py:28] Available routes are:", "INFO:     Application startup complete.",
              *_NCCL[2:]]
    assert classify_lines(served).kind == HEALTHY
