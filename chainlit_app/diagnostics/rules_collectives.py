"""What the libraries under the engine say about the devices and their links: c10d's TCPStore a client cannot
reach, NCCL's last CUDA error, NVML refusing a device index, a device plugin's torch library without an op.

Learnt from holdout round 18 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms18.py`).
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import STARTING, Rule, rule
from .taxonomy import Kind

COLLECTIVE_RULES: tuple[Rule, ...] = (
    rule(
        "c10d_store_unreachable",
        Kind.CONNECTION,
        # torch.distributed's rendezvous store: a client (a trainer joining vLLM's weight-sync group, a worker
        # joining its ranks) cannot open a TCP connection to the store's host and port. The timeout is how
        # long it tried; what failed is the connection (a port not published, 0.0.0.0 as the address to dial)
        r"TCP client failed to connect/validate to host|"
        r"client socket has timed out after \d+ ?m?s while trying to connect to",
        hint=Msg("rule.c10d_store_unreachable"),
        examples=(
            "W715 09:24:02.297720466 TCPStore.cpp:330] [c10d] TCP client failed to connect/validate to host "
            "0.0.0.0:51216 - retrying (try=0, timeout=300000ms, delay=59547ms): The client socket has timed out "
            "after 300000ms while trying to connect to (0.0.0.0, 51216).",  # TRL #3736
        ),
    ),
    rule(
        "c10d_store_unreachable_at_start",
        Kind.STARTUP_FAILURE,
        # the same words raised inside the engine's own start (from_engine_args, _init_engine, the executor
        # setting up its workers' process group): the store the engine dials is its own, on the address the
        # host or container gives it, so no client is involved and it is the start-up that fails (a container's
        # IP or network set-up, a firewall between the ranks). Older torch prints the timeout in seconds
        r"client socket has timed out after \d+ ?m?s while trying to connect to",
        phases=STARTING,
        raised_in=("vllm/engine/", "vllm/v1/engine/", "vllm/executor/", "vllm/v1/executor/", "vllm/worker/"),
        hint=Msg("rule.c10d_store_unreachable_at_start"),
        examples=(
            "torch.distributed.DistNetworkError: The client socket has timed out after 600s while trying to "
            "connect to (10.60.2.1, 53591).",  # GLM-4 #677 (raised under async_llm_engine's _init_engine)
        ),
    ),
    rule(
        "server_own_lookup_failed",
        Kind.STARTUP_FAILURE,
        # the server's own name lookup while it sets itself up (vLLM's get_ip resolving a public name to learn
        # its address, a distributed init resolving the master's host name) in a container without DNS: no
        # client is involved, so it is the start-up that fails (the host's network), not a connection to the
        # server; the same words raised in a client library stay connection_refused
        r"\bgaierror\b|Temporary failure in name resolution|Name or service not known|nodename nor servname",
        phases=STARTING,
        raised_in=("vllm/utils", "vllm/distributed/", "vllm/executor/", "vllm/engine/", "vllm/v1/engine/",
                   "vllm/v1/executor/", "vllm/worker/"),
        hint=Msg("rule.server_own_lookup_failed"),
        examples=("qwen1.5  | socket.gaierror: [Errno -3] Temporary failure in name resolution",),  # vLLM #3416
    ),
    rule(
        "nccl_last_error_oom",
        Kind.OUT_OF_MEMORY,
        # NCCL's 'unhandled cuda error' names the CUDA call's failure on its 'Last error:' line: when that is
        # out of memory, the collective could not allocate its buffers (CUDA graphs, a KV cache sized too big)
        r"Cuda failure '?out of memory",
        hint=Msg("rule.gpu_oom"),
        examples=("(VllmWorker rank=7 pid=240) Cuda failure 'out of memory'",),  # vLLM #18446
    ),
    rule(
        "nvml_invalid_device_index",
        Kind.STARTUP_FAILURE,
        # NVML refuses the physical index it was asked about: CUDA_VISIBLE_DEVICES (or a container's device
        # list) names GPUs this NVML does not see under those numbers. A set-up that does not fit the machine,
        # whichever module raised it
        r"NVMLError_InvalidArgument",
        hint=Msg("rule.nvml_invalid_device_index"),
        examples=(
            "ERROR 01-22 15:13:59 worker_base.py:467] pynvml.NVMLError_InvalidArgument: Invalid Argument",  # #9865
        ),
    ),
    rule(
        "device_library_lacks_op",
        Kind.VERSION_MISMATCH,
        # a platform plugin (vllm-ascend, the Cambricon and Moore Threads ports) calls an op of its device's
        # torch library that the installed release does not have yet: the library is older than the plugin needs
        r"module '(?:torch_npu|torch_mlu|torch_musa)(?:\.[\w.]+)?' has no attribute",
        hint=Msg("rule.device_library_lacks_op"),
        examples=(
            "ERROR 03-02 22:42:58 [engine.py:409] module 'torch_npu' has no attribute '_npu_rotary_embedding'",
        ),  # vllm-ascend #218
    ),
)
