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
from chainlit_app.i18n import Msg

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
        return passed("port", Msg("doctor.port.pass.2"))
    try:
        infos = socket.getaddrinfo(cfg.host, cfg.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return failed("port", Kind.PORT_IN_USE, Msg("doctor.port.msg.1", host=cfg.host, strerror=exc.strerror),
                      Msg("doctor.port.fix.1"))
    family, _, _, _, address = infos[0]
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except OSError as exc:
        return failed(
            "port",
            Kind.PORT_IN_USE,
            Msg(
                "doctor.port.msg.2",
                host=cfg.host,
                port=cfg.port,
                error=exc.strerror or exc,
                owner=_port_owner(cfg.port),
            ),
            Msg("doctor.port.fix.2"),
        )
    return passed("port", Msg("doctor.port.pass.1", host=cfg.host, port=cfg.port))


def check_ram(need: MemoryNeed, available: int, cfg: PreflightConfig) -> Check:
    weights = Msg("doctor.ram.weights", gib=f"{need.weights / GIB:.2f}", note=need.note) if need.weights else (
        Msg("doctor.ram.weights_unknown"))
    parts = Msg("doctor.ram.parts_cpu", weights=weights, kv_gib=f"{need.kv / GIB:.2f}",
                overhead_gib=f"{need.overhead / GIB:.1f}")
    if cfg.on_gpu:
        parts = Msg("doctor.ram.parts_gpu", weights_gib=f"{need.weights / GIB:.2f}",
                    overhead_gib=f"{need.overhead / GIB:.1f}")
    message = Msg("doctor.ram.pass", total_gib=f"{need.total / GIB:.1f}", parts=parts,
                  available_gib=f"{available / GIB:.1f}")
    fix = Msg("doctor.ram.fix")
    # Block only when the weights and the KV cache alone cannot fit: the process overhead is an estimate
    # and "available" moves with whatever else runs, so a tight fit is a warning, not a refusal.
    if need.weights + need.kv > available:
        return failed("ram", Kind.OUT_OF_MEMORY, Msg("doctor.ram.too_little", message=message), fix)
    if need.total > 0.9 * available:
        return warned("ram", Kind.OUT_OF_MEMORY, Msg("doctor.ram.tight", message=message), fix)
    return passed("ram", message)


def check_kv_cache(dims: Dims | None, cfg: PreflightConfig) -> Check:
    """CPU: VLLM_CPU_KVCACHE_SPACE (CHAT_KV_CACHE_GIB) must hold one sequence of CHAT_MAX_MODEL_LEN tokens."""
    if dims is None:
        return passed("kv_cache", Msg("doctor.kv_cache.pass.2"))
    width = TORCH_DTYPE_BYTES.get(cfg.serve_dtype.lower(), 2)
    per_token = dims.kv_bytes_per_token(width)
    space = cfg.kv_cache_gib * GIB
    capacity = space // per_token
    formula = (
        f"{per_token / 1024:.1f} KiB/token = {dims.layers} layers x 2 x {dims.kv_heads} kv heads x "
        f"{dims.head_dim} head_dim x {width} bytes"
    )
    if capacity < cfg.max_model_len:
        need_gib = math.ceil(cfg.max_model_len * per_token / GIB)
        return failed(
            "kv_cache",
            Kind.OUT_OF_MEMORY,
            Msg(
                "doctor.kv_cache.msg.1",
                kv_cache_gib=cfg.kv_cache_gib,
                capacity=f"{capacity:,}",
                formula=formula,
                max_model_len=cfg.max_model_len,
            ),
            Msg("doctor.kv_cache.fix.1", gib=need_gib, capacity=capacity),
        )
    return passed(
        "kv_cache",
        Msg(
            "doctor.kv_cache.pass.1",
            kv_cache_gib=cfg.kv_cache_gib,
            capacity=f"{capacity:,}",
            formula=formula,
            chats=capacity // cfg.max_model_len,
        ),
    )


def check_gpu_memory(gpu: tuple[int, int], weight_bytes: int | None, dims: Dims | None, cfg: PreflightConfig) -> Check:
    """vLLM takes gpu_memory_utilization x total; it refuses when less than that is free."""
    total, free = gpu[0] * MIB, gpu[1] * MIB
    budget = int(total * cfg.gpu_memory_utilization)
    if free < budget:
        return failed(
            "gpu_memory",
            Kind.OUT_OF_MEMORY,
            Msg(
                "doctor.gpu_memory.msg.1",
                free_gib=f"{free / GIB:.1f}",
                total_gib=f"{total / GIB:.1f}",
                gpu_memory_utilization=cfg.gpu_memory_utilization,
                budget_gib=f"{budget / GIB:.1f}",
            ),
            Msg("doctor.gpu_memory.fix.1", share=f"{math.floor(free / total * 100) / 100:.2f}"),
        )
    kv_space = budget - (weight_bytes or 0)
    if dims is not None:
        per_token = dims.kv_bytes_per_token(2)
        if kv_space < per_token * cfg.max_model_len:
            return failed(
                "gpu_memory",
                Kind.OUT_OF_MEMORY,
                Msg(
                    "doctor.gpu_memory.msg.2",
                    budget_gib=f"{budget / GIB:.1f}",
                    weights_gib=f"{(weight_bytes or 0) / GIB:.1f}",
                    kv_gib=f"{max(kv_space, 0) / GIB:.2f}",
                    max_model_len=cfg.max_model_len,
                    kib_per_token=f"{per_token / 1024:.1f}",
                ),
                Msg("doctor.gpu_memory.fix.2"),
            )
    return passed(
        "gpu_memory",
        Msg(
            "doctor.gpu_memory.pass.1",
            free_gib=f"{free / GIB:.1f}",
            total_gib=f"{total / GIB:.1f}",
            budget_gib=f"{budget / GIB:.1f}",
            gpu_memory_utilization=cfg.gpu_memory_utilization,
        ),
    )


def existing_parent(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_disk(data_dir: Path, free: int) -> Check:
    """vLLM and torch compile caches live under the data dir; a full disk breaks start-up oddly."""
    if free < DISK_MIN_FREE:
        return warned(
            "disk",
            Kind.OUT_OF_MEMORY,
            Msg("doctor.disk.msg.1", free_gib=f"{free / GIB:.2f}", data_dir=data_dir),
            Msg("doctor.disk.fix.1"),
        )
    return passed("disk", Msg("doctor.disk.pass.1", free_gib=f"{free / GIB:.1f}", data_dir=data_dir))


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
