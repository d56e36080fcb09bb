"""The words of an error no rule, exception type or module named: the last reading before the phase default.

Each held-out round brings error messages in wordings nobody wrote a rule for, from projects around vLLM
(gateways, agent frameworks, other servers). Most name their cause in plain words: "Template error:
template not found", "Model Not Exist", "insufficient memory", "unexpected keyword argument". Without this
reading such an error falls to the phase default (startup_failure before serving, engine_error while
serving), which is right about *that* it failed and wrong about *why*. A reading here only re-names an error
the phase default would have named anyway: it never turns a healthy log into a failure, and a rule, an
exception type or the module it was raised in always comes first.

Ordered most specific first (one family's words rarely appear in another's message; where they do, the
earlier family is the narrower cause: "CUDA out of memory while loading the template" is memory). Every
family keeps real example lines from the corpus (tests/unit/test_error_words.py checks each one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chainlit_app.i18n import Msg

from .taxonomy import Kind

WORDS_PREFIX = "words_"
PHASE_PREFIX = "phase_"


@dataclass(frozen=True)
class WordFamily:
    """Words that name one kind, with real messages they were taken from (the test's examples)."""

    kind: Kind
    words: re.Pattern[str]
    examples: tuple[str, ...]
    serving_only: bool = False  # a request's failure: before serving the same words refuse a setting
    starting_only: bool = False  # while serving, the same words are the engine's own bug (exceptions.py)


def _family(kind: Kind, pattern: str, *examples: str, serving_only: bool = False, starting_only: bool = False
            ) -> WordFamily:
    return WordFamily(kind, re.compile(pattern, re.IGNORECASE), examples, serving_only, starting_only)


WORD_FAMILIES: tuple[WordFamily, ...] = (
    _family(
        Kind.PORT_IN_USE,
        r"\baddress already in use\b|\bport\b.{0,40}\b(?:already (?:in use|allocated|bound)|occupied)\b",
        "OSError: [Errno 98] Address already in use",
    ),
    _family(
        Kind.OUT_OF_MEMORY,
        r"\b(?:out of memory|insufficient (?:GPU |device |system )?memory|not enough (?:GPU |device )?memory"
        r"|memory (?:is )?exhausted|cannot allocate memory)\b",
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
        "execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
    ),
    _family(
        Kind.CHAT_TEMPLATE,
        # not inside an identifier: 'chat_template_kwargs' names a parameter, not a template
        r"(?<![\w'])(?:chat[_ ]template(?![\w'])|template error|jinja2?\b"
        r"|failed to (?:apply|render) (?:the )?(?:chat )?template|template (?:not found|is not (?:set|defined)))",
        "UnprocessableEntityError: Error code: 422 - {'error': 'Template error: template not found', "
        "'error_type': 'template_error'}",
    ),
    _family(
        Kind.CONTEXT_LENGTH,
        r"\b(?:context (?:length|window)|too many (?:input )?tokens"
        r"|(?:prompt|input) is too long|exceeds? the (?:model'?s? )?(?:maximum|max) (?:context|length|tokens))\b",
        "ValueError: This model's maximum context length is 2048 tokens. However, you requested 2054 tokens (1030 "
        "in the messages, 1024 in the completion).",
        serving_only=True,
    ),
    _family(
        Kind.AUTH,
        r"\b(?:invalid api[_ ]?key|api[_ ]?key (?:is )?(?:invalid|missing|required|not (?:valid|set))"
        r"|unauthori[sz]ed|not authenticated|authentication (?:failed|required|error))\b",
        '{"code":401,"reason":"Unauthorized","message":"Invalid authentication credentials"}',
    ),
    _family(
        Kind.MODEL_NOT_FOUND,
        # the word, not a name in quotes (a mesh axis named 'model'); a key (`"model":`) is the word
        r"(?!(?<=['\"])model['\"](?!\s*:))\bmodel\b[^.\n]{0,60}?\b(?:not exists?|does not exist|doesn't exist|"
        r"not found|no such model|is not served|not available|unknown)\b|\b(?:unknown|invalid|no such) model\b",
        "API error: Error code: 400 - {'error': {'message': 'Model Not Exist', 'type': 'invalid_request_error', "
        "'param': None, 'code': 'invalid_request_error'}}",
    ),
    _family(
        Kind.VERSION_MISMATCH,
        # not "X is not compatible with Y": two settings that do not fit are a start-up failure
        r"\bgot an unexpected keyword argument\b|\bundefined symbol\b|\brequires? \S+ ?(?:[<>=]=?|version)",
        "TypeError: OpenAIServingCompletion.__init__() got an unexpected keyword argument 'served_model'",
        starting_only=True,
    ),
    _family(
        Kind.EMPTY_OUTPUT,
        r"\b(?:empty (?:response|answer|completion|output)|response (?:is |was )?empty|(?:returned|got) no "
        r"(?:content|output|text|choices))\b",
        "sse error: LLM model response empty",
        serving_only=True,
    ),
)


def kind_in_words(message: str, serving: bool = True) -> WordFamily | None:
    """The first family whose words the message holds, or None: then the phase decides."""
    return next((family for family in WORD_FAMILIES
                 if not (family.serving_only and not serving) and not (family.starting_only and serving)
                 and family.words.search(message)), None)


def last_reading(text: str, serving: bool, what: str) -> tuple[Kind, str, str, str]:
    """What an error no rule, type or module named is: its words' kind (basis `rule`, rule `words_<kind>`)
    or the phase default (basis `phase`). Returns kind, hint, rule id, basis."""
    family = kind_in_words(text, serving)
    if family is not None:
        return family.kind, Msg("hint.error_words", what=what), f"{WORDS_PREFIX}{family.kind.value}", "rule"
    if serving:
        return Kind.ENGINE_ERROR, Msg("hint.phase_engine_error", what=what), f"{PHASE_PREFIX}engine_error", "phase"
    return (Kind.STARTUP_FAILURE, Msg("hint.phase_startup_failure", what=what), f"{PHASE_PREFIX}startup_failure",
            "phase")


def is_fallback(rule: str | None) -> bool:
    """A finding the last readings made (words or phase), which any message a logger printed right above
    the same traceback outranks."""
    return rule is not None and rule.startswith((WORDS_PREFIX, PHASE_PREFIX))
