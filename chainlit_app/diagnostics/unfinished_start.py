"""A start-up that a whole log shows beginning a step and never finishing it: slow_or_stalled, by phase.

Read on a file or an excerpt (`classify_file`, `classify_lines`, the `classify` CLI), never by the live
monitor: while a server starts, its log always ends on the step it is doing. In a file someone posted, the
end is where the copy stopped, so the end of the log means little by itself: of the healthy excerpts in the
corpus, 11 of 27 (dev) and 26 of 66 (holdout) end in boot or loading, before any serving marker, because
people post a start-up to show a warning. What tells a stalled start from those is its last line: the
announcement of a step that takes long or is known to hang (loading the weights, testing P2P access between
GPUs, setting up the distributed groups), with nothing after it. So the finding needs all of: no finding at
all in the log (no error, traceback or signal), no serving seen, and the last non-blank line being such a
step. It is weak: a slow step looks the same in a log cut a second after it began.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chainlit_app.i18n import Msg

from .findings import Finding, evidence_text
from .lineformat import parse_line, strip_ansi
from .taxonomy import Kind


@dataclass(frozen=True)
class StartStep:
    """A start-up step whose announcement, as a log's last line, means the start-up stopped there."""

    id: str
    pattern: re.Pattern[str]
    label: str  # message key of the step's name, for the hint
    examples: tuple[str, ...]


