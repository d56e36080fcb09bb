"""What this machine has free for the server: the port, RAM, the CPU KV cache, GPU memory, disk.

Numbers in every message (what is needed, by part, and what is available), so a user can see which
setting to turn and by how much.
"""

from __future__ import annotations

import math
import shutil
import socket
from pathlib import Path

import psutil

from chainlit_app.diagnostics.taxonomy import Kind

from .check import Check, PreflightConfig, failed, passed, warned
from .context import Context, spawning, spawning_on_a_seen_gpu, spawning_on_cpu
from .model_shape import GIB, MIB, TORCH_DTYPE_BYTES, Dims, MemoryNeed, memory_need
from .registry import CheckRegistry

DISK_MIN_FREE = 2 * GIB

RESOURCE_CHECKS: CheckRegistry[Context] = CheckRegistry()


def _port_owner(port: int) -> str:
    try:
        for conn in psutil.net_connections(kind="inet"):
            if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
                return f" by pid {conn.pid} ({psutil.Process(conn.pid).name()})"
    except (psutil.Error, OSError):
        pass
    return ""


def check_port(cfg: PreflightConfig) -> Check:
    """Bind like uvicorn does (SO_REUSEADDR): only a listening socket makes the server exit."""
    if cfg.port == 0:
        return passed("port", "CHAT_PORT=0: a free port is picked at spawn")
    try:
        infos = socket.getaddrinfo(cfg.host, cfg.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return failed("port", Kind.PORT_IN_USE, f"CHAT_HOST={cfg.host} does not resolve: {exc.strerror}",
                      "Set CHAT_HOST to 127.0.0.1 (or an address of this machine).")
    family, _, _, _, address = infos[0]
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except OSError as exc:
        return failed(
            "port", Kind.PORT_IN_USE,
            f"{cfg.host}:{cfg.port} cannot be bound: {exc.strerror or exc} (taken{_port_owner(cfg.port)})",
            "Set CHAT_PORT to another port, or CHAT_PORT=0 to pick a free one, or stop the process using it.",
        )
    return passed("port", f"{cfg.host}:{cfg.port} is free")


def check_ram(need: MemoryNeed, available: int, cfg: PreflightConfig) -> Check:
    weights = f"weights {need.weights / GIB:.2f} GiB ({need.note})" if need.weights else "weights not known yet"
    parts = (f"{weights} + KV cache {need.kv / GIB:.2f} GiB (CHAT_KV_CACHE_GIB) + about "
             f"{need.overhead / GIB:.1f} GiB vLLM processes")
    if cfg.on_gpu:
        parts = (f"weights {need.weights / GIB:.2f} GiB while loading + about {need.overhead / GIB:.1f} GiB "
                 "vLLM processes")
    message = f"needs about {need.total / GIB:.1f} GiB RAM ({parts}); {available / GIB:.1f} GiB available"
    fix = ("Free memory (stop other vLLM servers), lower CHAT_KV_CACHE_GIB, keep CHAT_DTYPE=auto/float32 only "
           "for small models (bfloat16 halves the weights on CPUs with AVX512-BF16), or serve a smaller model.")
    # Block only when the weights and the KV cache alone cannot fit: the process overhead is an estimate
    # and "available" moves with whatever else runs, so a tight fit is a warning, not a refusal.
    if need.weights + need.kv > available:
        return failed("ram", Kind.OUT_OF_MEMORY, message + ": the server would be OOM-killed or refuse to start", fix)
    if need.total > 0.9 * available:
        return warned("ram", Kind.OUT_OF_MEMORY, message + ": little headroom; it may be OOM-killed", fix)
    return passed("ram", message)


def check_kv_cache(dims: Dims | None, cfg: PreflightConfig) -> Check:
    """CPU: VLLM_CPU_KVCACHE_SPACE (CHAT_KV_CACHE_GIB) must hold one sequence of CHAT_MAX_MODEL_LEN tokens."""
    if dims is None:
        return passed("kv_cache", "not computed (config lacks the shape numbers)")
    width = TORCH_DTYPE_BYTES.get(cfg.serve_dtype.lower(), 2)
    per_token = dims.kv_bytes_per_token(width)
    space = cfg.kv_cache_gib * GIB
    capacity = space // per_token
    formula = (f"{per_token / 1024:.1f} KiB/token = {dims.layers} layers x 2 x {dims.kv_heads} kv heads x "
               f"{dims.head_dim} head_dim x {width} bytes")
    if capacity < cfg.max_model_len:
        need_gib = math.ceil(cfg.max_model_len * per_token / GIB)
        return failed(
            "kv_cache", Kind.OUT_OF_MEMORY,
            f"the KV cache of {cfg.kv_cache_gib} GiB holds {capacity:,} tokens ({formula}), fewer than "
            f"CHAT_MAX_MODEL_LEN={cfg.max_model_len}: vLLM refuses to start",
            f"Raise CHAT_KV_CACHE_GIB to {need_gib} or lower CHAT_MAX_MODEL_LEN to {capacity}.",
        )
    return passed("kv_cache", f"{cfg.kv_cache_gib} GiB KV cache holds {capacity:,} tokens ({formula}), "
                              f"{capacity // cfg.max_model_len} full-length chats at once")


def check_gpu_memory(gpu: tuple[int, int], weight_bytes: int | None, dims: Dims | None,
                     cfg: PreflightConfig) -> Check:
    """vLLM takes gpu_memory_utilization x total; it refuses when less than that is free."""
    total, free = gpu[0] * MIB, gpu[1] * MIB
    budget = int(total * cfg.gpu_memory_utilization)
    if free < budget:
        return failed(
            "gpu_memory", Kind.OUT_OF_MEMORY,
            f"GPU 0 has {free / GIB:.1f} GiB free of {total / GIB:.1f} GiB; CHAT_GPU_MEMORY_UTILIZATION="
            f"{cfg.gpu_memory_utilization} asks for {budget / GIB:.1f} GiB: vLLM refuses to start",
            f"Lower CHAT_GPU_MEMORY_UTILIZATION to {math.floor(free / total * 100) / 100:.2f} or less, "
            "or free the GPU.",
        )
    kv_space = budget - (weight_bytes or 0)
    if dims is not None:
        per_token = dims.kv_bytes_per_token(2)
        if kv_space < per_token * cfg.max_model_len:
            return failed(
                "gpu_memory", Kind.OUT_OF_MEMORY,
                f"{budget / GIB:.1f} GiB budget minus {(weight_bytes or 0) / GIB:.1f} GiB weights leaves "
                f"{max(kv_space, 0) / GIB:.2f} GiB KV cache, less than CHAT_MAX_MODEL_LEN={cfg.max_model_len} tokens "
                f"at {per_token / 1024:.1f} KiB/token",
                "Raise CHAT_GPU_MEMORY_UTILIZATION, lower CHAT_MAX_MODEL_LEN, or use a GPU with more memory.",
            )
    return passed("gpu_memory", f"GPU 0: {free / GIB:.1f} GiB free of {total / GIB:.1f} GiB, budget "
                                f"{budget / GIB:.1f} GiB at CHAT_GPU_MEMORY_UTILIZATION={cfg.gpu_memory_utilization}")


def existing_parent(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_disk(data_dir: Path, free: int) -> Check:
    """vLLM and torch compile caches live under the data dir; a full disk breaks start-up oddly."""
    if free < DISK_MIN_FREE:
        return warned(
            "disk", Kind.OUT_OF_MEMORY,
            f"only {free / GIB:.2f} GiB free under {data_dir} (caches for vLLM and torch.compile go there)",
            "Free disk space, or set CHAT_DATA_DIR to a folder on a disk with a few GiB free.",
        )
    return passed("disk", f"{free / GIB:.1f} GiB free under {data_dir}")

# ------------------------------------------------------------------------------------------------
# Registration: report order, and what each check needs from the context
# ------------------------------------------------------------------------------------------------


@RESOURCE_CHECKS.register("port", applies=spawning)
def _port(ctx: Context) -> Check:
    return check_port(ctx.cfg)


@RESOURCE_CHECKS.register("ram", applies=spawning)
def _ram(ctx: Context) -> Check:
    """Runs without a config too: a hub model not downloaded yet still needs its KV cache and processes."""
    weight_bytes, note = ctx.serving_weights
    return check_ram(memory_need(ctx.cfg, weight_bytes, note), psutil.virtual_memory().available, ctx.cfg)


@RESOURCE_CHECKS.register("kv_cache", needs=("config",), applies=spawning_on_cpu)
def _kv_cache(ctx: Context) -> Check:
    """Needs the config: a hub model not downloaded yet has no shape to compute with."""
    return check_kv_cache(ctx.dims, ctx.cfg)


@RESOURCE_CHECKS.register("gpu_memory", applies=spawning_on_a_seen_gpu)
def _gpu_memory(ctx: Context) -> Check:
    return check_gpu_memory(ctx.gpus[0], ctx.serving_weights[0], ctx.dims, ctx.cfg)


@RESOURCE_CHECKS.register("disk", applies=spawning)
def _disk(ctx: Context) -> Check:
    return check_disk(ctx.cfg.data_dir, shutil.disk_usage(existing_parent(ctx.cfg.data_dir)).free)
