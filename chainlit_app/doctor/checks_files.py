"""The model folder's files: weights (present, intact, sized like the config says), tokenizer, chat template, EOS.

Each finding names the file to fetch again or the flag that supplies what is missing; for a hub model
vLLM downloads missing files itself, so their absence warns instead of blocking.
"""

from __future__ import annotations

import re
from typing import Any

from chainlit_app.diagnostics.taxonomy import Kind
from chainlit_app.i18n import Msg

from .check import Check, failed, passed, warned
from .context import Context
from .flags import has_flag
from .model_folder import TOKENIZER_FILES, ModelFolder
from .model_shape import MIB, TORCH_DTYPE_BYTES, dims_of, text_config
from .registry import CheckRegistry

WEIGHT_SIZE_MIN_RATIO = 1 / 3

FILE_CHECKS: CheckRegistry[Context] = CheckRegistry()


def check_weights(folder: ModelFolder, downloadable: bool = False) -> Check:
    files, problems = folder.weights
    problems = problems + [f.problem for f in files if f.problem]
    if not files and not problems:
        # a folder without the weights it needs: model_not_found, as the log reading names "Cannot find any
        # model weights" (a corrupt or truncated file below stays a start-up failure)
        message = Msg("doctor.weights.none", path=folder.path)
        fix = Msg("doctor.weights.fix_copy", path=folder.path)
        if downloadable:
            return warned(
                "weights", Kind.MODEL_NOT_FOUND, Msg("doctor.will_download", problem=message),
                Msg("doctor.weights.fix.2"),
            )
        return failed("weights", Kind.MODEL_NOT_FOUND, message, fix)
    if problems:
        return failed(
            "weights", Kind.STARTUP_FAILURE, "; ".join(problems),
            Msg("doctor.weights.fix.1", path=folder.path),
        )
    total = sum(f.size for f in files)
    return passed("weights", Msg("doctor.weights.pass.1", count=len(files), mib=f'{total / MIB:,.0f}'))


def check_weight_size(folder: ModelFolder, config: dict[str, Any]) -> Check:
    """Files far smaller than the config implies: a wrong or partial download (or the wrong config)."""
    dims = dims_of(config)
    files, _ = folder.weights
    if dims is None or not files:
        return passed("weight_size", Msg("doctor.weight_size.pass.2"))
    expected = dims.parameters()
    declared = [f.elements for f in files]
    if all(n is not None for n in declared):
        found = sum(n or 0 for n in declared)
        unit = Msg("doctor.weight_size.unit_headers")
    else:
        width = TORCH_DTYPE_BYTES.get(str(config.get("torch_dtype") or config.get("dtype") or "bfloat16"), 2)
        if config.get("quantization_config"):
            width = 1  # 4- or 8-bit: judge by the generous side
        found = sum(f.size for f in files) // width
        unit = Msg("doctor.weight_size.unit_size")
    if found < expected * WEIGHT_SIZE_MIN_RATIO and not config.get("quantization_config"):
        return failed(
            "weight_size",
            Kind.STARTUP_FAILURE,
            Msg(
                "doctor.weight_size.msg.1",
                found=f"{found / 1000000.0:,.1f}",
                unit=unit,
                expected=f"{expected / 1000000.0:,.1f}",
                layers=dims.layers,
                hidden=dims.hidden,
                vocab=dims.vocab,
            ),
            Msg("doctor.weight_size.fix.1", path=folder.path),
        )
    return passed(
        "weight_size",
        Msg(
            "doctor.weight_size.pass.1",
            found=f"{found / 1000000.0:,.1f}",
            unit=unit,
            expected=f"{expected / 1000000.0:,.1f}",
        ),
    )


def check_tokenizer(folder: ModelFolder, downloadable: bool = False) -> Check:
    present = [n for n in TOKENIZER_FILES if (folder.path / n).is_file()]
    present += [p.name for p in folder.path.glob("*.tiktoken")]
    if not present:
        message = Msg("doctor.tokenizer.none", files=", ".join(TOKENIZER_FILES), path=folder.path)
        if downloadable:
            return warned(
                "tokenizer",
                Kind.STARTUP_FAILURE,
                Msg("doctor.will_download", problem=message),
                Msg("doctor.tokenizer.fix.2"),
            )
        return failed(
            "tokenizer",
            Kind.STARTUP_FAILURE,
            message,
            Msg("doctor.tokenizer.fix.1", path=folder.path),
        )
    if "tokenizer.json" in present:
        _, error = folder.tokenizer_json
        if error:
            return failed(
                "tokenizer",
                Kind.STARTUP_FAILURE,
                Msg("doctor.tokenizer.msg.1", error=error),
                Msg("doctor.tokenizer.fix.3", path=folder.path),
            )
    return passed("tokenizer", Msg("doctor.tokenizer.pass.1", files=", ".join(present)))


def _template_syntax_error(template: str) -> str | None:
    """Parse the template with jinja2 when the app has it (it comes with chainlit)."""
    try:
        import jinja2
    except ImportError:
        return None
    try:
        jinja2.Environment().parse(template)
    except jinja2.TemplateSyntaxError as exc:
        return f"{exc.message} (line {exc.lineno})"
    return None


