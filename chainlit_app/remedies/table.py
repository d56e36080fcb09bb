"""Remedies as data: for a finding of a kind whose evidence allows a mechanical fix, which launch settings to
change, why, and how to undo it.

A remedy is keyed by finding kind; its `compute` is the predicate on the evidence (and on the launch it would
change) and returns the new values (LaunchSpec field names, see engine/command.py) with the figure they come
from, or None when the finding does not carry what the remedy needs. `safe` remedies may one day be applied
without a click (issue 13's automatic mode); an unsafe one needs a confirmation that states `risk`.
"""

from __future__ import annotations

import json
import math
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chainlit_app.diagnostics.findings import Finding
from chainlit_app.doctor.model_folder import ModelFolder
from chainlit_app.engine.command import LaunchSpec, effective_dtype
from chainlit_app.engine.supervisor import free_port
from chainlit_app.i18n import Msg, localize

from .figures import gpu_free_fraction, kv_fit
from .templates import pick_template

GIB = 1024**3
HALF = {"bfloat16", "bf16", "float16", "fp16", "half"}


@dataclass(frozen=True)
class RemedyContext:
    """What a remedy looks at besides the finding: the launch it would change and this machine."""

    spec: LaunchSpec
    model_dir: Path | None = None
    available_ram: int | None = None  # bytes; None: unknown (the remedies that need it do not apply)
    pick_port: Callable[[str], int] = free_port
    repetition_penalty: float = 1.0  # what the chat's requests send now (a request setting, not a launch one)
    data_dir: Path | None = None  # where a remedy's own files go (a corrected generation config)

    def current(self, name: str) -> Any:
        """The value a remedy would replace: a launch setting, or one the chat's requests carry."""
        return getattr(self.spec, name) if hasattr(self.spec, name) else getattr(self, name)


@dataclass(frozen=True)
class Change:
    overrides: dict[str, Any]
    reason: str  # the figure the values come from, in one sentence
    files: dict[str, str] = field(default_factory=dict)  # path -> text the override needs (written on apply)


Compute = Callable[[Finding, RemedyContext], Change | None]


@dataclass(frozen=True)
class Remedy:
    id: str
    kind: str
    changes: str  # what it changes, as people know it (the vLLM flag or variable)
    why: str
    undo: str
    safe: bool
    compute: Compute
    risk: str = ""  # unsafe remedies: what the confirmation must say


@dataclass(frozen=True)
class Proposal:
    """A remedy computed for one finding: the new values, the launch's values they replace, and why."""

    remedy: Remedy
    finding: Finding
    overrides: dict[str, Any]
    previous: dict[str, Any]
    reason: str
    extra: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # written by OverridesStore.add before the override

    def to_json(self) -> dict[str, Any]:
        r = self.remedy
        return {"id": r.id, "kind": r.kind, "changes": r.changes, "why": localize(r.why), "undo": localize(r.undo),
                "safe": r.safe, "risk": localize(r.risk), "overrides": self.overrides, "previous": self.previous,
                "reason": self.reason,
                "finding": {"kind": self.finding.kind, "line": self.finding.line, "text": self.finding.text}}


# -- the computations ------------------------------------------------------------------------------------------
def fit_max_model_len(finding: Finding, ctx: RemedyContext) -> Change | None:
    fit = kv_fit(finding.text)
    if fit is None or fit.fits <= 0 or fit.fits >= ctx.spec.max_model_len:
        return None
    return Change({"max_model_len": fit.fits},
                  f"{fit.how}: {fit.fits} tokens fit, {fit.asked or ctx.spec.max_model_len} were asked for")


def more_kv_cache(finding: Finding, ctx: RemedyContext) -> Change | None:
    """CPU only (VLLM_CPU_KVCACHE_SPACE), and only when RAM has the extra GiB plus one to spare."""
    fit = kv_fit(finding.text)
    if ctx.spec.on_gpu or fit is None or fit.needed_gib is None or ctx.available_ram is None:
        return None
    gib = math.ceil(fit.needed_gib)
    extra = gib - ctx.spec.kv_cache_gib
    if extra <= 0 or (extra + 1) * GIB > ctx.available_ram:
        return None
    return Change({"kv_cache_gib": gib}, f"{fit.needed_gib:g} GiB KV cache needed; {extra} GiB more of "
                                         f"{ctx.available_ram / GIB:.1f} GiB available RAM")


def lower_gpu_utilization(finding: Finding, ctx: RemedyContext) -> Change | None:
    figures = gpu_free_fraction(finding.text)
    if figures is None:
        return None
    free, total, fraction = figures
    if fraction < 0.05 or fraction >= ctx.spec.gpu_memory_utilization:
        return None
    return Change({"gpu_memory_utilization": fraction}, f"{free:g} of {total:g} GiB free on the GPU")


