"""A plugin's code called by vLLM: the innermost frame of a traceback is another project's, an outer one vLLM's.

vLLM calls into code other projects install beside it (KV connectors such as LMCache's, structured-output
backends, platform plugins, scheduler hooks). That code reads vLLM's internal objects, whose shapes change from
release to release: when it fails on an attribute while vLLM called it, it was written for another vLLM release
(LMCache #1001: its connector reading `req_ids` from the scheduler output vLLM 0.9.1 had changed).
"""

from __future__ import annotations

import re

# vLLM's own files: an installed package or a source checkout (`…/vllm/vllm/…`), or a path printed relative to it
_VLLM_OWN = re.compile(r"(?:^|[/\\](?:site|dist)-packages[/\\]|[/\\]vllm[/\\])vllm[/\\]")
# code that is neither a plugin nor vLLM: the standard library, torch and the libraries vLLM itself calls
_LIBRARY = re.compile(r"^<|[/\\]python3(?:\.\d+)?[/\\](?!(?:site|dist)-packages)|[/\\](?:site|dist)-packages[/\\]"
                      r"(?:torch|transformers|tokenizers|triton|ray|numpy|pydantic|fastapi|starlette|uvicorn|"
                      r"asyncio|concurrent)[/\\]")


def plugin_called_by_vllm(frames: list[tuple[str, str]]) -> str:
    """The plugin file of the innermost frame when vLLM's own code called it ('' otherwise)."""
    if len(frames) < 2:
        return ""
    innermost = frames[-1][0]
    if _VLLM_OWN.search(innermost) or _LIBRARY.search(innermost):
        return ""
    return innermost if any(_VLLM_OWN.search(path) for path, _func in frames[:-1]) else ""
