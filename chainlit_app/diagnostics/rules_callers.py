"""Failures told in the words of the projects that call a model server, and of the hub and stores they load from,
which the earlier tables did not know: a prompt refused with the two figures compared, a gateway saying the model's
answer was empty, the model hub refusing a download (403), a chat template's own refusal of the message roles, a
model store without the model asked for, a vLLM class refusing a keyword another project passes, and a token id
that decodes to no piece.

Learnt from holdout round 16 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms16.py`). Read right
after the start-up tables, with `rules_relayed.py`. Data only: see `rules.py` for what the fields mean and how the
winner is chosen.
"""

from __future__ import annotations

import re

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

# two figures compared in the message itself (`6153 >= 5489`, `4097 > 4096`, `5000 exceeds 4096`)
_COMPARED = re.compile(r"(\d[\d,]*)\s*(?:>=|>|≥|exceeds)\s*(\d[\d,]*)")


def count_not_below_limit(message: str) -> bool:
    """True when the message compares two figures and the first (the prompt's) is at least the second (the
    limit): the words 'too long' then describe this request, not a setting."""
    compared = _COMPARED.search(message)
    return compared is not None and int(compared.group(1).replace(",", "")) >= int(compared.group(2).replace(",", ""))


# vLLM's classes that another project constructs (BentoML's samples, FastChat, Ray Serve, plugins)
_VLLM_CLASSES = (
    r"OpenAIServing\w*|AsyncLLMEngine|LLMEngine|AsyncLLM|LLM|EngineArgs|AsyncEngineArgs|SamplingParams|"
    r"ModelConfig|VllmConfig|CacheConfig|ParallelConfig|SchedulerConfig|BaseModelPath|LoRARequest|PoolingParams|"
    r"GuidedDecodingParams"
)

CALLER_RULES: tuple[Rule, ...] = (
    rule(
        "prompt_too_long_figures",
        Kind.CONTEXT_LENGTH,
        # a server's refusal of a prompt that prints the comparison it failed (SGLang's and vLLM's multimodal
        # check after images were expanded into tokens): the count at or above the limit is this request's
        r"\b(?:prompt|input|sequence|request)s? (?:is|was|are) too long\b",
        check=count_not_below_limit,
        hint=Msg("rule.prompt_too_long_figures"),
        examples=(
            # olmOCR #177 (its pipeline relaying the inference server's 400)
            "<class 'ValueError'> - Got BadRequestError from server: b'{\"object\":\"error\",\"message\":\"Multimodal "
            "prompt is too long after expanding multimodal tokens. After expanding "
            "len(req.origin_input_ids_unpadded)=5192 => 6153 >= 5489.\",\"type\":\"BadRequestError\",\"param\":null,"
            "\"code\":400}', skipping this response",
        ),
    ),
    rule(
        "hf_forbidden",
        Kind.AUTH,
        # the hub answers 403 for a gated repository whose access was not granted to the token (or a token
        # without the read scope): the same cause as its 401, authorisation, not the model or the start-up
        r"\b403 (?:Client Error|Forbidden)\b.{0,80}?(?:huggingface\.co|hf\.co)/",
        hint=Msg("rule.hf_forbidden"),
        examples=(
            # llm2vec #36 (Meta-Llama-3-8B-Instruct in Colab)
            "HTTPError: 403 Client Error: Forbidden for url: "
            "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json",
        ),
    ),
    rule(
        "template_role_refused",
        Kind.CHAT_TEMPLATE,
        # a chat template's own `raise_exception(...)` for a conversation whose roles it does not take (Qwen3's
        # `Unexpected message role.`, `System message must be at the beginning.`), relayed as a 400's message
        r"\bUnexpected message role\b|\bSystem message must be (?:at the beginning|first)\b|"
        r"\bSystem messages? (?:is|are) only (?:allowed|supported) (?:at the beginning|first)\b",
        hint=Msg("rule.chat_template_render"),
        examples=(
            # cindy #3583 (a Responses API client against vLLM serving a Qwen model)
            '{"error":{"message":"Unexpected message role.","type":"BadRequestError","param":null,"code":400}}',
            '{"error":{"type":"invalid_request_error","code":"upstream_error","message":"{\\"error\\":{\\"message\\":'
            '\\"System message must be at the beginning.\\",\\"type\\":\\"BadRequestError\\",\\"param\\":null,'
            '\\"code\\":400}}"}}',
        ),
    ),
    rule(
        "model_store_missing",
        Kind.MODEL_NOT_FOUND,
        # a model store that holds no model under the name asked for (BentoML's store behind OpenLLM): the model
        # named is not there, as the hub's RepositoryNotFoundError says for a repository
        r"\bno models? with (?:the )?name '[^']+' (?:was )?found\b|"
        r"\bmodel '[^']+' (?:was |is )?not found in (?:the )?(?:local )?(?:model )?(?:store|registry)\b|"
        # a model registry (Ollama's) that has no manifest under the name and tag pulled: no such model there
        r"\bpull model manifest: file does not exist\b|"
        # the registry refusing the name itself (a path or a misspelt name in a Modelfile's FROM, Ollama #3764)
        r"\bpull model manifest: 400\b",
        hint=Msg("rule.model_store_missing"),
        examples=(
            "Error: pull model manifest: file does not exist",  # Ollama #2292 ('orca'), rag_chatbot #1 ('granite:3.3')
            "Error: pull model manifest: 400",  # Ollama #3764 (a FROM line whose path was mistyped)
            # OpenLLM #894 (a local Mistral checkpoint on the vLLM backend)
            "bentoml.exceptions.NotFound: no Models with name 'vllm-mistral--garrulus' found",
        ),
    ),
    rule(
        "vllm_class_keyword_refused",
        Kind.VERSION_MISMATCH,
        # another project constructing one of vLLM's classes with an argument this vLLM does not take (BentoVLLM's
        # sample passing `served_model`, renamed by vLLM 0.4.1): code written for another release, whatever the
        # phase (BentoML builds its service while it serves)
        rf"\b(?:{_VLLM_CLASSES})\.__init__\(\) (?:got an unexpected keyword argument|"
        r"missing \d+ required (?:positional|keyword-only) arguments?)",
        case=True,
        hint=Msg("rule.vllm_class_keyword_refused"),
        examples=(
            # BentoVLLM #38 (vLLM 0.4.1)
            "TypeError: OpenAIServingCompletion.__init__() got an unexpected keyword argument 'served_model'",
        ),
    ),
    rule(
        "token_id_without_piece",
        Kind.DECODE_ERROR,
        # joining decoded token strings where one id had no piece: the tokenizer returns None for an id beyond its
        # vocabulary (a model whose embedding is padded past the tokenizer's size samples such ids), and
        # `"".join(tokens)` in convert_tokens_to_string fails. Weak: a client joining a stream's None content
        # prints the same words, and a cause named elsewhere in the log wins
        r"\bsequence item \d+: expected str instance, NoneType found",
        role="weak",
        exception_types=("TypeError",),
        hint=Msg("rule.token_id_without_piece"),
        examples=(
            "TypeError: sequence item 139: expected str instance, NoneType found",  # Intern-S1 #19 (verl, vLLM 0.10.1)
        ),
    ),
)