def check_chat_template(folder: ModelFolder, extra_args: tuple[str, ...]) -> Check:
    """Blocking, not a warning: vLLM starts without a template, then refuses every chat request with 400,
    and this app only ever sends chat requests; refusing in seconds beats a minute of start-up and a
    broken first message. --chat-template in CHAT_EXTRA_ARGS supplies one and clears the finding."""
    if has_flag(extra_args, "--chat-template"):
        return passed("chat_template", Msg("doctor.chat_template.pass.2"))
    template, source = folder.chat_template
    if template is None:
        return failed(
            "chat_template",
            Kind.CHAT_TEMPLATE,
            Msg("doctor.chat_template.msg.1"),
            Msg("doctor.chat_template.fix.1", path=folder.path),
        )
    error = _template_syntax_error(template)
    if error and source:
        return failed(
            "chat_template",
            Kind.CHAT_TEMPLATE,
            Msg("doctor.chat_template.msg.2", source=source, error=error),
            Msg("doctor.chat_template.fix.2", file=folder.path / source),
        )
    return passed("chat_template", Msg("doctor.chat_template.pass.1", source=source))


_SPECIAL = re.compile(r"<\|[^|<>\s]{1,40}\|>|</s>|<end_of_turn>|<eos>|<\|endoftext\|>")


def template_turn_end(template: str) -> str | None:
    """The special token that closes a turn in the template (e.g. <|im_end|>), by a simple heuristic:
    the first end-like special token after the first message content, else the first end-like one."""

    def end_like(token: str) -> bool:
        name = token.strip("<|>").lower()
        return token.startswith("</") or (any(word in name for word in ("end", "eot", "eos")) and "header" not in name)

    tokens = [(m.start(), m.group()) for m in _SPECIAL.finditer(template) if end_like(m.group())]
    if not tokens:
        return None
    content_at = template.find("content")
    after = [tok for at, tok in tokens if content_at >= 0 and at > content_at]
    return after[0] if after else tokens[0][1]


def _token_text(value: Any) -> str | None:
    """tokenizer_config tokens are strings or {"content": ...} objects."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def _ids(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
    return []


def check_eos(folder: ModelFolder, config: dict[str, Any]) -> Check:
    """vLLM stops on the tokenizer's eos and generation_config's eos ids; a template whose turn end is
    neither runs on, and a bos/pad id among them ends answers at once."""
    cfg = text_config(config)
    eos_text = _token_text(folder.tokenizer_config.get("eos_token"))
    eos_id = folder.token_id(eos_text) if eos_text else None
    gen_ids = _ids(folder.generation_config.get("eos_token_id"))
    cfg_ids = _ids(cfg.get("eos_token_id"))
    stop_ids = set(gen_ids) | set(cfg_ids if not gen_ids else []) | ({eos_id} if eos_id is not None else set())
    template, _ = folder.chat_template
    turn_end = template_turn_end(template) if template else None
    turn_id = folder.token_id(turn_end) if turn_end else None
    problems: list[Msg] = []
    fixes: list[Msg] = []
    if not stop_ids and eos_text is None:
        problems.append(Msg("doctor.eos.no_eos"))
        fixes.append(Msg("doctor.eos.fix_no_eos"))
    if eos_id is not None and gen_ids and eos_id not in gen_ids:
        problems.append(Msg("doctor.eos.not_in_generation", eos=eos_text, id=eos_id, ids=gen_ids))
        fixes.append(Msg("doctor.eos.fix_add_id", id=eos_id))
    if cfg_ids and gen_ids and not set(cfg_ids) & set(gen_ids):
        problems.append(Msg("doctor.eos.differs", config_ids=cfg_ids, generation_ids=gen_ids))
        fixes.append(Msg("doctor.eos.fix_agree"))
    bos = _ids(cfg.get("bos_token_id"))
    if bos and bos[0] in stop_ids and bos[0] != eos_id:
        problems.append(Msg("doctor.eos.bos_is_eos", id=bos[0]))
        fixes.append(Msg("doctor.eos.fix_remove_bos", id=bos[0]))
    if turn_end and turn_end != eos_text and (turn_id is None or turn_id not in stop_ids):
        shown = f"{turn_end} (id {turn_id})" if turn_id is not None else turn_end
        problems.append(Msg("doctor.eos.turn_not_stop", turn=shown, eos=eos_text, ids=sorted(stop_ids)))
        fixes.append(Msg("doctor.eos.fix_turn", turn=turn_end))
    if problems:
        return warned("eos", Kind.EMPTY_OUTPUT, Msg("doctor.list", items=problems),
                      Msg("doctor.eos.fixes", items=fixes))
    shown_turn = Msg("doctor.eos.turn_end", turn=turn_end) if turn_end else ""
    return passed("eos", Msg("doctor.eos.pass.1", eos=eos_text or "?", ids=sorted(stop_ids), turn=shown_turn))


# ------------------------------------------------------------------------------------------------
# Registration: report order, and what each check needs from the context
# ------------------------------------------------------------------------------------------------


@FILE_CHECKS.register("weights", needs=("folder", "config"))
def _weights(ctx: Context) -> Check:
    return check_weights(ctx.folder, ctx.downloadable)


@FILE_CHECKS.register("weight_size", needs=("folder", "config"))
def _weight_size(ctx: Context) -> Check:
    return check_weight_size(ctx.folder, ctx.config)


@FILE_CHECKS.register("tokenizer", needs=("folder", "config"))
def _tokenizer(ctx: Context) -> Check:
    return check_tokenizer(ctx.folder, ctx.downloadable)


@FILE_CHECKS.register("chat_template", needs=("folder", "config"))
def _chat_template(ctx: Context) -> Check:
    return check_chat_template(ctx.folder, ctx.cfg.extra_args)


@FILE_CHECKS.register("eos", needs=("folder", "config"))
def _eos(ctx: Context) -> Check:
    return check_eos(ctx.folder, ctx.config)
