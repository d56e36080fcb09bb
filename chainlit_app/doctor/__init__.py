"""The doctor: checks run before vLLM is spawned, to refuse a broken setup in seconds, with the fix.

vLLM needs 20 to 60 s on a CPU to fail on a bad model folder, a taken port or a missing chat template,
and its message is buried in a long log. Each check reads the folder, the settings and the engine
environment's facts (see `chainlit_app.engine.facts`) and returns a `Check`: pass, or a finding of one
taxonomy kind with a fix that names the setting, flag or file to change. Checks are registered with
what they need and when they apply (`registry.py`); `run_preflight` runs them in dependency order.

Pure Python, no Chainlit: the same code serves `python -m chainlit_app.diagnostics doctor` and the app.
"""

from .check import Check, PreflightConfig, config_from_settings, is_blocking
from .run import run_preflight

__all__ = ["Check", "PreflightConfig", "config_from_settings", "is_blocking", "run_preflight"]
