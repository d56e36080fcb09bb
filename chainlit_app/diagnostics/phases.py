"""The phases of a vLLM server's life, and the log phrases that mark them: one table for all readers.

The classifier uses the phases to decide what an unrecognised failure means (before ready: the server
could not start; after: it failed while serving) and which rules apply; the engine's start-up notice
uses the same markers (`progress=True`) to show how far start-up has come. A phrase moves the phase
forward only, except the markers of a new start (`restart=True`), which begin a new life.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum


class Phase(IntEnum):
    """Ordered: a log moves forward through them (BOOT again only on a restart)."""

    BOOT = 0
    LOADING = 1
    SERVING = 2
    STOPPING = 3

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Marker:
    """A phrase that shows the server has reached `phase`."""

    phase: Phase
    pattern: re.Pattern[str]
    progress: bool = False  # worth showing as start-up progress
    restart: bool = False  # a new server life begins here


def _m(phase: Phase, regex: str, *, progress: bool = False, restart: bool = False) -> Marker:
    return Marker(phase, re.compile(regex, re.IGNORECASE), progress, restart)


MARKERS: tuple[Marker, ...] = (
    _m(Phase.BOOT, r"vLLM API server version|non-default args:", progress=True, restart=True),
    _m(Phase.BOOT, r"Automatically detected platform|Initializing a V1 LLM engine|Resolved architecture",
       progress=True),
    _m(Phase.LOADING, r"Starting to load model|Loading weights|Loading safetensors|Model loading took|"
       r"Attempted to load weight|"
       r"KV cache size|init engine|Capturing CUDA graph|Graph capturing|torch\.compile takes|Compiling a graph|"
       r"Compiling model|Dynamo bytecode transform|warming up|warmup model|Memory profiling takes", progress=True),
    _m(Phase.SERVING, r"Starting vLLM (?:API )?server|Available routes|Started server process|"
       r"Waiting for application startup", progress=True),
    _m(Phase.SERVING, r"Application startup complete|Uvicorn running on", progress=True),
    _m(Phase.SERVING, r"Dumping (?:scheduler output for model execution|input data for V1 LLM engine)|"
       r"EngineCore encountered a fatal error|Error in model execution|"
       r"failure while handling (?:the )?request|Avg prompt throughput|Processed prompts|Added request|"
       r"Exception in ASGI application|"
       # V0 AsyncLLMEngine's background loop ended: it runs only once the engine is built (the first request
       # starts it), so whatever it raised happened while serving (vLLM #8100)
       r"Exception in callback functools\.partial\(<function _raise_exception_on_finish\b|"
       # the client's monitor of its engine cores starts only once every core reported ready (core_client.py)
       r"Engine core proc \S+ died unexpectedly|"
       # its later wording (the same monitor thread, started after the ready handshake: core_client.py)
       r"MPClient: engine core exited unexpectedly|"
       r"Received request|"
       r"\"(?:GET|POST) /v1/\S* HTTP/[\d.]+\" 200"),
    # An intentional stop only: "shutting down executor" after a worker died is a failure, not a stop, and
    # vLLM's "[shutdown]" lines alone are not one: they also follow an engine that died.
    _m(Phase.STOPPING, r"^Shutting down\s*$|shutdown triggered|received signal[= ]SIG(?:INT|TERM)|"
       r"Waiting for application shutdown|^KeyboardInterrupt\s*$"),
)
PROGRESS_MARKERS: tuple[Marker, ...] = tuple(m for m in MARKERS if m.progress)
_ANY = re.compile("|".join(f"(?:{m.pattern.pattern})" for m in MARKERS), re.IGNORECASE)


# Lines that name phase words without marking a phase ("... doing some time-consuming work (e.g.
# compilation ...)" is printed in any phase).
_NOT_A_MARKER = re.compile(r"No available shared memory broadcast block", re.IGNORECASE)


def marker_for(message: str) -> Marker | None:
    """The marker a log message carries, if any: a restart first, else the latest phase it shows (one
    combined search first: most lines carry none)."""
    if not _ANY.search(message) or _NOT_A_MARKER.search(message):
        return None
    found = [m for m in MARKERS if m.pattern.search(message)]
    restart = next((m for m in found if m.restart), None)
    return restart or max(found, key=lambda m: m.phase, default=None)


def is_progress(message: str) -> bool:
    """True for start-up progress lines (the notice shown while the server starts)."""
    return any(m.pattern.search(message) for m in PROGRESS_MARKERS)


class PhaseTracker:
    """Follows one log's phase line by line."""

    def __init__(self) -> None:
        self.phase = Phase.BOOT
        self.seen_marker = False
        self.saw_start = False  # a boot or loading marker: the log shows the start itself
        self.served = False  # the serving phase was reached (a stop that follows it does not undo that)

    def observe(self, message: str) -> Marker | None:
        marker = marker_for(message)
        if marker is None:
            return None
        self.seen_marker = True
        self.saw_start = self.saw_start or marker.phase < Phase.SERVING
        if marker.restart:
            self.phase = Phase.BOOT
        elif marker.phase > self.phase:
            self.phase = marker.phase
        self.served = self.served or self.phase == Phase.SERVING
        return marker

    def enter(self, phase: Phase) -> None:
        """Evidence other than a marker (a served request, an access line) that the phase was reached."""
        if phase > self.phase:
            self.phase = phase
        self.served = self.served or phase == Phase.SERVING
        self.seen_marker = True


