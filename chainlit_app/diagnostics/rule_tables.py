"""All rules in their stated order: start-up rules first, then serving rules (the tie-break order)."""

from __future__ import annotations

from .rules import Rule
from .rules_serving import SERVING_RULES
from .rules_startup import STARTUP_RULES

RULES: tuple[Rule, ...] = STARTUP_RULES + SERVING_RULES
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
