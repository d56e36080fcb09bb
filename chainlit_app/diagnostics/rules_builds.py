"""Start-up rules about builds that do not fit together (torch, CUDA, drivers, GPUs), then later additions.

Data only: see `rules.py` for what the fields mean and how the winner is chosen. The rules after the
kernel faults were learnt later and stay at the end of the start-up table although some are about the
model or memory: equally specific rules are tied by table order, so moving them could change a winner.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .phases import Phase
from .rules import SERVING, Rule, rule
from .taxonomy import Kind

# A fault inside a GPU kernel: the same words during loading (start-up) and while serving.
_KERNEL_FAULT = (
    r"illegal memory access|an illegal instruction was encountered|misaligned address|"
    r"device-side assert(?:ion)? triggered|unspecified launch failure|\.cu:\d+: .{0,120}Assertion .{0,200} failed"
)

# An assertion in native code: ggml's macro, and the C library's assert() message ('file.c:12: func: Assertion
# `cond' failed.'); CUDA sources' asserts are kernel faults above
_NATIVE_ASSERT = (
    r"\bGGML_ASSERT\(.{1,200}\) failed|\.(?:c|cc|cpp|cxx|h|hpp):\d+: .{0,160}\bAssertion [`'].{1,200}' failed"
)

BUILD_RULES: tuple[Rule, ...] = (
    rule(
        "undefined_symbol",
        Kind.VERSION_MISMATCH,
        r"undefined symbol|Symbol not found: |cannot import name '\w+' from '(?:transformers|torch|vllm|"
        r"huggingface_hub|tokenizers)|Failed to load shared library|"
        # the tokenizers library reading a tokenizer.json written by a newer version; or handed a BPE's merges as
        # pairs, as transformers releases newer than it write them (`PyMerges`)
        r"did not match any variant of untagged enum ModelWrapper|failed to extract enum field PyMerges::",
        hint=Msg("rule.undefined_symbol"),
        examples=(
            "ImportError: /x/vllm/_C.abi3.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
            "Exception: data did not match any variant of untagged enum ModelWrapper at line 757479 column 3",
            # 6/model-workbench's troubleshooting notes (nightly transformers beside an older tokenizers)
            "TypeError: argument 'merges' failed to extract enum field PyMerges::Merges.0,",
        ),
    ),
    rule(
        "no_kernel_image",
        Kind.VERSION_MISMATCH,
        r"no kernel image is available|CUDA error: invalid device function|"
        r"not compatible with the current PyTorch installation",
        hint=Msg("rule.no_kernel_image"),
        examples=("RuntimeError: CUDA error: no kernel image is available for execution on the device",),
    ),
    rule(
        "driver_too_old",
        Kind.VERSION_MISMATCH,
        r"NVIDIA driver on your system is too old|CUDA driver version is insufficient|"
        r"forward compatibility was attempted on non supported HW|Found no NVIDIA driver|"
        r"No CUDA GPUs are available|Torch not compiled with CUDA enabled|"
        r"unsupported display driver / cuda driver combination|\bError 803\b|"
        # nvidia-container-cli refuses to start an image built for a newer CUDA than the host driver offers
        r"unsatisfied condition: cuda\s*>=|please update your (?:NVIDIA )?driver to a newer version|"
        r"CUDA driver initialization failed",
        hint=Msg("rule.driver_too_old"),
        examples=(
            "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found 11040).",
            "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver "
            "to a newer version, or use an earlier cuda container: unknown.",  # vLLM #5635
        ),
    ),
    rule(
        "cpu_attention_unsupported",
        Kind.VERSION_MISMATCH,
        r"Unsupported CPU attention configuration",
        hint=Msg("rule.cpu_attention_unsupported"),
        examples=("RuntimeError: Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0",),
    ),
    rule(
        "torch_extension_mismatch",
        Kind.VERSION_MISMATCH,
        r"operator [\w:]+ does not exist|Could not load this library: \S*(?:torchaudio|torchvision|"
        r"torchcodec)",
        # torchvision's own warning that its image decoder did not load: only `torchvision.io` is without it
        check=lambda message: "Failed to load image Python extension" not in message,
        hint=Msg("rule.torch_extension_mismatch"),
        examples=("RuntimeError: operator torchvision::nms does not exist",),
    ),
    rule(
        "glibc_mismatch",
        Kind.VERSION_MISMATCH,
        r"GLIBC(?:XX)?_[\d.]+['`]? not found",
        hint=Msg("rule.glibc_mismatch"),
        examples=("ImportError: /lib64/libc.so.6: version `GLIBC_2.32' not found",),
    ),
    rule(
        "vllm_dist_missing",
        Kind.VERSION_MISMATCH,
        r"No package metadata was found for vllm",
        hint=Msg("rule.vllm_dist_missing"),
        examples=("importlib.metadata.PackageNotFoundError: No package metadata was found for vllm",),
    ),
    rule(
        "vllm_c_import",
        Kind.VERSION_MISMATCH,
        r"Failed to import from vllm\._C|No module named ['\"]?vllm\._C|vllm/_C[\w.]*\.so|"
        r"_OpNamespace'? '_C\w*' object has no attribute|torch\.ops\._C\w*\.\w+ .{0,20}not (?:found|available)",
        role="weak",
        hint=Msg("rule.vllm_c_import"),
        examples=(
            "WARNING 10-10 10:22:05 _custom_ops.py:18] Failed to import from vllm._C with ImportError",
        ),
    ),
    # A CUDA call that fails while serving ran before: the warm-up and the requests served so far ran the same
    # kernels, so a build that does not fit would have failed then; what fails under load is the engine
    # (pinned host memory, a workspace, concurrency), not the build. More specific than cuda_error (a phase).
    rule(
        "cuda_error_serving",
        Kind.ENGINE_ERROR,
        # a build that does not fit the GPU says so in its own words, whenever its kernel first runs (a kernel for
        # one shape may first run with a request): those stay cuda_error's; memory that ran out names itself
        # (gpu_oom), in graph capture as while serving
        r"CUDA error: (?!out of memory|no kernel image|invalid device function|the provided PTX|CUDA driver version|"
        r"unsupported (?:PTX|toolchain))|CUBLAS_STATUS_(?!ARCH_MISMATCH)",
        role="weak",
        phases=frozenset({Phase.SERVING}),
        hint=Msg("rule.cuda_error_serving"),
        examples=(
            # vLLM #43473: FlashInfer's decode wrapper pinning host memory under two concurrent image requests
            "torch.AcceleratorError: CUDA error: OS call failed or operation not supported on this OS",
        ),
    ),
    rule(
        "cuda_error",
        Kind.VERSION_MISMATCH,
        r"CUDA error:|CUDA kernel errors might be asynchronously reported|CUBLAS_STATUS_|cudaError\w+",
        role="weak",
        hint=Msg("rule.cuda_error"),
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
        hint=Msg("rule.cuda_fault_starting"),
        examples=("RuntimeError: CUDA error: an illegal memory access was encountered",),
    ),
    rule(
        "cuda_fault_serving",
        Kind.ENGINE_ERROR,
        _KERNEL_FAULT,
        phases=SERVING | {Phase.BOOT},
        hint=Msg("rule.cuda_fault_serving"),
        examples=("RuntimeError: CUDA error: an illegal memory access was encountered",),
    ),
    # an assertion in an engine's native code (ggml's GGML_ASSERT, a C/C++ assert()): the process aborts on an
    # internal state its authors ruled out, whatever the request was; loading a model it is a start-up failure
    rule(
        "native_assertion_starting",
        Kind.STARTUP_FAILURE,
        _NATIVE_ASSERT,
        phases=frozenset({Phase.LOADING}),
        hint=Msg("rule.native_assertion_starting"),
        examples=("llama.cpp/ggml/src/ggml.c:1808: GGML_ASSERT(obj_new) failed",),
    ),
    rule(
        "native_assertion_serving",
        Kind.ENGINE_ERROR,
        _NATIVE_ASSERT,
        phases=SERVING | {Phase.BOOT},
        hint=Msg("rule.native_assertion_serving"),
        examples=(
            # a llama-server fork, minutes into generation after a 200 (Andgihat's turboquant fork, issue 3)
            r"E:\AI-models\llm-server-build\src-njannasch\ggml\src\ggml.c:1808: GGML_ASSERT(obj_new) failed",
            "python3: /src/csrc/allocator.cpp:88: void Pool::release(Block*): Assertion `b->in_use' failed.",
        ),
    ),
    rule(
        "trust_remote_code_needed",
        Kind.STARTUP_FAILURE,
        r"contains custom code (?:which|that) must be executed|Please pass the argument `trust_remote_code=True`|"
        # a wrapper's (GPUStack, a launcher) own words asking for the flag
        r"\bpass (?:the )?(?:\w+ )?(?:argument|parameter|flag|option) `?--?trust[-_]remote[-_]code|"
        r"consider setting `trust_remote_code=True`|"
        r"requires you to execute the (?:configuration|modeling) file",
        hint=Msg("rule.trust_remote_code_needed"),
        examples=(
            "The repository for TheBloke/Nous-Capybara-34B-AWQ contains custom code which must be executed to correctly load the model.",  # noqa: E501
            "The model contains custom code that must be executed to load correctly. If you trust the source, "
            "please pass the backend parameter `--trust-remote-code` to allow custom code to be run.",  # GPUStack
        ),
    ),
    rule(
        "model_server_failed_to_start",
        Kind.STARTUP_FAILURE,
        # an app's or a platform's words for what failed: a symptom, which yields to a decisive rule on the error
        # body it quotes ('Failed to load model: OpenAI API error (400 Bad Request): {"error":{"message":"… default
        # chat template is no longer allowed …"}}', `rules.most_specific`)
        r"Failed to (?:launch|start|load) (?:the )?model(?: server)?\b",
        role="weak",
        hint=Msg("rule.model_server_failed_to_start"),
        examples=("kserve ERROR [__main__.py:<module>():254] Failed to start model server: integer division",),
    ),
    rule(
        "gpu_capability_too_low",
        Kind.VERSION_MISMATCH,
        r"Min(?:imum)? capability: \d+|not supported (?:for|on) (?:the current|this) GPU|"
        r"compute capability (?:of )?\d+\.?\d* (?:is )?(?:not supported|too low|required)|"
        r"requires (?:a )?(?:GPU|device) with compute capability|"
        # torch's words for a kernel the GPU is too old for (`torch._scaled_mm`, FP8); not vLLM's FlashAttention
        # check ("FA2 is only supported on devices with compute capability >= 8"), after which vLLM picks another
        # attention backend and goes on
        r"only supported on (?:GPUs|CUDA devices) with compute capability|"
        r"too old to be supported by the triton|"
        # Triton's LLVM cannot lower fp16 conversions for a GPU below compute capability 7.0 (Pascal: GTX 10xx,
        # P40, P100): the engine dies at the first request that runs such a kernel; float32 runs
        r"Unsupported conversion from f16 to f16|LLVM ERROR: Unsupported rounding mode for conversion|"
        r"only supports? (?:Ampere|Ada|Hopper|Turing|Volta|Blackwell)\b[^.\n]{0,30}(?:or newer|and newer|or later)",
        hint=Msg("rule.gpu_capability_too_low"),
        examples=(
            "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', "
            "'Current capability: 70.')",
            "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
            "[rank0]: RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU "
            "compiler, which is used as the",
            # an FP8 checkpoint on an Ampere GPU (neuralmagic's Llama-3.1-70B-FP8, discussion 2)
            "[rank0]: RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= "
            "9.0 or 8.9, or ROCm MI300+",
            "LLVM ERROR: Unsupported rounding mode for conversion.",  # a GTX 1080 serving with --dtype=half
        ),
    ),
    rule(
        "gpu_newer_than_toolkit",
        Kind.VERSION_MISMATCH,
        # the CUDA toolkit's compilers (ptxas: Triton's bundled one, nvcc) do not know the GPU's architecture: a GPU
        # newer than the toolkit of the build (Blackwell's sm_120 / sm_121 before CUDA 12.8 / 12.9)
        r"Value 'sm_\d+[a-z]?' is not defined for option 'gpu-name'|"
        r"Unsupported gpu architecture '(?:compute|sm)_\d+[a-z]?'",
        hint=Msg("rule.gpu_newer_than_toolkit"),
        examples=(
            "ptxas fatal : Value 'sm_121a' is not defined for option 'gpu-name'",  # MinerU on a DGX Spark (GB10)
            "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
        ),
    ),
    rule(
        "cuda_toolkit_mismatch",
        Kind.VERSION_MISMATCH,
        # torch's build check prints its message over several indented lines: the first may end at "compile"
        r"detected CUDA version \(?[\d.]+\)? mismatches the version that was used to compile\b|"
        r"Failed building wheel for vllm|CUDA version mismatch",
        hint=Msg("rule.cuda_toolkit_mismatch"),
        examples=(
            "RuntimeError: The detected CUDA version (11.8) "
            "mismatches the version that was used to compile PyTorch (12.1). "
            "Please make sure to use the same CUDA versions.",
            # OpenBMB/MiniCPM #44 (pip building a vLLM fork: `RuntimeError:` alone, the message indented below it)
            "      The detected CUDA version (11.8) mismatches the version that was used to compile",
        ),
    ),
    rule(
        "extension_built_for_other_torch",
        Kind.VERSION_MISMATCH,
        r"can't load C\+\+/CUDA extensions|was built for:?\s*$|built for PyTorch \S+ .{0,40}you have",
        role="weak",
        hint=Msg("rule.extension_built_for_other_torch"),
        examples=("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",),
    ),
    rule(
        "gpu_free_memory_below_utilization",
        Kind.OUT_OF_MEMORY,
        r"Free memory on device .{0,80} is less than desired GPU memory utilization|"
        r"less than desired [GC]PU memory utilization|"
        # the same check in vLLM's other words: the CPU backend's node memory, the KV cache's share, the budget
        # left after weights held by another process
        r"(?:Free|Available) memory on (?:device|node) .{0,80} is less than (?:requested memory for kv|"
        r"the engine's budget)|exceed the desired GPU memory utilization",
        hint=Msg("rule.gpu_free_memory_below_utilization"),
        examples=(
            "ValueError: Free memory on device (3.22/4.0 GiB) "
            "on startup is less than desired GPU memory utilization (0.9, 3.6 GiB).",
            # quoted in a public deployment note on vLLM's CPU backend
            "ERROR 06-13 18:37:32 [multiproc_executor.py:890] ValueError: Available memory on node 0 (4.85/18.0 GiB) "
            "on startup is less than desired CPU memory utilization (0.92, 16.56 GiB). On the CPU backend, the "
            "`--gpu-memory-utilization` flag controls the fraction of CPU memory reserved (despite its name).",
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
        hint=Msg("rule.weight_name_unmapped"),
        examples=("KeyError: 'model.layers.0.mlp.experts.w13_weight'",),
    ),
)
