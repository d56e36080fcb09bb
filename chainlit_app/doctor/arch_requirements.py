"""Architectures that need a newer engine than vLLM's registry alone reveals: a table, read by one check.

vLLM's registry says whether an architecture is implemented, not whether this vLLM and transformers
implement it correctly; families whose support arrived late get a row here with the versions they need.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class ArchRequirement:
    """Minimum engine versions for a family of architectures; `repo_hint` names it in a hub repo id."""

    check_name: str
    architectures: tuple[str, ...]  # the current name first: it stands for a hub model not downloaded yet
    min_vllm: tuple[int, ...]
    min_transformers: tuple[int, ...]
    why: str
    repo_hint: str | None = None


ARCH_REQUIREMENTS: tuple[ArchRequirement, ...] = (
    ArchRequirement(
        check_name="ernie_versions",
        architectures=("Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM", "Ernie4_5_MoeForCausalLM"),
        min_vllm=(0, 10, 1),
        min_transformers=(4, 54),
        why="ERNIE 4.5 support arrived mid-2025: vLLM's recipe asks for vllm >= 0.10.1, transformers >= 4.54",
        repo_hint="ernie-4.5",
    ),
)


def version_tuple(text: str | None) -> tuple[int, ...]:
    """Leading numeric parts of a version: '4.54.0.dev0' -> (4, 54, 0); '2.13.0+cpu' -> (2, 13, 0)."""
    parts: list[int] = []
    for piece in (text or "").split("+")[0].split("."):
        match = re.match(r"\d+", piece)
        if not match:
            break
        parts.append(int(match.group()))
    return tuple(parts)


def dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def requirement_for(archs: Iterable[str],
                    table: tuple[ArchRequirement, ...] = ARCH_REQUIREMENTS) -> tuple[ArchRequirement, str] | None:
    """The first row naming one of `archs`, with the architecture that matched (None when no row does)."""
    archs = list(archs)
    for requirement in table:
        matched = [a for a in archs if a in requirement.architectures]
        if matched:
            return requirement, matched[0]
    return None


def archs_named_by_repo(repo_id: str, table: tuple[ArchRequirement, ...] = ARCH_REQUIREMENTS) -> list[str]:
    """A hub model not downloaded yet has no config.json: its repo id says what it is."""
    lowered = repo_id.lower()
    for requirement in table:
        if requirement.repo_hint and requirement.repo_hint in lowered:
            return [requirement.architectures[0]]
    return []
