"""Rules for failures that stop the server from starting: model source and files, memory, port, builds.

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from .phases import Phase
from .rules import SERVING, Rule, rule
from .taxonomy import Kind

# A fault inside a GPU kernel: the same words during loading (start-up) and while serving.
_KERNEL_FAULT = (
    r"illegal memory access|an illegal instruction was encountered|misaligned address|"
    r"device-side assert(?:ion)? triggered|unspecified launch failure|\.cu:\d+: .{0,120}Assertion .{0,200} failed"
)

STARTUP_RULES: tuple[Rule, ...] = (
    # --- model source problems that look like network/auth errors: must precede those rules ---
    rule(
        "hf_gated",
        Kind.STARTUP_FAILURE,
        r"401 Client Error.*(?:huggingface|hf\.co)|GatedRepoError|Cannot access gated repo|gated repo|"
        r"Access to model \S+ is restricted",
        hint="The model is gated or private on Hugging Face: accept its licence and give vLLM an HF_TOKEN.",
        examples=(
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url",
        ),
    ),
    rule(
        "hf_offline",
        Kind.STARTUP_FAILURE,
        r"LocalEntryNotFoundError|couldn't connect to '?https://huggingface\.co|"
        r"Cannot find the requested files in the (?:disk )?cache|"
        r"host='(?:[\w-]+\.)*(?:huggingface\.co|hf\.co|hf-mirror\.com)'|OfflineModeIsEnabled",
        hint="The model could not be downloaded (no network or offline mode): fetch it first or set "
        "CHAT_MODEL "
        "to a local folder.",
        examples=(
            "HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /api/x",
        ),
    ),
    rule(
        "hf_repo_missing",
        Kind.STARTUP_FAILURE,
        r"RepositoryNotFoundError|Repository Not Found for url|is not a local folder and is not a valid "
        r"model "
        r"identifier|Invalid repository ID or local directory",
        hint="CHAT_MODEL is neither an existing local folder nor a hub repository: fix the path or the id.",
        examples=("OSError: foo/bar is not a local folder and is not a valid model identifier listed on",),
    ),
    rule(
        "hf_validation",
        Kind.STARTUP_FAILURE,
        r"HFValidationError|Repo id must be in the form",
        hint="The model path does not exist on this machine, so it was taken for a hub id: fix CHAT_MODEL.",
        examples=(
            "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or "
            "'namespace/repo_name': '/path/does-not-exist'.",
        ),
    ),
    rule(
        "arch_unsupported",
        Kind.STARTUP_FAILURE,
        r"architectures? \[[^\]]*\] (?:are|is) not supported|are not supported for now",
        hint="vLLM has no implementation of config.json's `architectures`: upgrade vLLM or serve a supported "
        "model.",
        examples=("Value error, Model architectures ['FooBarForCausalLM'] are not supported for now.",),
    ),
    # In the public reports this is nearly always a transformers release older than the model.
    rule(
        "transformers_too_old",
        Kind.VERSION_MISMATCH,
        r"has model type [`'\"]?[\w.-]+[`'\"]? but Transformers does not recognize|does not recognize this "
        r"architecture",
        hint="The installed transformers does not know this model_type: upgrade transformers in the engine "
        "venv (or vLLM, which pins it); if model_type in config.json is a typo, fix it.",
        examples=(
            "Value error, The checkpoint you are trying to load has model type `glm4v_moe` but Transformers does "
            "not recognize this architecture.",
        ),
    ),
    rule(
        "model_type_unknown",
        Kind.STARTUP_FAILURE,
        r"Unrecognized model in|Should have a `model_type` key|Error parsing config for",
        hint="config.json's model_type is unknown to the installed transformers: fix config.json or upgrade "
        "transformers in the engine venv.",
        examples=(
            "Error parsing config for DIR: The checkpoint you are trying to load has model type `foobar`",
        ),
    ),
    rule(
        "tokenizer_missing",
        Kind.STARTUP_FAILURE,
        r"Couldn't instantiate the backend tokenizer|Can't load tokenizer|Tokenizer class \w+ does not exist",
        hint="The tokenizer files are missing or unreadable: copy tokenizer.json and tokenizer_config.json "
        "from "
        "the model repository.",
        examples=("ValueError: Couldn't instantiate the backend tokenizer from one of:",),
    ),
    rule(
        "model_files_missing",
        Kind.STARTUP_FAILURE,
        r"does not appear to have a file named|Can't load (?:the )?config|No model weights found|"
        r"Cannot find any model weights|No such file or directory.{0,200}(?:config\.json|\.safetensors|"
        r"tokenizer)|"
        r"FileNotFoundError.{0,200}(?:config\.json|\.safetensors|tokenizer)",
        hint="A model file is missing: the folder needs config.json, the weights and the tokenizer files.",
        examples=("OSError: /models/x does not appear to have a file named config.json.",),
    ),
    rule(
        "weights_corrupt",
        Kind.STARTUP_FAILURE,
        r"SafetensorError|SafetensorHeaderError|Error while deserializing header|HeaderTooLarge|"
        r"MetadataIncompleteBuffer|invalid load key|PytorchStreamReader failed",
        hint="A weight file is corrupt, truncated or only a Git LFS pointer: download it again.",
        examples=("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",),
    ),
    rule(
        "max_model_len_invalid",
        Kind.STARTUP_FAILURE,
        r"User-specified max_model_len \(\d+\) is greater than|greater than the derived max_model_len",
        hint="--max-model-len is larger than the model's max_position_embeddings: lower CHAT_MAX_MODEL_LEN.",
        examples=(
            "ValueError: User-specified max_model_len (200000) is greater than the derived max_model_len",
        ),
    ),
    rule(
        "bad_argument",
        Kind.STARTUP_FAILURE,
        r"error: unrecognized arguments:|error: argument --?[\w-]+|error: the following arguments are "
        r"required",
        hint="vLLM rejected a command-line argument: compare the flags with `python -m "
        "vllm.entrypoints.openai.api_server --help`.",
        examples=("api_server.py: error: unrecognized arguments: --enable-moe",),
    ),
    rule(
        "engine_start_timeout",
        Kind.STARTUP_FAILURE,
        r"Timed out waiting for engines? (?:core )?(?:processes )?to|Did not receive response from front-end",
        role="weak",
        hint="The engine process never reported ready: look above for its error, or for a hang while "
        "loading.",
        examples=("TimeoutError: Timed out waiting for engines to send initial message on input socket.",),
    ),
    rule(
        "config_invalid",
        Kind.STARTUP_FAILURE,
        r"validation errors? for (?:ModelConfig|EngineArgs|VllmConfig|CacheConfig|SchedulerConfig|"
        r"ParallelConfig)|Error in inspecting model architecture",
        role="weak",
        hint="vLLM rejected the model or engine configuration: the next lines say which value.",
        examples=("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",),
    ),
    # --- memory ---
    rule(
        "kv_cache_too_small",
        Kind.OUT_OF_MEMORY,
        r"max seq len \(\d+\) is larger than the maximum number of tokens that can be stored in KV cache|"
        r"larger than the available KV cache memory|estimated maximum model length is",
        hint="The KV cache cannot hold one max-length sequence: lower CHAT_MAX_MODEL_LEN or give the cache "
        "more memory (--gpu-memory-utilization, VLLM_CPU_KVCACHE_SPACE).",
        examples=(
            "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can "
            "be "
            "stored in KV cache (3664).",
        ),
    ),
    rule(
        "no_cache_blocks",
        Kind.OUT_OF_MEMORY,
        r"No available memory for the cache blocks|# GPU blocks: 0\b|KV cache size: 0 tokens|"
        r"Insufficient memory for (?:the )?KV cache|not enough (?:memory|space) for (?:the )?KV cache",
        hint="Nothing is left for the KV cache after loading the weights: raise --gpu-memory-utilization "
        "(GPU) "
        "or VLLM_CPU_KVCACHE_SPACE (CPU), or serve a smaller model.",
        examples=(
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`",
        ),
    ),
    rule(
        "gpu_oom",
        Kind.OUT_OF_MEMORY,
        r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|(?:HIP|NPU|XPU|MPS) out of memory|"
        r"out of memory on device|CUBLAS_STATUS_ALLOC_FAILED|CUDA driver error: out of memory|"
        r"cudaErrorMemoryAllocation",
        hint="The GPU ran out of memory: stop other GPU processes or lower --gpu-memory-utilization, "
        "--max-model-len or --max-num-seqs.",
        examples=("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.63 GiB",),
    ),
    rule(
        "host_oom",
        Kind.OUT_OF_MEMORY,
        r"Cannot allocate memory|\[Errno 12\]|std::bad_alloc|(?:^|\s)MemoryError\b|"
        r"DefaultCPUAllocator: (?:can't|not enough memory)|not enough memory: you tried to allocate|"
        r"ray-oom-prevention|killed due to the node running low on memory|Memory on the node .{0,80} was \d",
        hint="The machine ran out of RAM: lower VLLM_CPU_KVCACHE_SPACE (CHAT_KV_CACHE_GIB) or the model "
        "size, "
        "or free memory.",
        examples=("RuntimeError: unable to mmap 16933256392 bytes from file: Cannot allocate memory (12)",),
    ),
    rule(
        "oom_killer",
        Kind.OUT_OF_MEMORY,
        r"Out of memory: Killed process|oom-kill|invoked oom-killer|oom_reaper|OOMKilled|"
        r"(?:killed )?by (?:the )?OOM killer",
        hint="The kernel's OOM killer ended vLLM: reduce KV cache, --max-num-seqs or model size, or add RAM.",
        examples=("Out of memory: Killed process 4242 (python) total-vm:30000000kB",),
    ),
    rule(
        "killed",
        Kind.OUT_OF_MEMORY,
        r"^\s*Killed\s*$|\d+\s+Killed\s+\S*(?:python|vllm)",
        role="weak",
        case=True,
        hint="The process received SIGKILL, usually from the OOM killer: check `dmesg | grep -i oom`.",
        examples=("Killed", "./serve.sh: line 3:  4242 Killed                  python -m vllm.entrypoints"),
    ),
    # --- port ---
    rule(
        "port_in_use",
        Kind.PORT_IN_USE,
        r"\[Errno 98\]|\[WinError 10048\]|EADDRINUSE|address already in use|"
        r"error while attempting to bind on address|port have been bound already|Failed to bind the IP port",
        hint="Another process holds the port: stop it (`ss -ltnp | grep :PORT`) or set CHAT_PORT to a free "
        "port.",
        examples=("OSError: [Errno 98] Address already in use",),
    ),
    # --- builds that do not fit together ---
    rule(
        "undefined_symbol",
        Kind.VERSION_MISMATCH,
        r"undefined symbol|Symbol not found: |cannot import name '\w+' from '(?:transformers|torch|vllm|"
        r"huggingface_hub|tokenizers)",
        hint="Compiled kernels do not match the installed torch: reinstall vllm with its pinned torch in a "
        "fresh venv.",
        examples=(
            "ImportError: /x/vllm/_C.abi3.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
        ),
    ),
    rule(
        "no_kernel_image",
        Kind.VERSION_MISMATCH,
        r"no kernel image is available|CUDA error: invalid device function|"
        r"not compatible with the current PyTorch installation",
        hint="This build has no kernels for this GPU: install a vLLM/torch build made for its architecture.",
        examples=("RuntimeError: CUDA error: no kernel image is available for execution on the device",),
    ),
    rule(
        "driver_too_old",
        Kind.VERSION_MISMATCH,
        r"NVIDIA driver on your system is too old|CUDA driver version is insufficient|"
        r"forward compatibility was attempted on non supported HW|Found no NVIDIA driver|"
        r"Failed to infer device type|No CUDA GPUs are available|Torch not compiled with CUDA enabled|"
        r"No platform detected, vLLM is running on UnspecifiedPlatform|"
        r"unsupported display driver / cuda driver combination|\bError 803\b",
        hint="The CUDA build does not fit this machine's driver or hardware: update the NVIDIA driver, or on "
        "a "
        "CPU-only machine install vllm-cpu.",
        examples=(
            "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found 11040).",
        ),
    ),
    rule(
        "cpu_attention_unsupported",
        Kind.VERSION_MISMATCH,
        r"Unsupported CPU attention configuration",
        hint="This vLLM CPU build has no attention kernel for the model's head_dim: serve a model with a "
        "supported head size (e.g. 64 or 128).",
        examples=("RuntimeError: Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0",),
    ),
    rule(
        "torch_extension_mismatch",
        Kind.VERSION_MISMATCH,
        r"operator [\w:]+ does not exist|Could not load this library: \S*(?:torchaudio|torchvision|"
        r"torchcodec)",
        hint="CUDA builds of torchvision/torchaudio/torchcodec sit next to a CPU torch: "
        "`pip uninstall -y torchvision torchaudio torchcodec triton` in the engine venv.",
        examples=("RuntimeError: operator torchvision::nms does not exist",),
    ),
    rule(
        "glibc_mismatch",
        Kind.VERSION_MISMATCH,
        r"GLIBC(?:XX)?_[\d.]+['`]? not found",
        hint="The binary wheel needs a newer C library than this system has: use a newer OS image or build.",
        examples=("ImportError: /lib64/libc.so.6: version `GLIBC_2.32' not found",),
    ),
    rule(
        "vllm_dist_missing",
        Kind.VERSION_MISMATCH,
        r"No package metadata was found for vllm",
        hint="vllm-cpu's `vllm serve` entry point cannot find the 'vllm' distribution: start the server with "
        "`python -m vllm.entrypoints.openai.api_server` instead.",
        examples=("importlib.metadata.PackageNotFoundError: No package metadata was found for vllm",),
    ),
    rule(
        "vllm_c_import",
        Kind.VERSION_MISMATCH,
        r"Failed to import from vllm\._C|No module named ['\"]?vllm\._C|vllm/_C[\w.]*\.so|"
        r"_OpNamespace'? '_C\w*' object has no attribute|torch\.ops\._C\w*\.\w+ .{0,20}not (?:found|available)",
        role="weak",
        hint="vLLM's compiled extension did not load: on a CPU-only machine install vllm-cpu, elsewhere "
        "reinstall vllm for this torch and CUDA.",
        examples=(
            "WARNING 10-10 10:22:05 _custom_ops.py:18] Failed to import from vllm._C with ImportError",
        ),
    ),
    rule(
        "cuda_error",
        Kind.VERSION_MISMATCH,
        r"CUDA error:|CUDA kernel errors might be asynchronously reported|CUBLAS_STATUS_|cudaError\w+",
        role="weak",
        hint="A CUDA call failed: check that driver, CUDA build and vLLM belong together; rerun with "
        "CUDA_LAUNCH_BLOCKING=1 to see where.",
        examples=("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",),
    ),
    # A fault inside a kernel is a bug of the engine or the model's kernels, not of the build: more specific
    # than cuda_error (it states the phase). No kernel runs before the model is loaded, so in a log that shows
    # no loading (an excerpt without markers reads as boot) a kernel fault happened while serving.
    rule(
        "cuda_fault_starting",
        Kind.STARTUP_FAILURE,
        _KERNEL_FAULT,
        phases=frozenset({Phase.LOADING}),
        hint="A GPU kernel faulted during start-up (profiling or graph capture): retry with --enforce-eager "
        "and another attention backend; check that driver, CUDA and torch belong together.",
        examples=("RuntimeError: CUDA error: an illegal memory access was encountered",),
    ),
    rule(
        "cuda_fault_serving",
        Kind.ENGINE_ERROR,
        _KERNEL_FAULT,
        phases=SERVING | {Phase.BOOT},
        hint="A GPU kernel faulted while serving: retry with --enforce-eager and another attention backend; "
        "if one request triggers it every time, report it with CUDA_LAUNCH_BLOCKING=1.",
        examples=("RuntimeError: CUDA error: an illegal memory access was encountered",),
    ),
    rule(
        "trust_remote_code_needed",
        Kind.STARTUP_FAILURE,
        r"contains custom code which must be executed|Please pass the argument `trust_remote_code=True`|"
        r"consider setting `trust_remote_code=True`|"
        r"requires you to execute the (?:configuration|modeling) file",
        hint="The model ships its own code: review it, then start vLLM with --trust-remote-code (the app "
        "asks for confirmation first).",
        examples=(
            "The repository for TheBloke/Nous-Capybara-34B-AWQ contains custom code which must be executed to "
            "correctly load the model.",
        ),
    ),
    rule(
        "model_server_failed_to_start",
        Kind.STARTUP_FAILURE,
        r"Failed to (?:launch|start|load) (?:the )?model(?: server)?\b",
        role="weak",
        hint="The serving framework could not start the model; the reason is in the same line or above it.",
        examples=("kserve ERROR [__main__.py:<module>():254] Failed to start model server: integer division",),
    ),
    rule(
        "gpu_capability_too_low",
        Kind.VERSION_MISMATCH,
        r"Min(?:imum)? capability: \d+|not supported (?:for|on) (?:the current|this) GPU|"
        r"compute capability (?:of )?\d+\.?\d* (?:is )?(?:not supported|too low|required)|"
        r"requires (?:a )?(?:GPU|device) with compute capability|only supported on GPUs with compute capability",
        hint="The GPU is too old for this dtype, quantization or kernel: use another dtype (--dtype float16) or "
        "quantization, or a newer GPU.",
        examples=(
            "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', "
            "'Current capability: 70.')",
        ),
    ),
    rule(
        "cuda_toolkit_mismatch",
        Kind.VERSION_MISMATCH,
        r"detected CUDA version \(?[\d.]+\)? mismatches the version that was used to compile PyTorch|"
        r"Failed building wheel for vllm|CUDA version mismatch",
        hint="The CUDA toolkit does not match the one torch was built with: install the vLLM wheel built for "
        "your torch/CUDA instead of building it, or install the matching toolkit.",
        examples=(
            "RuntimeError: The detected CUDA version (11.8) mismatches the version that was used to compile "
            "PyTorch (12.1). Please make sure to use the same CUDA versions.",
        ),
    ),
    rule(
        "extension_built_for_other_torch",
        Kind.VERSION_MISMATCH,
        r"can't load C\+\+/CUDA extensions|was built for:?\s*$|built for PyTorch \S+ .{0,40}you have",
        role="weak",
        hint="An extension was built for another torch/CUDA/Python: reinstall it to match the installed torch.",
        examples=("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",),
    ),
    rule(
        "gpu_free_memory_below_utilization",
        Kind.OUT_OF_MEMORY,
        r"Free memory on device .{0,80} is less than desired GPU memory utilization|"
        r"less than desired GPU memory utilization",
        hint="Other processes hold GPU memory: free it or lower --gpu-memory-utilization to the free share.",
        examples=(
            "ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory "
            "utilization (0.9, 3.6 GiB).",
        ),
    ),
    # Conditions beyond the text: a KeyError naming a weight, raised while weights are loaded, means the
    # checkpoint's tensor names are not the ones this vLLM maps (another quantization format or revision).
    rule(
        "weight_name_unmapped",
        Kind.STARTUP_FAILURE,
        r"layer|expert|weight|bias|scale|proj|embed",
        exception_types=("KeyError",),
        raised_in=("model_loader", "model_executor/models/", "weight_utils", "load_weights"),
        hint="The checkpoint holds a tensor this vLLM does not map: its quantization format or revision does "
        "not match what this vLLM version supports; use a checkpoint made for it, or another vLLM version.",
        examples=("KeyError: 'model.layers.0.mlp.experts.w13_weight'",),
    ),
)
