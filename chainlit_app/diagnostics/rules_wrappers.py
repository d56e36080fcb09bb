"""Wrapper rules: consequences such as "Engine core initialization failed. See root cause above" that point
at a cause printed elsewhere. Last in the tables: they only label a log in which nothing else was found.

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import SERVING, STARTING, Rule, rule
from .taxonomy import Kind

# A vLLM process failed: the same words before ready (a start-up failure) and after (an engine error).
_PROCESS_FAILED = (
    r"Engine core initialization failed|Engine process failed to start|EngineCore failed to start|"
    r"Engine core proc \S+ died unexpectedly|(?:APIServer|API server|ApiServer)\b.{0,60}\bexited|"
    r"Worker proc \S+ died unexpectedly|Error executing method|Worker failed with error|"
    r"WorkerProc (?:initialization failed|hit an exception)|AsyncLLM output_handler failed|"
    r"Error in chat completion stream generator|Engine background task failed|EngineCore hit an exception|"
    r"EngineCore encountered a fatal error|Exception in worker|engine core exited unexpectedly"
)

WRAPPER_RULES: tuple[Rule, ...] = (
    # --- wrappers: consequences that point at a cause printed elsewhere ---
    rule(
        "engine_dead",
        Kind.ENGINE_ERROR,
        r"EngineDeadError|EngineCore encountered an issue|AsyncEngineDeadError|Background loop has errored|"
        # V0's MQLLMEngine client: its heartbeat runs only once the engine started (a failed start reads
        # 'Engine process failed to start'), and the launcher's handler writes the second while serving
        r"Engine loop has died|Engine process \(pid \d+\) died|MQLLMEngine is already dead|"
        # V0 AsyncLLMEngine's done-callback of its background loop (started by the first request): the loop
        # ended with an exception, which it re-raises as AsyncEngineDeadError (vLLM #8100, cut before it)
        r"Exception in callback functools\.partial\(<function _raise_exception_on_finish\b|"
        # its message as RunPod's worker relays it, the frames below it cut (runpod-workers/worker-vllm #68)
        r"Task finished unexpectedly\. This should never happen",
        role="wrapper",
        hint=Msg("rule.engine_dead"),
        examples=(
            "ERROR:asyncio:Exception in callback functools.partial(<function _raise_exception_on_finish at "
            "0x7fd321802200>, error_ca",  # vLLM #8100, hard-wrapped at 120 columns as posted
            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace",
            "ERROR 12-01 13:05:02 client.py:282] RuntimeError('Engine process (pid 76) died.')",  # vLLM #10812
        ),
    ),
    rule(
        "engine_failed",
        Kind.STARTUP_FAILURE,
        _PROCESS_FAILED,
        role="wrapper",
        phases=STARTING,
        hint=Msg("rule.engine_failed"),
        examples=(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        ),
    ),
    rule(
        "engine_failed_serving",
        Kind.ENGINE_ERROR,
        _PROCESS_FAILED,
        role="wrapper",
        phases=SERVING,
        hint=Msg("rule.engine_failed_serving"),
        examples=(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        ),
    ),
    rule(
        "tool_says_vllm_failed",
        Kind.STARTUP_FAILURE,
        # what the tools that run vLLM (InstructLab, GPUStack, Xinference, ...) print when it did not come up
        r"\bvllm\b[^.\n]{0,40}\b(?:failed to start|did not start|exited with (?:exit )?(?:code|status)|"
        r"not ready after|failed to launch)",
        role="wrapper",
        phases=STARTING,
        hint=Msg("rule.tool_says_vllm_failed"),
        examples=("vLLM failed to start.  Retry with --enable-serving-output to learn more about the failure.",),
    ),
    rule(
        "access_5xx",
        Kind.ENGINE_ERROR,
        r"HTTP/[\d.]+\" 5\d\d\b",
        role="wrapper",
        hint=Msg("rule.access_5xx"),
        examples=(
            'INFO:     127.0.0.1:45442 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
        ),
    ),
)
