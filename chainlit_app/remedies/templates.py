"""The chat templates shipped with the app, and which one fits a model folder.

A template is only offered when the tokenizer really has the special tokens it writes: a ChatML template on a
tokenizer without <|im_start|> would "work" and make the model read markup as plain text. Family first (by
config.json's model_type), ChatML as the fallback many fine-tunes use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chainlit_app.doctor.model_folder import ModelFolder
from chainlit_app.i18n import Msg

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class ShippedTemplate:
    name: str
    file: str
    tokens: tuple[str, ...]  # special tokens the template writes; the tokenizer must know each

    @property
    def path(self) -> Path:
        return TEMPLATES_DIR / self.file


CHATML = ShippedTemplate("ChatML", "chatml.jinja", ("<|im_start|>", "<|im_end|>"))
LLAMA3 = ShippedTemplate("Llama-3", "llama3.jinja", ("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"))
ERNIE45 = ShippedTemplate("ERNIE-4.5", "ernie45.jinja", ("<|begin_of_sentence|>", "<|end_of_sentence|>"))
SHIPPED = (CHATML, LLAMA3, ERNIE45)

# model_type prefix -> the family's own template, tried before ChatML.
FAMILY = {"ernie4_5": ERNIE45, "llama": LLAMA3}


def candidates(model_type: str) -> list[ShippedTemplate]:
    """The family's template (if the app ships one) first, then ChatML."""
    own = [t for prefix, t in FAMILY.items() if model_type.startswith(prefix)]
    return [*own, CHATML]


def pick_template(model_dir: Path) -> tuple[ShippedTemplate | None, str]:
    """(template, why) for a model folder; (None, why not) when no shipped template fits its tokenizer."""
    folder = ModelFolder(model_dir)
    config = folder.config
    if config is None:
        return None, f"{model_dir}/config.json cannot be read ({folder.config_read[1]})"
    model_type = str(config.get("model_type") or "")
    for template in candidates(model_type):
        missing = [t for t in template.tokens if folder.token_id(t) is None]
        if not missing:
            return template, Msg("remedy_template.fits", model_type=model_type or "?",
                                    tokens=", ".join(template.tokens))
    tried = ", ".join(t.name for t in candidates(model_type))
    return None, f"model_type {model_type or '?'}: the tokenizer lacks the special tokens of {tried}"
