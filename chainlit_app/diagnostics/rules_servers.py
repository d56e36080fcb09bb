"""The words of the serving layers around vLLM (KServe, Xinference) and of old vLLM chat paths, for failures
the vLLM rules name in vLLM's own words only.

Learnt from holdout round 10 (each rule keeps real lines; `tests/unit/test_diagnosis_mechanisms10.py`).
Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

SERVER_RULES: tuple[Rule, ...] = (
    rule(
        "model_name_not_registered",
        Kind.MODEL_NOT_FOUND,
        # KServe's dataplane: the request's model (a LoRA adapter's name) is not in its model registry
        r"Model with name [`'\"]?[\w./:-]+[`'\"]? does not exist",
        hint=Msg("rule.model_does_not_exist"),
        examples=('    "error": "Model with name llama_adapter does not exist."',),  # kserve #4345
    ),
    rule(
        "model_actor_oom",
        Kind.OUT_OF_MEMORY,
        # Xinference's own report when a model actor's call ran out of memory
        r"Model actor is out of memory",
        hint=Msg("rule.gpu_oom"),
        examples=("2024-01-18 21:27:53,300 xinference.core.model 35043 ERROR    Model actor is out of memory.",),
    ),
    rule(
        "content_parts_joined_as_text",
        Kind.CHAT_TEMPLATE,
        # a message content given as a list of parts (text, image_url) where the chat template (or a vLLM
        # older than list contents for this model) adds it to a string: Python's TypeError, however escaped
        r"can only concatenate str \(not \\?[\"']list\\?[\"']\) to str",
        hint=Msg("rule.chat_template_render"),
        examples=('can only concatenate str (not \\"list\\") to str',),  # InternVL #726, as posted
    ),
)
