"""All rules in their stated order: start-up rules first, then the words of the tools around vLLM (`rules_relayed`,
ahead of the weak words on the same lines: Docker's daemon error names the taken port; then `rules_traces`, the
traces a failure leaves without an error line; then `rules_callers`, the
words of projects that call a model server; then the template engines' words of other servers and what response
fields say, `rules_templates`, `rules_responses`), then serving rules, the
statuses clients report, what clients say of an answer, gin's access lines
and the gateways' words, the rules that read a message's shape,
refusals in their own words wherever they are relayed, and the wrappers last (the tie-break order).

The start-up rules come by subject: the model, the machine's resources, then builds (and the rules
learnt later, see `rules_builds.py`); the order of this concatenation is part of the result.
"""

from __future__ import annotations

from .rules import Rule
from .rules_body_types import BODY_TYPE_RULES
from .rules_builds import BUILD_RULES
from .rules_callers import CALLER_RULES
from .rules_clients import CLIENT_RULES
from .rules_collectives import COLLECTIVE_RULES
from .rules_figures import FIGURE_RULES
from .rules_gateways import GATEWAY_RULES
from .rules_installs import INSTALL_RULES
from .rules_model import MODEL_RULES
from .rules_paths import PATH_RULES
from .rules_quiet_signs import QUIET_SIGN_RULES
from .rules_ray import RAY_RULES
from .rules_refusals import REFUSAL_RULES
from .rules_relayed import RELAYED_RULES
from .rules_releases import RELEASE_RULES
from .rules_resources import RESOURCE_RULES
from .rules_responses import RESPONSE_RULES
from .rules_servers import SERVER_RULES
from .rules_serving import SERVING_RULES
from .rules_shapes import SHAPE_RULES
from .rules_shown import SHOWN_RULES
from .rules_status import STATUS_RULES
from .rules_templates import TEMPLATE_RULES
from .rules_traces import TRACE_RULES
from .rules_wrappers import WRAPPER_RULES

STARTUP_RULES: tuple[Rule, ...] = (RELEASE_RULES + INSTALL_RULES + PATH_RULES + MODEL_RULES + RESOURCE_RULES
                                   + BUILD_RULES + RAY_RULES + COLLECTIVE_RULES)
RULES: tuple[Rule, ...] = (STARTUP_RULES + RELAYED_RULES + TRACE_RULES + CALLER_RULES + TEMPLATE_RULES + RESPONSE_RULES
                          + SHOWN_RULES + SERVING_RULES + STATUS_RULES + CLIENT_RULES + QUIET_SIGN_RULES
                          + BODY_TYPE_RULES + GATEWAY_RULES + SHAPE_RULES + FIGURE_RULES + REFUSAL_RULES + SERVER_RULES
                          + WRAPPER_RULES)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
# Rules whose warning a server that served disproves, and the word of a later failure the warning explains
# (`Rule.disproved_by_serving`)
DISPROVED_BY_SERVING: dict[str, str] = {r.id: r.disproved_by_serving for r in RULES if r.disproved_by_serving}
