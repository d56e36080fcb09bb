"""Attach mode: check a vLLM server we did not start (reachable? key? model?) and name what is wrong."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import httpx

from chainlit_app.diagnostics import Finding
from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.engine.http import EngineClient
from chainlit_app.i18n import Msg

LOOPBACK = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


def in_container() -> bool:
    """Docker and Kubernetes leave these marks; inside them `localhost` is the container itself."""
    if Path("/.dockerenv").exists() or os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    try:
        cgroup = Path("/proc/1/cgroup").read_text(errors="replace")
    except OSError:
        return False
    return any(mark in cgroup for mark in ("docker", "kubepods", "containerd"))


@dataclass
class AttachCheck:
    """The outcome of one check of the server: the model to use, or findings that say why not."""

    base_url: str
    models: list[str] = field(default_factory=list)
    chosen: str | None = None
    version: str | None = None
    notice: str | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.chosen is not None and not self.findings


def _finding(kind: Kind, text: str, hint: str) -> Finding:
    return Finding(kind=kind.value, line=0, text=text, hint=hint, source="probe", rule=f"attach_{kind.value}")


def connection_hint(base_url: str) -> Msg:
    host = urlparse(base_url).hostname or ""
    if host in LOOPBACK:
        return Msg("hint.attach_connection_in_container" if in_container() else "hint.attach_connection_loopback",
                   url=base_url)
    return Msg("hint.attach_connection", url=base_url)


async def check_server(base_url: str, api_key: str | None, wanted: str | None, timeout: float = 5.0) -> AttachCheck:
    """Reachability (/health), the key (/v1/models) and the model name, each failure as its finding."""
    result = AttachCheck(base_url=base_url)
    server = EngineClient(base_url, api_key, timeout=timeout)
    try:
        try:
            result.models = await server.models()
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code == 401:
                result.findings.append(_finding(
                    Kind.AUTH, f"GET {base_url}/v1/models -> 401 {exc.response.text[:200]}",
                    Msg("hint.attach_auth")))
            else:
                result.findings.append(_finding(
                    Kind.CONNECTION, f"GET {base_url}/v1/models -> HTTP {exc.response.status_code}",
                    Msg("hint.attach_not_vllm")))
            return result
        except httpx.HTTPError as exc:
            result.findings.append(_finding(
                Kind.CONNECTION, f"{base_url}: {type(exc).__name__}: {exc}", connection_hint(base_url)))
            return result
        result.version = await server.version()
    finally:
        await server.aclose()
    if wanted:
        if wanted not in result.models:
            result.findings.append(_finding(
                Kind.MODEL_NOT_FOUND,
                f"CHAT_SERVED_MODEL_NAME={wanted!r} is not served; the server has {result.models}",
                Msg("hint.attach_model_not_served")))
            return result
        result.chosen = wanted
    elif result.models:
        result.chosen = result.models[0]
        if len(result.models) > 1:
            result.notice = Msg("notice.attach_many", models=", ".join(result.models), chosen=result.chosen)
    else:
        result.findings.append(_finding(Kind.MODEL_NOT_FOUND, f"{base_url}/v1/models lists no model",
                                        Msg("hint.attach_no_model")))
    return result