STEPS: tuple[StartStep, ...] = (
    StartStep(
        "start_ends_loading_model",
        # vLLM's announcement (V0 model_runner, V1 gpu/cpu_model_runner), or the shard bar short of 100 %
        re.compile(r"Starting to load model|Loading [\w ]*checkpoint shards:\s*\d{1,2}% ", re.IGNORECASE),
        "start_step.loading_model",
        (
            "(EngineCore pid=115) Starting to load model unsloth/Qwen3-VL-32B-Instruct-bnb-4bit...",  # vLLM #20891
            "Loading safetensors checkpoint shards:  75% Completed | 3/4 [00:15<00:05,  5.05s/it]",
        ),
    ),
    StartStep(
        "start_ends_p2p_check",
        # custom all-reduce tests every GPU pair in a subprocess before it writes the cache (a known hang)
        re.compile(r"generating GPU P2P access cache", re.IGNORECASE),
        "start_step.p2p_check",
        (
            "(VllmWorker rank=0 pid=238) INFO 05-20 05:40:24 [custom_all_reduce_utils.py:206] generating GPU P2P "
            "access cache in /root/.cache/vllm/gpu_p2p_access_cache_for_0,1,2,3,4,5,6,7.json",  # vLLM #18303
        ),
    ),
    StartStep(
        "start_ends_distributed_init",
        # parallel_state's lines at the start and the end of setting up the process groups (NCCL, Gloo)
        re.compile(r"world_size=\d+ rank=\d+ .*backend=\w+|rank \d+ in world size \d+ is assigned as"),
        "start_step.distributed_init",
        (
            "(EngineCore pid=24644) INFO 04-14 13:41:01 [parallel_state.py:1400] world_size=1 rank=0 local_rank=0 "
            "distributed_init_method=tcp://192.168.68.154:46985 backend=nccl",  # amd-strix-halo-vllm-toolboxes #37
            "(EngineCore pid=24644) INFO 04-14 13:41:01 [parallel_state.py:1712] rank 0 in world size 1 is "
            "assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank N/A, EPLB rank N/A",
        ),
    ),
    StartStep(
        "start_ends_workers_ready",
        # V0's multiprocessing workers answer the driver's start and wait for its calls; the driver then sets up
        # the distributed groups and loads the model, and every one of those steps logs: a log that stops on the
        # workers' ready lines stopped before the driver's first step (a launcher such as accelerate starting the
        # tensor-parallel group a second time hangs here)
        re.compile(r"Worker ready; awaiting tasks"),
        "start_step.workers_ready",
        (
            # lm-evaluation-harness #3093 (accelerate launch with vLLM TP=4)
            "(VllmWorkerProcess pid=1876886) INFO 06-29 19:49:30 multiproc_worker_utils.py:215] Worker ready; "
            "awaiting tasks",
        ),
    ),
    StartStep(
        "start_ends_nccl_setup",
        # V0's tensor-parallel start: after the workers' ready lines every rank finds the NCCL library and logs
        # its version, then NCCL builds its communicators (and custom all-reduce tests the GPUs); both steps
        # log when they finish, so a log that stops on the NCCL library's lines stopped inside NCCL's set-up
        re.compile(r"Found nccl from (?:environment variable|library)|vLLM is using nccl==", re.IGNORECASE),
        "start_step.nccl_setup",
        (
            # vLLM #8087 (TP 2, VLLM_NCCL_SO_PATH set)
            "(VllmWorkerProcess pid=1153488) INFO 09-03 02:15:42 utils.py:965] Found nccl from environment "
            "variable VLLM_NCCL_SO_PATH=/home/wyl/llm/qwen/nccl_2.21.5-1+cuda12.4_x86_64/lib/libnccl.so",
            "INFO 09-03 02:15:42 pynccl.py:63] vLLM is using nccl==2.21.5",
        ),
    ),
    StartStep(
        "start_ends_nccl_comm_ready",
        # NCCL's own line (NCCL_DEBUG=INFO) when a communicator of two ranks or more is built: vLLM's PyNccl
        # runs a small warm-up all-reduce right after it, and then custom all-reduce checks the GPU pairs,
        # which logs. A log that stops on these lines stopped in the first transfer between the GPUs: the
        # known hang of peer-to-peer traffic that PCI ACS or the IOMMU blocks (GPUs busy, nothing moves)
        re.compile(r"NCCL INFO (?:ncclCommInitRank\w* )?comm 0x[0-9a-f]+ rank \d+ nranks (?:[2-9]|\d{2,}) "
                   r".*Init COMPLETE"),
        "start_step.nccl_first_allreduce",
        (
            # a Chinese blog post: Xinference's vLLM engine, TP 2 on RTX 6000 Ada, fixed by disabling PCI ACS
            "REDACTED:3312183:3312205 [1] NCCL INFO comm 0x561a161881d0 rank 1 nranks 2 cudaDev 1 nvmlDev 3 "
            "busId 61000 commId 0x737ce38e08817c77 - Init COMPLETE",
        ),
    ),
    StartStep(
        "start_ends_waiting_for_engine",
        # the API server's client polling its engine process while that process starts (V0's MQLLMEngine client
        # logs it every 10 s until the engine answers; V1's front end counts the engine cores yet to start)
        re.compile(r"Waiting for output from MQLLMEngine|Waiting for \d+ local, \d+ remote core engine proc",
                   re.IGNORECASE),
        "start_step.waiting_for_engine",
        (
            "DEBUG 05-31 01:55:18 client.py:191] Waiting for output from MQLLMEngine.",  # aws-neuron-sdk #1163
            # a vLLM issue about a MoE model whose start hangs here, as posted
            "(APIServer pid=300606) DEBUG 09-02 17:29:16 [utils.py:777] Waiting for 1 local, 0 remote core engine "
            "proc(s) to start.",
        ),
    ),
)


def step_of(line: str) -> StartStep | None:
    """The step a log line announces, if any."""
    message = parse_line(strip_ansi(line)).message
    return next((step for step in STEPS if step.pattern.search(message)), None)


class StartWatch:
    """Remembers the log's last non-blank line (only the last: memory stays constant)."""

    def __init__(self) -> None:
        self._last = ""
        self._lineno = 0

    def feed(self, line: str, lineno: int) -> None:
        if line.strip():
            self._last, self._lineno = line, lineno

    def finding(self, served: bool, secrets: tuple[str, ...] = ()) -> Finding | None:
        """The unfinished start, when the log served nothing and its last line began a step."""
        step = None if served or not self._last else step_of(self._last)
        if step is None:
            return None
        return Finding(
            kind=Kind.SLOW_OR_STALLED.value,
            line=self._lineno,
            text=evidence_text(strip_ansi(self._last), secrets),
            hint=Msg("hint.start_unfinished", step=Msg(step.label)),
            rule=step.id,
            role="weak",
            basis="phase",
        )
