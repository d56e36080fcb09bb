"""Refusals in their own words, whoever relays them: a server refusing a request's chat template, a launcher
refusing to start on ports it finds taken, a call that does not fit the library version it reaches.

Learnt from holdout round 9 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms9.py`). The
words are read wherever they stand: a proxy or a client relays a server's refusal inside its own message
(`Error code: 400 - {...}`, `Upstream error:` and a JSON body), so no rule here asks for a level or a logger.
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import STARTING, Rule, rule
from .taxonomy import Kind

REFUSAL_RULES: tuple[Rule, ...] = (
    rule(
        "chat_template_refused",
        Kind.CHAT_TEMPLATE,
        # the chat template (the request's `chat_template` field or the server's template) named with a refusal:
        # vLLM's Mistral tokenizer ('chat_template is not supported for Mistral tokenizers.'), an untrusted
        # template sent with a request, a template path that is not there, a template that lacks a role
        # (a dot before a letter is a file name's, not the end of the sentence)
        r"chat[ _]template\b(?:[^.\n]|\.(?=\w)){0,120}?\b(?:is not supported|not supported|does not support|"
        r"doesn't exist|does not exist|is not a valid|failed to be opened|can ?not be used)|"
        r"Refused request with untrusted chat template",
        hint=Msg("rule.chat_template_refused"),
        examples=(
            # free-claude-code #130: an NVIDIA NIM (vLLM) Mistral model's 400, relayed by the openai client
            "Error code: 400 - {'error': {'message': 'chat_template is not supported for Mistral tokenizers.', "
            "'type': 'BadRequestError', 'param': None, 'code': 400}}   (request_id=req_c459752f5c66)",
            # free-claude-code #993: the same refusal in the proxy's upstream-error block
            '{"message":"chat_template is not supported for Mistral tokenizers.","type":"BadRequestError",'
            '"param":null,"code":400}',
            # vLLM's own refusal of a template sent with a request (renderers/online_renderer.py)
            "Chat template is passed with request, but --trust-request-chat-template is not set. Refused request "
            "with untrusted chat template.",
            # vLLM #47600: a --chat-template path from a recipe that the wheel does not ship (a file name's dots
            # are part of the path, not the end of the sentence)
            "ValueError: The supplied chat template string (examples/tool_chat_template_gemma4.jinja) appears "
            "path-like, but doesn't exist! Tried: examples/tool_chat_template_gemma4.jinja and /micromamba/envs/"
            "VLLM/lib/python3.12/site-packages/vllm/transformers_utils/chat_templates/examples/"
            "tool_chat_template_gemma4.jinja",
        ),
    ),
    rule(
        "ports_not_available",
        Kind.PORT_IN_USE,
        # a launcher's check of the ports it needs before it starts anything (GPUStack's prerun: 'Port 5432
        # required for service 'postgres' is not available.'; its summary cut as posted: 'not availabl')
        r"\bports?\b[^.\n]{0,80}?\b(?:is|are) not availabl|\brequired ports are not availabl",
        hint=Msg("rule.port_in_use"),
        examples=(
            "2025-12-03 15:04:54.398666+08:00 - gpustack.cmd.prerun - ERROR - Port 5432 required for service "
            "'postgres' is not available.",  # gpustack #3666
            "2025-12-03 15:04:54.398786+08:00 - gpustack.cmd.prerun - CRITICAL - Failed to pre-check the "
            "configuration: One or more required ports are not availabl",
        ),
    ),
    rule(
        "call_signature_mismatch",
        Kind.VERSION_MISMATCH,
        # a constructor or function refusing an argument its caller passes, quoted inside another message while
        # starting: the caller was written for another release of the library (the TypeError entry of
        # `exceptions.py` reads the same words when they end a traceback)
        r"\b(?:[A-Z]\w*\.__init__|[a-z_]\w*)\(\) got an unexpected keyword argument",
        phases=STARTING,
        hint=Msg("exception.TypeError.version_mismatch"),
        examples=(
            # tt-inference-server #3190: the vLLM bundled with tt-forge does not match the server code
            "ERROR - [warmup] async failed after 2.6761 seconds. Error: EngineArgs.__init__() got an unexpected "
            "keyword argument 'task'",
            # Triton Inference Server #8578: its vLLM backend calls a function the installed vLLM changed
            'I1216 02:12:49.624943 179 pb_stub.cc:388] "Failed to initialize Python stub: TypeError: '
            "build_async_engine_client_from_engine_args() got an unexpected keyword argument 'stat_loggers'",
        ),
    ),
)
