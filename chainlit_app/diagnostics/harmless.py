"""Lines that look alarming but are normal for vLLM: they never produce findings.

The counterpart of the rules: a harmless line is checked before any rule decides, so a WARNING about
memory tuning or a missing tcmalloc is never taken for a failure.
"""

from __future__ import annotations

import re

from .lineformat import ParsedLine

HARMLESS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"Found ulimit of \d+ and failed to automatically increase|Too many open files`?\.?\s*Consider", re.I
    ),
    re.compile(r"lib(?:tcmalloc|iomp)\S* is not found", re.I),
    re.compile(r"Attempted to load weight .* with dtype", re.I),
    re.compile(r"\b(?:Deprecation|PendingDeprecation|Future)Warning\b|\bis deprecated\b", re.I),
    re.compile(r"Casting torch\.\w+ to torch\.\w+|Downcasting torch\.float32", re.I),
    re.compile(r"Token indices sequence length is longer than the specified maximum", re.I),
    re.compile(r"leaked (?:semaphore|shared_memory) objects", re.I),
    re.compile(r"Compiling model again due to a load failure", re.I),
    re.compile(r"Waiting for connections to close", re.I),
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 turns the refusal of a long max_model_len into this warning: vLLM goes on.
    re.compile(r"VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution", re.I),
    # LangChain's token counter falls back to a default encoding for a model name tiktoken does not know: the
    # server's model is not concerned (`harmless_tiktoken_fallback`)
    re.compile(r"model not found\. Using cl100k_base encoding", re.I),
    # Ray's raylet at `E`, every ten seconds while its session directory's disk is nearly full: a capacity
    # note ("Object creation will fail if spilling is required"); a failed object creation says so itself.
    re.compile(r"file_system_monitor\.cc:\d+: .* is over \d+% full", re.I),
    # TensorFlow imported beside vLLM (a container that holds both) registers CUDA's libraries a second time, at
    # `E`: "Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already
    # been registered", and the same for cuDNN and cuBLAS; nothing fails
    re.compile(r"Unable to register cu(?:FFT|DNN|BLAS) factory", re.I),
    # vLLM has no tuned kernel configuration for this GPU and expert shape and uses its default: a speed note
    # ("Using default MoE config. Performance might be sub-optimal!" and the file it looked for)
    re.compile(r"Config file not found at \[?'?\S*/fused_moe/configs/|Using default MoE config", re.I),
    # vLLM asks the hub for a model's safetensors metadata (to pick a dtype) through `with_retry`, which logs each
    # failed try at ERROR ("…, retrying 1 of 2"), and then goes on without it: a local path is no repository id,
    # an offline machine reaches no hub. What fails for the model fails again in its own words.
    re.compile(r"\bError retrieving safetensors: ", re.I),
    # vLLM's TPU platform asks Google Cloud's metadata server for the TPU's type and name, logs a refusal at ERROR
    # (`tpu_info.py`: "Unable to poll TPU GCE Metadata. Got status code: 404") and goes on without it, which is how
    # Colab and the TPU VMs that do not expose the old endpoint answer; Ray logs the same look-up at DEBUG
    re.compile(r"^Unable to poll (?:the )?TPU GCE Metadata", re.I),
    # the tpu-info library runs a canary process before it imports libtpu's SDK (for its metrics) and, when the
    # canary exits with a code it does not know (-6 where the TPU is held by the main process), goes on without it:
    # "Check failed with unknown exit code: -6." printed bare in working TPU starts
    re.compile(r"^Check failed with unknown exit code: -?\d+\.?$", re.I),
    # vLLM 0.2's Mixtral module, imported by every model, prints where its optional kernels are missing and goes on
    # ("MegaBlocks not found. Please install it by `pip install megablocks`…", "STK not found: please see …")
    re.compile(r"^(?:MegaBlocks|STK) not found[.:] (?:Please install it by|please see) ", re.I),
)
# A WARNING that mentions memory is a tuning note ("Possibly too large swap space", "pin_memory=False as
# WSL is detected", "KV cache memory ...") unless it names an actual memory failure.
_MEMORY_WORD = re.compile(r"memory", re.I)
_MEMORY_FAILURE = re.compile(
    r"out of memory|OutOfMemory|Cannot allocate memory|No available memory|not enough memory|oom|"
    # vLLM's preemption warning advises more memory: a shortage that slows every answer, not a tuning note
    r"not enough KV cache space|"
    # a kernel's fault is never a tuning note, even in a warning (V0's failed-step dump, vLLM #9532)
    r"illegal memory access", re.I
)

# Logged at ERROR while a start-up goes on: vLLM probes FlashAttention 2, which GPUs before compute capability 8
# (T4, V100) lack, and picks another attention backend (`Using XFormers backend`) on the next lines. In a log that
# shows its start-up, those lines say whether it went on (a failure after the probe is read where it shows); an
# excerpt of the probe line alone shows nothing else, and the line is then all there is to name.
_PROBE_REFUSALS = re.compile(r"Cannot use FA version \d+ is not supported due to", re.I)


def is_probe_refusal(parsed: ParsedLine) -> bool:
    """True for an ERROR line of a probe that vLLM survives by choosing something else."""
    return bool(_PROBE_REFUSALS.search(parsed.message))


# During warm-up compilation vLLM prints this every 60 s; only after start-up does it mean a stall.
SHM_WAIT = re.compile(r"No available shared memory broadcast block found", re.I)


# An exception raised, not a warning printed: the same words ("... is deprecated") then stopped the server.
# pydantic prints each error of a ValidationError as `Value error, <message> [type=value_error, ...]`: vLLM's
# config refusals (`User-specified max_model_len ... is greater than the derived max_model_len`) come so, and
# they quote the warning vLLM prints when the refusal is overridden (`pydantic_value_error`).
_RAISED = re.compile(r"^\s*(?:(?:[a-z_]\w*\.)*\w*(?:Error|Exception): |(?:Value error|Assertion failed), )")


def is_harmless(parsed: ParsedLine) -> bool:
    """True for known-normal warnings that must never become findings."""
    msg = parsed.message
    if _RAISED.match(msg):
        return False
    if any(p.search(msg) for p in HARMLESS):
        return True
    return parsed.level == "WARNING" and bool(_MEMORY_WORD.search(msg)) and not _MEMORY_FAILURE.search(msg)


def is_tracker_cleanup(exception_type: str, frames: list[tuple[str, str]]) -> bool:
    """CPython's resource tracker failing to forget a shared-memory segment another process unlinked first
    (`KeyError: '/psm_…'` raised in its own loop, `multiprocessing/resource_tracker.py`): printed at exit by
    tensor-parallel runs on the multiprocessing backend (vLLM #5468, "benign"), and by nothing that failed."""
    return exception_type.rsplit(".", 1)[-1] == "KeyError" and bool(frames) \
        and all(path.replace("\\", "/").endswith("multiprocessing/resource_tracker.py") for path, _ in frames)