# What a log shows about its phase without a marker (an excerpt): where a traceback ran, which logger wrote.
# Functions on a traceback's stack that show it happened while a request was served.
_SERVING_FRAMES = re.compile(
    r"serving_|create_chat_completion|create_completion|chat_completion_stream_generator|"
    r"completion_stream_generator|output_handler|process_outputs|execute_model|_process_input_queue|"
    r"run_busy_loop|run_engine_loop|step|generate|handle_request|__call__|stream|_prepare_inputs|_update_states|schedule|"
    r"update_from_output|convert_tokens_to_string|(?<!\w)_?decode\b|batch_decode|detokeniz|get_response|"
    # V0's output processor and detokenizer run only on generated tokens
    r"_process_\w*outputs|decode_\w+_inplace|"
    r"collective_rpc|logprob|"
    r"allocate_slots|update_state_after_alloc|_alloc|swap_blocks|sample_tokens|_sample\b|propose|draft_token|"
    r"bookkeeping|process_input_socket|add_request|abort_request|get_output|execute_dummy_batch|"
    # a web framework calling an endpoint (FastAPI, Starlette): a request is being handled, whoever serves it
    r"run_endpoint_function|request_response|"
    # a gRPC servicer's handlers for a generation request (vllm_tgis_adapter and TGI's API: Generate,
    # GenerateStream; vLLM #7232)
    r"\bGenerate(?:Stream)?\b|"
    # sampling penalties are applied for a request that asked for them: the warm-up's dummy sampler run says
    # no_penalties=True, so apply_penalties returns before it calls anything (v1/sample/sampler.py)
    r"apply_(?:all_)?penalties|"
    # a request's own logits processors (SamplingParams.logits_processors): the warm-up's dummy requests set none,
    # so the call under this frame runs only for a served request that asked for them (distilabel #658)
    r"_apply_logits_processors|"
    # SGLang: the scheduler's event loops start once the server is up, and a step named for decoding runs on a
    # batch of requests being decoded (speculative decoding's draft extend, `_draft_extend_for_decode`)
    r"\bevent_loop_(?:normal|overlap|pp)\w*|\w_for_decode\b|"
    # sampling and constrained decoding run on requests' logits: a model runner's `sample`, the regex/grammar
    # vocabulary mask it fills per request, the scheduler's queue of requests whose grammar is compiling
    # (SGLang #1556, #6229)
    r"(?<!\w)sample\b|\w*vocab_mask\b|\w*grammar_(?:requests?|queue|bitmask)\w*|"
    # tool-call and reasoning parsers read a request's generated text (vLLM #32213: extract_tool_calls)
    r"extract_tool_calls\w*|extract_reasoning\w*",
)
# Functions that run only while the server starts: their presence outweighs serving-looking frames
# (a profiling run calls the model's forward as a request would).
_STARTING_FRAMES = re.compile(
    r"load_model|load_weights|from_engine_args|profile_run|determine_available_memory|create_engine_config|"
    r"build_async_engine_client|get_config|from_pretrained|init_device|_initialize_kv_caches|capture_model|"
    r"compile_or_warm_up_model|initialize_from_config|_init_executor|init_worker",
)
# launcher.py writes its errors only from the handlers of requests ("MQLLMEngine is already dead, terminating
# server process"); its start-up lines print the routes once the server is ready. Tool-call and reasoning parsers
# log only about a request's generated text ("[glm4_moe_tool_parser.py:123] Failed to extract tool call spec").
_SERVING_LOGGERS = re.compile(r"serving_|request_logger|async_llm|output_processor|detokenizer|\blauncher\b|"
                              r"_tool_parser\b|_reasoning_parser\b")


def stack_shows_serving(functions: list[str]) -> bool:
    """True when a traceback's functions are the serving path's and none runs only at start-up."""
    joined = " ".join(functions)
    return bool(_SERVING_FRAMES.search(joined)) and not _STARTING_FRAMES.search(joined)


# What an error's own words say of when it happened, for excerpts that show neither a marker nor a stack:
# requests and prompts exist only while serving; files, weights, arguments and settings that do not fit
# together belong to starting (a message naming both is left to the other evidence).
_SERVING_WORDS = re.compile(
    r"\brequest(?:s|_id)?\b|\breq_id\b|chatcmpl-|\bcmpl-|\bprompt(?:_token_ids|s)?\b|\bdetokeniz|"
    r"\bfinish_reason\b|\w(?:Completion|Chat|Embedding|Tokenize|Score|Rerank)Request\b|"
    # an answer being streamed: a gateway's "Error processing streaming response" (GPUStack #568)
    r"\bstreaming (?:response|reply|answer)s?\b|\bstream(?:ed|ing)? chunks?\b|"
    # an attribute or call missing on one of the API server's request handlers (OpenAIServingChat, ...Models,
    # ...Tokenization): their methods are what a request calls (ipex-llm #13012: a client listing the models)
    r"'OpenAIServing\w*' object",
    re.IGNORECASE,
)
_STARTING_WORDS = re.compile(
    r"config\b|config\.json|checkpoint|\bweights?\b|safetensors|\bload(?:ing|ed)?\b|architecture|quantiz|"
    r"(?:^|\s)--[a-z][\w-]+|\bargument|\bdownload|\brevision\b|trust_remote_code|\binit(?:ializ\w+)?\b|"
    r"speculative|\bmax_num_\w+|\benable[_-]\w+|incompatible|not compatible",
    re.IGNORECASE,
)


def words_show_serving(message: str) -> bool:
    """True when an error's message speaks of requests or generation and not of starting up."""
    return bool(_SERVING_WORDS.search(message)) and not _STARTING_WORDS.search(message)


def stack_shows_starting(functions: list[str]) -> bool:
    """True when a stack runs code that runs only while the server starts (loading, profiling, capture)."""
    return bool(_STARTING_FRAMES.search(" ".join(functions)))


def logger_shows_serving(logger: str) -> bool:
    """True for loggers that write only while requests are served."""
    return bool(logger) and bool(_SERVING_LOGGERS.search(logger))
