"""Remedies: from a named finding to corrected launch settings, kept as overrides and verified after a restart.

`table.py` is the data (which finding, what change, why, how to undo, safe or not), `figures.py` reads vLLM's
own numbers from the evidence, `templates.py` picks a shipped chat template, `overrides.py` keeps the changes in
the data folder, `verify.py` proves a launch answers. Applying (write, restart, verify) lives with the engine
handle (handles/spawned.py). No Chainlit here.
"""

from .overrides import REQUEST_FIELDS, Override, OverridesStore
from .table import BY_ID, REMEDIES, Proposal, Remedy, RemedyContext, finding_from_entry, remedies_for
from .verify import RemedyResult, verify_completion

__all__ = [
           "BY_ID",
           "REMEDIES",
           "REQUEST_FIELDS",
           "Override",
           "OverridesStore",
           "Proposal",
           "Remedy",
           "RemedyContext",
           "RemedyResult",
           "finding_from_entry",
           "remedies_for",
           "verify_completion",
]
