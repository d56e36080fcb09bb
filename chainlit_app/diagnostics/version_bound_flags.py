"""Command-line flags that one vLLM release accepts and another does not (`flag_of_another_release`).

argparse refuses a flag it does not know (`vllm: error: unrecognized arguments: --enable-reasoning`) whether the
user mistyped it or copied a command written for another release. The two need different fixes: a typo is fixed
in the command (startup_failure, `bad_argument`), a flag of another release by installing the release the command
was written for, or by the flag that replaced it (version_mismatch). The line cannot tell them apart; this table
can, because it lists only flags some release of vLLM (or of a plugin that adds flags to `vllm serve`) did
accept, each with why it comes and goes. A flag no release ever had (`--temperature`: a sampling parameter, not a
server flag) is not here and stays a bad argument.
"""

from __future__ import annotations

import re

MECHANISM_ID = "flag_of_another_release"

# flag -> why a given vLLM may not know it (what added, replaced or removed it)
VERSION_BOUND_FLAGS: dict[str, str] = {
    "--enable-reasoning": "added with reasoning outputs; later releases enable them with --reasoning-parser alone "
    "and removed the flag",
    "--reasoning-parser": "added with reasoning outputs (releases before it do not know it)",
    "--tool-server": "added with gpt-oss's built-in tools (demo browser and python tools)",
    "--omni": "registered by the vllm-omni plugin, only when a vllm-omni built for the installed vLLM is installed",
    "--speculative-model": "replaced by --speculative-config",
    "--num-speculative-tokens": "replaced by --speculative-config",
    "--num-scheduler-steps": "multi-step scheduling of the V0 engine, removed with it",
    "--use-v2-block-manager": "the V0 block manager's switch, removed once the v2 manager was the only one",
    "--guided-decoding-backend": "renamed with structured outputs (--structured-outputs-config)",
    "--structured-outputs-config": "added when guided decoding was renamed structured outputs",
    "--enable-auto-tool-choice": "added with tool calling (releases before it do not know it)",
    "--tool-call-parser": "added with tool calling (releases before it do not know it)",
}

_REFUSED = re.compile(r"error: unrecognized arguments?:(?P<args>.*)$", re.IGNORECASE)


def bound_flags(message: str) -> list[str]:
    """The refused flags of an argparse refusal that the table knows (empty when none, or no refusal)."""
    m = _REFUSED.search(message)
    if m is None:
        return []
    refused = [arg.split("=", 1)[0] for arg in m.group("args").split() if arg.startswith("--")]
    return [flag for flag in refused if flag in VERSION_BOUND_FLAGS]


def refuses_flag_of_another_release(message: str) -> bool:
    """True when argparse refused a flag that some release accepts (Rule.check)."""
    return bool(bound_flags(message))