def port_is_taken(host: str, port: int) -> bool:
    """Bind as uvicorn does (SO_REUSEADDR): only a listening socket makes the server exit."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


# Ports of other parts of a deployment (HCCL/NCCL, ZMQ, torch's TCPStore, KV connectors, workers) are not the
# server's --port: a new --port would not help.
_NOT_THE_SERVER = re.compile(r"hccl|nccl|zmq|tcpstore|mooncake|server socket has failed to listen|DistNetworkError|"
                             r"Failed to bind the IP port|\[rank\d+\]|Worker", re.IGNORECASE)
_BIND_PORT = re.compile(r"bind on address \('[^']*', (\d+)\)")


def other_port(finding: Finding, ctx: RemedyContext) -> Change | None:
    """Only for a fixed port (CHAT_PORT) that is taken right now; port 0 already picks a free one per launch.
    When the line names the port it could not bind, it must be ours."""
    port = ctx.spec.port
    named = _BIND_PORT.search(finding.text)
    if not port or _NOT_THE_SERVER.search(finding.text) or (named and int(named.group(1)) != port):
        return None
    if not port_is_taken(ctx.spec.host, port):
        return None
    new = ctx.pick_port(ctx.spec.host)
    return Change({"port": new}, f"{ctx.spec.host}:{port} is taken; {new} is free now")


_NO_TEMPLATE = re.compile(r"no chat template|default chat template is no longer allowed|chat_template is not set|"
                          r"ChatTemplateResolutionError|POST /v1/chat/completions HTTP/1\.1\" 400", re.IGNORECASE)


def shipped_template(finding: Finding, ctx: RemedyContext) -> Change | None:
    """Only when the template is missing (not broken) and the folder really has none."""
    if ctx.model_dir is None or ctx.spec.chat_template or not _NO_TEMPLATE.search(finding.text):
        return None
    if ModelFolder(ctx.model_dir).chat_template[0] is not None:
        return None
    template, why = pick_template(ctx.model_dir)
    if template is None:
        return None
    return Change({"chat_template": str(template.path)}, f"{template.name} template: {why}")


def float32_on_cpu(finding: Finding, ctx: RemedyContext) -> Change | None:
    served = effective_dtype(ctx.spec.dtype, ctx.spec.on_gpu).lower()
    if ctx.spec.on_gpu or served not in HALF:
        return None
    return Change({"dtype": "float32"}, f"--dtype {served} on a CPU gave garbled output")


PENALTY_FIRST = 1.1  # the measurement: the demo model's worst loop went from 0.13 to 0.7 distinct words
PENALTY_STEP = 0.1
PENALTY_MAX = 1.3  # beyond this, penalised common words make answers odd; the loop is then the model's


def repetition_penalty(finding: Finding, ctx: RemedyContext) -> Change | None:
    """A looping answer: penalise repeated tokens (vLLM's repetition_penalty, sent with each chat request);
    1.1 first, then a step more while below PENALTY_MAX."""
    current = ctx.repetition_penalty
    new = PENALTY_FIRST if current < PENALTY_FIRST else round(current + PENALTY_STEP, 2)
    if new > PENALTY_MAX:
        return None
    return Change({"repetition_penalty": new}, f"the answer looped at repetition_penalty {current:g}")


_FIRST_TOKEN_STOP = re.compile(r"completion_tokens=([01])\b")


def default_generation_config(finding: Finding, ctx: RemedyContext) -> Change | None:
    """An answer that ended at its first token, from a model whose generation_config.json names stop ids
    besides the tokenizer's EOS (vLLM adds them to every request's stop ids, also under `--generation-config
    vllm`, which drops only the sampling defaults): serve with a copy of the file in the data folder whose
    eos_token_id is the tokenizer's EOS and config.json's, passed as `--generation-config FOLDER`."""
    if ctx.model_dir is None or ctx.data_dir is None or ctx.spec.generation_config \
            or not _FIRST_TOKEN_STOP.search(finding.text):
        return None
    folder = ModelFolder(ctx.model_dir)
    generation = folder.generation_config
    token = folder.tokenizer_config.get("eos_token")
    own = folder.token_id(str(token.get("content") if isinstance(token, dict) else token or ""))
    config_eos = (folder.config or {}).get("eos_token_id")
    keep = sorted({i for i in (own, *_ids(config_eos)) if i is not None})
    extra = sorted(set(_ids(generation.get("eos_token_id"))) - set(keep))
    if not extra or not keep:
        return None
    target = ctx.data_dir / "generation-config" / ctx.model_dir.name
    corrected = {**generation, "eos_token_id": keep if len(keep) > 1 else keep[0]}
    shown = ", ".join(map(str, extra[:5])) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
    return Change({"generation_config": str(target)},
                  f"generation_config.json stops on {len(extra)} token id(s) besides the tokenizer's EOS {own}: "
                  f"{shown}; the answer ended at its first token. The copy stops on {keep} only",
                  files={str(target / "generation_config.json"): json.dumps(corrected, indent=1) + "\n"})


def _ids(value: object) -> list[int]:
    """eos_token_id as JSON has it: one id or a list."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)] if isinstance(value, list) else []


