"""The Hugging Face hub as this app meets it: one rule each for "offline", "where the cache is", "is this
a path or a hub id" and "is the model at hand", shared by model resolution and the doctor."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

DEFAULT_ENDPOINT = "https://huggingface.co"


def hub_offline() -> bool:
    """HF_HUB_OFFLINE as huggingface_hub reads it (1, ON, YES, TRUE, any case): vLLM then never downloads."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", DEFAULT_ENDPOINT).rstrip("/")


def hub_cache_dir() -> Path:
    """HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub (huggingface_hub's order)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    return home / "hub"


def is_local_path(model: str) -> bool:
    """CHAT_MODEL names a folder (absolute, ./relative, or existing) rather than a hub id like org/name."""
    path = Path(model).expanduser()
    return path.is_absolute() or model.startswith(".") or path.exists()


def hub_snapshot(repo_id: str) -> Path | None:
    """The cached snapshot folder of a hub repo (refs/main first, else the newest with a config.json)."""
    root = hub_cache_dir() / f"models--{repo_id.replace('/', '--')}"
    try:
        ref = (root / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        ref = ""
    if ref and (root / "snapshots" / ref / "config.json").exists():
        return root / "snapshots" / ref
    candidates = [p.parent for p in (root / "snapshots").glob("*/config.json")]
    return max(candidates, key=lambda p: p.stat().st_mtime) if candidates else None


def in_hub_cache(repo_id: str) -> bool:
    """True when a snapshot with a config.json is in the local Hugging Face cache."""
    return hub_snapshot(repo_id) is not None


def hub_reachable(repo_id: str, timeout: float) -> bool:
    """Ask the hub for the model's metadata, quickly: offline machines must not wait long."""
    if hub_offline():
        return False
    headers = {}
    if os.environ.get("HF_TOKEN"):
        headers["Authorization"] = f"Bearer {os.environ['HF_TOKEN']}"
    try:
        response = httpx.get(f"{hub_endpoint()}/api/models/{repo_id}", timeout=timeout, headers=headers)
    except httpx.HTTPError:
        return False
    return response.status_code == 200
