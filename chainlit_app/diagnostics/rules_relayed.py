"""Failures told in the words of the tools around vLLM, which the start-up and serving tables did not know: a client
library relaying vLLM's refusal of a long input, a stack that asks vLLM for a model it does not serve, an
environment where vLLM is not installed or cannot be resolved, structured output whose values come back as escape
sequences, a template filter given a value of the wrong type, and Docker's word for a taken port.

Learnt from holdout round 13 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms13.py`).
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

RELAYED_RULES: tuple[Rule, ...] = (
    rule(
        "input_longer_than_context",
        Kind.CONTEXT_LENGTH,
        # vLLM's own refusal of a prompt, relayed by a client (LiteLLM's hosted_vllm provider wraps it in
        # ContextWindowExceededError) and often wrapped mid-sentence by the paste, so the maximum is on the next
        # line: the words "is longer than" already say the count is above the maximum
        r"The input \(\d[\d,]* tokens\) is longer than",
        hint=Msg("rule.context_too_long"),
        examples=(
            # kimchi #794 (LiteLLM hosted_vllm)
            'Error: {"detail":"ContextWindowExceededError: Hosted_vllmException - {\\"object\\":\\"error\\",'
            '\\"message\\":\\"The input (1492905 tokens) is longer than the',
        ),
    ),
    rule(
        "unknown_model_served",
        Kind.MODEL_NOT_FOUND,
        # llama-stack's remote vLLM provider lists vLLM's /v1/models and finds no entry under the name it was
        # configured with: the two sides name the model differently (the served name, not the hub id)
        r"Unknown model served by [\w.-]+",
        hint=Msg("rule.unknown_model_served"),
        examples=("Unknown model served by vllm: Llama3.2-1B-Instruct",),  # llama-stack (ogx) #405
    ),
    rule(
        "vllm_not_installed",
        Kind.STARTUP_FAILURE,
        # the interpreter that should run vLLM has no vLLM at all (a volume mounted over the image's install, a
        # virtual environment not activated): the engine is not installed where it runs. Its own submodules
        # missing from an install is `vllm_own_module_missing`; a build without its extensions, the build rules.
        r"No module named '?vllm'?(?![\w.])",
        hint=Msg("rule.vllm_not_installed"),
        examples=(
            # vLLM #2236 (the official image on RunPod, the pod's volume mounted on /workspace)
            "2023-12-21T15:25:16.536115444Z /usr/bin/python3: Error while finding module specification for "
            "'vllm.entrypoints.openai.api_server' (ModuleNotFoundError: No module named 'vllm')",
        ),
    ),
    rule(
        "dependencies_unresolvable",
        Kind.VERSION_MISMATCH,
        # the installer's resolver proves the requested packages cannot coexist (uv's "No solution found", pip's
        # ResolutionImpossible and its "conflicting dependencies"): versions that do not fit, before any start
        r"No solution found when resolving dependencies|ResolutionImpossible|"
        r"because these package versions have conflicting dependencies",
        hint=Msg("rule.dependencies_unresolvable"),
        examples=(
            "  × No solution found when resolving dependencies:",  # vLLM #11283 (uv, vllm 0.6.5)
            "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/",
        ),
    ),
    rule(
        "escaped_unicode_in_answer",
        Kind.DECODE_ERROR,
        # an answer whose characters arrive as escape sequences escaped once more (`\\u7406\\u601f`): the
        # text was serialised twice on its way out (guided decoding's JSON over non-Latin text), so the reader
        # sees codes instead of characters; three in a row, so a single escaped code in a log line is no answer
        r"\\\\u[0-9a-f]{4}(?:\\+u[0-9a-f]{4}){2}",
        role="weak",
        hint=Msg("rule.escaped_unicode_in_answer"),
        examples=(
            # vLLM #8805 (outlines 0.0.46 guided JSON over Chinese text)
            '{"role": "\\u73af\\u8282", "argument": "\\\\u7b80\\\\u5185\\\\u62db\\\\u8282"}',
        ),
    ),
    rule(
        "template_items_of_non_mapping",
        Kind.CHAT_TEMPLATE,
        # jinja2's `items` filter given something that is not a mapping: a chat template iterating a value it
        # expects as a dict (a tool call's `arguments` passed on as the JSON string a client sent, where vLLM's
        # own server parses it first). Only the template's render raises these words.
        r"Can only get item pairs from a mapping",
        hint=Msg("rule.template_items_of_non_mapping"),
        examples=("TypeError: Can only get item pairs from a mapping.",),  # LocalAI #10256 (vLLM backend, Qwen3)
    ),
    rule(
        "container_port_allocated",
        Kind.PORT_IN_USE,
        # Docker cannot publish a container's port: another container or process holds the host port
        r"Bind for \S+:\d+ failed: port is already allocated|\bport is already allocated",
        hint=Msg("rule.port_in_use"),
        examples=(
            # tenstorrent tt-studio #507
            "Error response from daemon: failed to set up container networking: driver failed programming external "
            "connectivity on endpoint tt_studio_backend_api_dev (abf537d940c8): Bind for 0.0.0.0:8000 failed: port "
            "is already allocated",
        ),
    ),
)
