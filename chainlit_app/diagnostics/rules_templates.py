"""The template engines' own words when a chat template fails, in servers other than vLLM: llama.cpp and
ik_llama.cpp (minja, which places its error `at row N, column M` of the template), and TGI (its 422 names the
`template_error` type). vLLM's own words and jinja2's are in `rules_serving.py`.

Learnt from holdout round 17 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms17.py`).
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

import re

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

_STATUS_400 = re.compile(r"\b(?:code|status)\W{0,4}400\b|\b400 Bad Request\b", re.IGNORECASE)


def _status_400(message: str) -> bool:
    """The refusal is a 400 (the request was refused before generation), not a 5xx."""
    return _STATUS_400.search(message) is not None


TEMPLATE_RULES: tuple[Rule, ...] = (
    rule(
        "template_engine_failed",
        Kind.CHAT_TEMPLATE,
        # llama.cpp's and ik_llama.cpp's check of the model's template at start-up ('failed to apply template'),
        # minja's error placed in the template's source ('Object is not callable: null at row 203, column 40'),
        # TGI's 422 ('Template error: template not found', error_type 'template_error')
        r"\bfailed to apply (?:the )?(?:chat[ _])?template\b|"
        r"(?:not callable|undefined|template)\b.{0,200}?\bat row \d+, column \d+|"
        r"\bTemplate error: |['\"]error_type['\"]:\s*['\"]template_error['\"]|"
        # llama.cpp's automatic parser (tool calls, reasoning) that cannot read the model's template
        r"\bUnable to generate parser for this template\b|\bAutomatic parser generation failed\b",
        hint=Msg("rule.chat_template_render"),
        examples=(
            "ERR [validate_model_chat_template] failed to apply template: %s",  # ik_llama.cpp #693
            ' | ="Object is not callable: null at row 203, column 40:\\n    {{- \\"Knowledge cutoff: 2024-06',
            # TGI #1870, through the openai client
            "UnprocessableEntityError: Error code: 422 - {'error': 'Template error: template not found', "
            "'error_type': 'template_error'}",
            # club-3090 #1250 (a GLM template, llama.cpp's 400)
            "Unable to generate parser for this template. Automatic parser generation failed:",
        ),
    ),
    rule(
        "request_refused_without_words",
        Kind.CHAT_TEMPLATE,
        # vLLM's 400 whose message is empty: the chat preprocessing returns str(exception) as the message, and what
        # raises there without words is the template or the tokenizer's check of the messages (Mistral's template
        # and mistral_common refusing two messages of the same role in a row); a symptom, so weak
        r"['\"]object['\"]:\s*['\"]error['\"],\s*['\"]message['\"]:\s*(?:''|\"\")",
        role="weak",
        check=_status_400,
        hint=Msg("rule.request_refused_without_words"),
        examples=(
            # AutoGen #5965 (Mistral on vLLM, an assistant message following an assistant message)
            "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': '', 'type': "
            "'BadRequestError', 'param': None, 'code': 400}",
        ),
    ),
)
