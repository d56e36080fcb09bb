"""Rules for what Ray says when the engine runs on it (`--distributed-executor-backend ray`, Ray Serve, RayLLM):
its scheduler cannot place the work, or its C++ core fails while the workers start.

Data only: see `rules.py` for what the fields mean and how the winner is chosen. Ray's C++ core logs as
`[2026-03-03 21:12:46,736 E 46008 46008] core_worker_process.cc:232: ...` (`lineformat.py` reads the level);
an excerpt often keeps only `file.cc:line: message`, so the rule reads the message's own shape.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import STARTING, Rule, rule
from .taxonomy import Kind

RAY_RULES: tuple[Rule, ...] = (
    # The scheduler waits for resources the cluster does not have (a replica asking for a GPU or an accelerator
    # type on nodes that offer none): nothing fails, the start-up waits (weak: an autoscaling cluster may
    # still bring them).
    rule(
        "ray_resources_unavailable",
        Kind.SLOW_OR_STALLED,
        r"replicas? that ha(?:ve|s) taken more than \d+\s?s to be scheduled|"
        r"resource request cannot be scheduled right now|"
        r"(?:actor|task) with ID \w+ cannot be scheduled right now|"
        r"Waiting for creating a placement group of specs|"
        r"\d+\+? pending placement groups?|No available node types can fulfill resource request",
        role="weak",
        hint=Msg("rule.ray_resources_unavailable"),
        examples=(
            # ray-llm #143, the Serve controller's JSON record as the line it stands for
            "WARNING:    deployment_state.py:2152 - Deployment 'VLLMDeployment:amazon--LightGPT' in application "
            "'ray-llm' 1 replicas that have taken more than 30s to be scheduled. This may be due to waiting for "
            "the cluster to auto-scale or for a runtime environment to be installed. Resources required for each "
            "replica: [{\"CPU\": 1.0, \"accelerator_type_a10\": 0.01}, {\"CPU\": 1.0, \"accelerator_type_a10\": "
            "0.01, \"GPU\": 0.1}], total resources available: {}. Use `ray status` for more details.",
            "(autoscaler +2s) Warning: The following resource request cannot be scheduled right now: {'CPU': 1.0}.",
            "INFO 02-02 19:54:30 ray_utils.py:212] Waiting for creating a placement group of specs for 10 seconds. "
            "specs=[{'GPU': 1.0, 'node:172.31.42.4': 0.001}, {'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}]",
            # vLLM #12670 (two H100 nodes): `ray status` while the engine waits for its placement group
            " {'node:10.0.0.1': 0.001, 'GPU': 1.0} * 1, {'GPU': 1.0} * 15 (PACK): 1+ pending placement groups",
            "(autoscaler +10m11s, ip=172.31.42.4) Error: No available node types can fulfill resource request "
            "{'node:10.0.0.1': 0.001, 'GPU': 1.0}. Add suitable node types to this cluster to resolve this issue.",
        ),
    ),
    # A node that cannot reach the GCS at the address it was given within Ray's timeout (vLLM #19543: a Docker
    # worker started with `--address=127.0.0.1:6379` instead of the head's address): the network path to the
    # head, a connection failure; ahead of the C++ core's other errors, with as many conditions as the
    # level-E reading below (Ray logs it at E while the engine starts), so that it wins the tie by its place.
    rule(
        "ray_gcs_unreachable",
        Kind.CONNECTION,
        r"\bFailed to connect to GCS at address \S+ within \d+ seconds\b",
        phases=STARTING,
        levels=("ERROR",),
        case=True,
        hint=Msg("rule.ray_gcs_unreachable"),
        examples=(
            "[2025-06-13 01:49:41,730 E 1 1] gcs_rpc_client.h:179: Failed to connect to GCS at address "
            "10.108.0.184:6379 within 5 seconds.",
        ),
    ),
    # An error of Ray's C++ core (a `.cc`/`.h` source and line before the message) while the engine starts:
    # a worker that cannot register with its raylet, a GCS that cannot be reached, a failed RAY_CHECK. There
    # is no Python traceback: the workers never started.
    rule(
        "ray_core_error",
        Kind.STARTUP_FAILURE,
        r"\w\.cc:\d+:\s.{0,200}?\b(?:Failed to|failed to|IOError|RpcError|Check failed|Unable to|Timed ?[Oo]ut)\b|"
        r"\w\.h:\d+:\s.{0,200}?\b(?:Failed to|failed to|IOError|RpcError|Check failed|Unable to|Timed ?[Oo]ut)\b",
        phases=STARTING,
        case=True,
        hint=Msg("rule.ray_core_error"),
        examples=(
            # vLLM #18453 (two nodes, vLLM 0.8.5): the glog prefix cut off by the excerpt
            "core_worker.cc:514: Failed to register worker to Raylet: IOError: [RayletClient] Unable to register "
            "worker with raylet. Failed to read data from the socket: End of file worker_id=01000000ffffffffffff",
            "[2026-03-03 21:12:46,736 E 46008 46008] core_worker_process.cc:232: Failed to register worker to "
            "Raylet: IOError: Failed to read data from the socket: End of file worker_id=01000000ffffffffffffffff",
        ),
    ),
    # Any line the C++ core logs at level E while the engine starts, whatever its words (`lineformat.py` reads
    # the level from `[time E pid tid]`). Not `logging.cc`: that is Ray's signal handler printing a crash,
    # which the fatal-signal reading owns.
    rule(
        "ray_core_error_line",
        Kind.STARTUP_FAILURE,
        r"^(?!logging\.cc)[\w-]+\.cc:\d+:\s|^[\w-]+\.h:\d+:\s",
        phases=STARTING,
        levels=("ERROR",),
        hint=Msg("rule.ray_core_error"),
        examples=(
            "gcs_client.cc:183: Failed to get cluster ID from GCS server: TimedOut: Timed out while waiting for GCS "
            "to become available.",  # as Ray prints it under [time E pid tid]
        ),
    ),
)
