"""Automated accessibility checks: axe-core (from the npm registry, `make axe`) injected by Playwright.

The project judges only its own elements (the panel, the chat's notices): Chainlit's own page is
reported, not held against the app. Serious and critical violations fail.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AXE_ENV = "CHAT_AXE_JS"
AXE_RELATIVE = Path(".axe/node_modules/axe-core/axe.min.js")
BLOCKING_IMPACTS = frozenset({"serious", "critical"})

RUN_AXE_JS = """
async ([include, exclude]) => {
  const context = exclude.length ? {include, exclude} : {include};
  const result = await window.axe.run(context, {resultTypes: ['violations']});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact || '', help: v.help,
    targets: v.nodes.map(n => n.target.join(' ')),
  }));
}
"""


class MissingAxe(RuntimeError):
    """axe-core is not installed where the checks look for it."""


@dataclass(frozen=True)
class Violation:
    rule: str
    impact: str
    help: str
    targets: tuple[str, ...]

    @property
    def blocking(self) -> bool:
        return self.impact in BLOCKING_IMPACTS

    def __str__(self) -> str:
        return f"{self.impact} {self.rule}: {self.help} ({', '.join(self.targets[:3])})"


def axe_path(project_root: Path | None = None) -> Path:
    if os.environ.get(AXE_ENV):
        path = Path(os.environ[AXE_ENV])
    else:
        from chainlit_app.settings import PROJECT_ROOT

        path = (project_root or PROJECT_ROOT) / AXE_RELATIVE
    if not path.is_file():
        raise MissingAxe(f"axe-core was not found at {path}: run `make axe` (npm), or name axe.min.js with {AXE_ENV}")
    return path


def violations_from(raw: list[dict[str, Any]]) -> list[Violation]:
    return [Violation(v["id"], v["impact"], v["help"], tuple(v["targets"])) for v in raw]


def check_sync(page: Any, include: list[str], exclude: list[str] | None = None) -> list[Violation]:
    """Every violation axe finds within the `include` selectors (Playwright sync page). The script is
    evaluated, not added as a tag, so a Content-Security-Policy cannot block it."""
    if not page.evaluate("() => !!window.axe"):
        page.evaluate(axe_path().read_text(encoding="utf-8"))
    return violations_from(page.evaluate(RUN_AXE_JS, [include, exclude or []]))


async def check_async(page: Any, include: list[str], exclude: list[str] | None = None) -> list[Violation]:
    if not await page.evaluate("() => !!window.axe"):
        await page.evaluate(axe_path().read_text(encoding="utf-8"))
    return violations_from(await page.evaluate(RUN_AXE_JS, [include, exclude or []]))