_REMOTE_CODE = re.compile(r"trust.remote.code|auto_map", re.IGNORECASE)


def trust_remote_code(finding: Finding, ctx: RemedyContext) -> Change | None:
    if ctx.spec.trust_remote_code or not (finding.rule in {"trust_remote_code_needed", "preflight_architecture"}
                                          and _REMOTE_CODE.search(finding.text)):
        return None
    return Change({"trust_remote_code": True}, "the model's config names custom code (auto_map)")


REMEDIES: tuple[Remedy, ...] = (
    Remedy("fit_max_model_len", "out_of_memory", "--max-model-len",
           Msg("remedy.fit_max_model_len.why"),
           Msg("remedy.fit_max_model_len.undo"), True, fit_max_model_len),
    Remedy("more_kv_cache", "out_of_memory", "VLLM_CPU_KVCACHE_SPACE (CHAT_KV_CACHE_GIB)",
           Msg("remedy.more_kv_cache.why"),
           Msg("remedy.more_kv_cache.undo"), False, more_kv_cache,
           risk=Msg("remedy.more_kv_cache.risk")),
    Remedy("lower_gpu_memory_utilization", "out_of_memory", "--gpu-memory-utilization",
           Msg("remedy.lower_gpu_memory_utilization.why"),
           Msg("remedy.lower_gpu_memory_utilization.undo"), True, lower_gpu_utilization),
    Remedy("free_port", "port_in_use", "--port",
           Msg("remedy.free_port.why"),
           Msg("remedy.free_port.undo"), True, other_port),
    Remedy("shipped_chat_template", "chat_template", "--chat-template",
           Msg("remedy.shipped_chat_template.why"),
           Msg("remedy.shipped_chat_template.undo"), True, shipped_template),
    Remedy("float32_on_cpu", "decode_error", "--dtype",
           Msg("remedy.float32_on_cpu.why"),
           Msg("remedy.float32_on_cpu.undo"), True, float32_on_cpu),
    Remedy("repetition_penalty", "degenerate_output", "repetition_penalty (chat requests; CHAT_REPETITION_PENALTY)",
           Msg("remedy.repetition_penalty.why"),
           Msg("remedy.repetition_penalty.undo"), True, repetition_penalty),
    Remedy("default_generation_config", "empty_output", "--generation-config (a corrected copy in the data folder)",
           Msg("remedy.default_generation_config.why"),
           Msg("remedy.default_generation_config.undo"), True, default_generation_config),
    Remedy("trust_remote_code", "startup_failure", "--trust-remote-code",
           Msg("remedy.trust_remote_code.why"),
           Msg("remedy.trust_remote_code.undo"), False, trust_remote_code,
           risk=Msg("remedy.trust_remote_code.risk")),
)
BY_ID = {r.id: r for r in REMEDIES}
# What CHAT_AUTO_REMEDY=safe may apply without a click (issue 13's list): launch settings whose fix is mechanical.
# The repetition penalty and the generation-config copy are safe for an admin to press, but they change what the
# model answers, so only a person applies them.
AUTOMATIC = frozenset({"fit_max_model_len", "lower_gpu_memory_utilization", "free_port", "shipped_chat_template",
                       "float32_on_cpu"})


def finding_from_entry(entry: dict[str, Any]) -> Finding:
    """A finding as the store keeps it (FindingsStore.snapshot(): kind, rule, source, evidence lines) back as the
    Finding a remedy reads; the newest evidence line carries the freshest figures."""
    evidence = entry.get("evidence") or [{}]
    last = evidence[-1]
    return Finding(kind=str(entry["kind"]), line=int(last.get("line") or 0), text=str(last.get("text") or ""),
                   hint=str(entry.get("hint") or ""), source=str(last.get("source") or entry.get("source") or "log"),
                   rule=str(entry.get("rule") or ""), basis=str(last.get("basis") or entry.get("basis") or "rule"))


def remedies_for(finding: Finding, ctx: RemedyContext) -> list[Proposal]:
    """Every remedy that applies to this finding, in table order (the preferred one first)."""
    proposals = []
    for remedy in REMEDIES:
        if remedy.kind != finding.kind:
            continue
        change = remedy.compute(finding, ctx)
        if change is None:
            continue
        previous = {name: ctx.current(name) for name in change.overrides}
        proposals.append(Proposal(remedy, finding, change.overrides, previous, change.reason, files=change.files))
    return proposals
