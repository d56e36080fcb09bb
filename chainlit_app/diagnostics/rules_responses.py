"""What a response's own fields and a hosted API's own words say: decoded tokens still in byte-level pieces, a
Gemini response with no part to read, a provider's 'Model Not Exist'.

Learnt from holdout round 17 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms17.py`).
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

RESPONSE_RULES: tuple[Rule, ...] = (
    rule(
        "decoded_token_in_pieces",
        Kind.DECODE_ERROR,
        # vLLM's logprobs give each token's decoded text ('decoded_token'); a byte-level tokenizer's decoder turns
        # the piece 'Ġthat' into ' that'. A decoded token that still starts with the space, newline or tab
        # marker (U+0120, U+010A, U+0109) was not decoded: the detokenizer of that path is not applied
        "['\"]decoded_token['\"]\\s*:\\s*['\"][\u0120\u010a\u0109]",
        hint=Msg("hint.byte_level_pieces"),
        examples=('    "decoded_token": "\u0120that"',),  # vLLM #16838 (0.8.3, V1, prompt_logprobs)
    ),
    rule(
        "response_without_part",
        Kind.EMPTY_OUTPUT,
        # google-generativeai's accessor of the answer's text, when the candidate came back with no part at all
        # (a token limit reached before any text, a blocked answer): the answer is empty
        r"quick accessor only works when the response contains a valid",
        hint=Msg("rule.response_without_part"),
        examples=(
            "ValueError: The `response.text` quick accessor only works when the response contains a valid `Part`, "
            "but none was returned. Check the `candidate.safety_ratings` to see if the response was blocked.",
        ),  # generative-ai-python #280
    ),
    rule(
        "provider_model_not_exist",
        Kind.MODEL_NOT_FOUND,
        # a hosted API's refusal of a model name it does not serve, in its own words ('Model Not Exist')
        r"\bmodel not exists?\b",
        hint=Msg("rule.model_does_not_exist"),
        examples=(
            "2025-03-12 12:55:33.118 | ERROR    | app.llm:ask_tool:260 - API error: Error code: 400 - {'error': "
            "{'message': 'Model Not Exist', 'type': 'invalid_request_error', 'param': None, 'code': "
            "'invalid_request_error'}}",  # OpenManus #508
        ),
    ),
)
