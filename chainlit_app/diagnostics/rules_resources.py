"""Start-up rules about what the machine lacks: memory (GPU, host, KV cache) and a free port.

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import STARTING, Rule, rule
from .taxonomy import Kind

RESOURCE_RULES: tuple[Rule, ...] = (
    # --- memory ---
    rule(
        "kv_cache_too_small",
        Kind.OUT_OF_MEMORY,
        r"max seq len \(\d+\) is larger than the maximum number of tokens that can be stored in KV cache|"
        r"larger than the available KV cache memory|estimated maximum model length is",
        hint=Msg("rule.kv_cache_too_small"),
        examples=(
            "ValueError: The model's max seq len (4096) "
            "is larger than the maximum number of tokens that can be stored in KV cache (3664).",
        ),
    ),
    rule(
        "no_cache_blocks",
        Kind.OUT_OF_MEMORY,
        r"No available memory for the cache blocks|# (?:GPU|cuda|npu|xpu|hpu) blocks: 0\b|KV cache size: 0 tokens|"
        r"Insufficient memory for (?:the )?KV cache|not enough (?:memory|space) for (?:the )?KV cache|"
        # the memory left for the KV cache printed as a negative number: the weights took more than the budget
        r"\bKV cache(?: memory)?\W{0,3}\s*(?:[:=]|is)\s*-\d",
        hint=Msg("rule.no_cache_blocks"),
        examples=(
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`",
            "Available KV cache memory: -0.87 GiB",  # vllm-ascend #9372
            # V0's memory profile (vLLM #13882, an 8 GB card): the budget is spent before any KV cache
            "INFO 02-26 09:54:05 worker.py:267] model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch "
            "activation peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is -1.05GiB.",
            "INFO 02-26 09:54:05 executor_base.py:111] # cuda blocks: 0, # CPU blocks: 4681",
        ),
    ),
    rule(
        "gpu_oom",
        Kind.OUT_OF_MEMORY,
        r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|(?:HIP|NPU|XPU|MPS) out of memory|"
        r"out of memory on device|CUBLAS_STATUS_ALLOC_FAILED|CUDA driver error: out of memory|"
        r"cudaErrorMemoryAllocation|"
        # other servers' words for it: llama.cpp/Ollama (ggml's CUDA allocator), TGI's prefill warm-up
        r"\bcuda\w*Malloc\w* failed: out of memory|unable to allocate \w* ?buffer|failed to allocate \w+ buffer|"
        r"Not enough memory to handle \d+ (?:prefill )?tokens|"
        # Apple's Metal (vllm-metal, MLX): a command buffer the GPU could not back with memory
        r"kIOGPUCommandBufferCallbackErrorOutOfMemory|\[METAL\] Command buffer execution failed: Insufficient Memory|"
        # XLA on a TPU (vLLM's TPU backend, JAX): its status for memory, in its allocator's words
        r"RESOURCE_EXHAUSTED:.{0,120}?(?:[Oo]ut of memory|Attempting to reserve|[Ee]rror allocating)|"
        r"Attempting to reserve [\d.]+[KMGT]i?B? at the bottom of memory",
        hint=Msg("rule.gpu_oom"),
        examples=(
            # vllm-metal #274: guidellm's load on a Mac, the engine core aborts
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
            "execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.63 GiB",
            # AI-Hypercomputer/tpu-recipes #151: gpt-oss on a TPU, --gpu-memory-utilization 0.93
            "RESOURCE_EXHAUSTED: Error loading program 'jit__multi_slice': Attempting to reserve 6.14G at the bottom "
            "of memory. That was not possible.",
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: "
            "out of memory",  # llama.cpp's allocator, as Ollama's runner prints it
        ),
    ),
    rule(
        "host_oom",
        Kind.OUT_OF_MEMORY,
        r"Cannot allocate memory|\[Errno 12\]|std::bad_alloc|(?:^|\s)MemoryError\b|"
        r"DefaultCPUAllocator: (?:can't|not enough memory)|not enough memory: you tried to allocate|"
        r"ray-oom-prevention|killed due to the node running low on memory|Memory on the node .{0,80} was \d|"
        # a server's own check before it loads a model (Ollama): the figure it needs beside the figure it has
        r"\brequires more (?:system |host )?memory \(\d[\d.]* ?[KMGT]i?B\) than (?:is )?available \(\d",
        hint=Msg("rule.host_oom"),
        examples=("RuntimeError: unable to mmap 16933256392 bytes from file: Cannot allocate memory (12)",
                  # Ollama #10920 (after the pull), Continue #9668 (the same words in a 500's body)
                  "Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)"),
    ),
    rule(
        "windows_paging_file_too_small",
        Kind.OUT_OF_MEMORY,
        # Windows' commit limit, by its code whatever the language (ERROR_COMMITMENT_LIMIT, 1455: "The paging file
        # is too small for this operation to complete", 页面文件太小，无法完成操作): torch mapping its DLLs or a
        # model's weights on a Windows machine (a client, a notebook) ran out of virtual memory
        r"\[WinError 1455\]",
        hint=Msg("rule.windows_paging_file_too_small"),
        examples=(  # zbf1991/WeCLIP #5 and pytorch #59904, as posted
            "OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading \"D:\\Anaconda3\\envs\\wssam\\lib\\"
            "site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll\" or one of its dependencies.",
            "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
            "\"C:\\Users\\Mohamed\\anaconda3\\envs\\3days\\lib\\site-packages\\torch\\lib\\"
            "caffe2_module_test_dynamic.dll\" o",
        ),
    ),
    # --- space: shared memory, then disk (the same errno; shared memory first, it is the more specific) ---
    # Docker gives a container 64 MB of /dev/shm; NCCL's segments between the GPUs of one node and torch's
    # shared tensors live there. vLLM's start with tensor parallelism is where it runs out.
    rule(
        "shared_memory_exhausted",
        Kind.STARTUP_FAILURE,
        r"Error while creating shared memory segment|NCCL WARN Call to posix_fallocate failed|"
        r"/dev/shm\S*.{0,80}No space left on device|No space left on device.{0,80}/dev/shm|"
        r"unable to write to file </torch_[\d_]+>.{0,20}No space left on device",
        hint=Msg("rule.shared_memory_exhausted"),
        phases=STARTING,
        examples=(
            "gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on "
            "device",  # NVIDIA/nccl #290 (a container's 64 MB /dev/shm)
            "RuntimeError: unable to write to file </torch_739_144252761_4>: No space left on device (28)",
            # logicalclocks/hopsworks #1557 (torch's shared tensors in a 64 MB /dev/shm)
        ),
    ),
    rule(
        "disk_full",
        Kind.STARTUP_FAILURE,
        # not a watcher's `[Errno 28] inotify watch limit reached` (uvicorn --reload, watchfiles): no disk is full
        r"No space left on device|\[Errno 28\](?!\s*inotify)|\bkind: StorageFull\b|ENOSPC\b|Disk quota exceeded|"
        r"\[Errno 122\]",
        hint=Msg("rule.disk_full"),
        phases=STARTING,
        examples=(
            # aws/sagemaker-huggingface-inference-toolkit #80 (weights copied to a full disk)
            "OSError: [Errno 28] No space left on device: '/opt/ml/model/pytorch_model-00001-of-00005.bin' -> "
            "'/.sagemaker/mms/models/model/pytorch_model-00001-of-00005.bin'",
            "safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: StorageFull, "
            'message: "No space left on device" })',  # LlamaFactory #5155
            "[Errno 28] No space left on device: '~/.cache/huggingface/hub/models--lemonaddie--geowizard'",
            # kijai/ComfyUI-Geowizard #10 (the hub's cache on a full disk)
        ),
    ),
    # Ray's notice of a dead worker lists what may have killed it ('There are some potential root causes. (1)
    # The process is killed by SIGKILL by OOM killer …'): a list of guesses, printed for any death, so a
    # symptom. A cause the same log names (an NCCL watchdog's timeout in the worker that died) wins; alone, it
    # still names out of memory, the first and commonest of its guesses. Before oom_killer, which its words match.
    rule(
        "ray_worker_died_guesses_oom",
        Kind.OUT_OF_MEMORY,
        r"potential root causes\. \(1\) The process is killed by SIGKILL by OOM killer",
        role="weak",
        hint=Msg("rule.oom_killer"),
        examples=(
            # vLLM #1846: the worker whose first all-reduce hung for 30 minutes
            "2023-11-30 10:19:23,769 WARNING worker.py:2074 -- A worker died or was killed while executing a task by "
            "an unexpected system error. … Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly "
            "exits with a connection error code 2. End of file. There are some potential root causes. (1) The "
            "process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called.",
        ),
    ),
    rule(
        "oom_killer",
        Kind.OUT_OF_MEMORY,
        r"Out of memory: Killed process|oom-kill|invoked oom-killer|oom_reaper|OOMKilled|"
        r"(?:killed )?by (?:the )?OOM killer",
        hint=Msg("rule.oom_killer"),
        examples=("Out of memory: Killed process 4242 (python) total-vm:30000000kB",),
    ),
    rule(
        "killed",
        Kind.OUT_OF_MEMORY,
        r"^\s*Killed\s*$|\d+\s+Killed\s+\S*(?:python|vllm)",
        role="weak",
        case=True,
        hint=Msg("rule.killed"),
        examples=("Killed", "./serve.sh: line 3:  4242 Killed                  python -m vllm.entrypoints"),
    ),
    # --- port ---
    rule(
        "bind_address_unavailable",
        Kind.STARTUP_FAILURE,
        # errno 99 (EADDRNOTAVAIL): the host to listen on is not an address of this machine (an IPv6 '::1'
        # where IPv6 is off, a stale IP); uvicorn prints it with the same words as a port in use
        r"\[Errno (?:99|49)\]|\[WinError 10049\]|cannot assign requested address|EADDRNOTAVAIL",
        hint=Msg("rule.bind_address_unavailable"),
        examples=(
            "ERROR:    [Errno 99] error while attempting to bind on address ('::1', 21002, 0, 0): cannot assign "
            "requested address",  # FastChat #3185
        ),
    ),
    rule(
        "port_in_use",
        Kind.PORT_IN_USE,
        r"\[Errno 98\]|\[WinError 10048\]|EADDRINUSE|address already in use|"
        r"error while attempting to bind on address|port have been bound already|Failed to bind the IP port|"
        # the words of other stacks (HCCL, NCCL, gRPC, Ray): a named port that is taken or cannot be listened on
        r"port\W{0,3}\d*\W{0,3}(?:is )?already (?:in use|occupied|bound)|being used by (?:an)?other process|"
        r"listen on .{0,80}port\W{0,2}\d+\W{0,2} fail|"
        r"\b(?:failed to|could ?n[o']t|unable to|cannot|can't) (?:bind|listen)\b.{0,80}\bport\b|"
        # Go's listener, read by its structure since Windows words it in the system's language (WSAEADDRINUSE:
        # 'Only one usage of each socket address ... is normally permitted', in Turkish in Ollama #8261); the
        # other reasons bind gives in English (a privileged port, an address not on this host) are no match
        r"\blisten tcp[46]? \S*:\d+: bind: (?!permission denied|cannot assign requested address|an attempt was made)",
        hint=Msg("rule.port_in_use"),
        examples=(
            "OSError: [Errno 98] Address already in use",
            "[ERROR] HCCL(60570,):2025-12-04-14:46:07.911.312 [hccl_socket.cc:106] [60570][HcclSocket][Listen] "
            "socket type[0], listen on ip[192.2.2.195] and specific port[16666] fail. Please check the port status "
            "and whether the port is being used by other process.",
            "main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080",  # llama.cpp server
            "Error: listen tcp 127.0.0.1:11434: bind: address already in use",  # Ollama #707
            # Ollama #8261 (Windows, Turkish): the tray app already serves the port
            "Error: listen tcp 127.0.0.1:11434: bind: Normal olarak her yuva adresi (iletişim kuralı/ağ adresi/"
            "bağlantı noktası) için yalnızca bir kullanıma izin veriliyor.",
        ),
    ),
    # tqdm's elapsed column: ten minutes or more spent loading checkpoint shards is storage too slow for the
    # model (a network disk, a cold cache), whatever the shard size; a start-up time-out follows it.
    rule(
        "weight_loading_crawls",
        Kind.SLOW_OR_STALLED,
        r"Loading [\w ]*checkpoint shards:[^\[]*\[(?:\d+:\d{2}|[1-9]\d):\d{2}<",
        role="weak",
        hint=Msg("rule.weight_loading_crawls"),
        examples=("Loading safetensors checkpoint shards:  39% Completed | 24/62 [32:49<18:34, 29.32s/it]",),
    ),
    # the same, counted by a launcher or a start script in minutes and seconds: "[26m 02s elapsed]"
    rule(
        "model_load_elapsed_minutes",
        Kind.SLOW_OR_STALLED,
        r"\bloading\b.{0,40}?[\[(](?:[1-9]\d|\d{3,})m ?\d{1,2}s\b",
        role="weak",
        hint=Msg("rule.model_load_elapsed_minutes"),
        examples=("⠋ Loading model… [26m 02s elapsed]",  # vllm-dgx-spark #3
                  "[2025-12-02 16:53:46] ⏳ Still loading… (26m 2s) - this is normal for large models"),
    ),
)
