"""The model folder's files: weights (present, intact, sized like the config says), tokenizer, chat template, EOS.

Each finding names the file to fetch again or the flag that supplies what is missing; for a hub model
vLLM downloads missing files itself, so their absence warns instead of blocking.
"""

from __future__ import annotations

import re
from typing import Any

from chainlit_app.diagnostics.taxonomy import Kind

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
        message = f"no weights (*.safetensors or *.bin) in {folder.path}"
        fix = f"Copy the model's weight files (model*.safetensors with their index json) into {folder.path}."
        if downloadable:
            return warned(
                "weights", Kind.STARTUP_FAILURE, message + "; vLLM will download them if the hub is reachable",
                "Download the whole repo beforehand (`huggingface-cli download REPO`) on offline machines.",
            )
        return failed("weights", Kind.STARTUP_FAILURE, message, fix)
    if problems:
        return failed(
            "weights", Kind.STARTUP_FAILURE, "; ".join(problems),
            f"Download the named weight files again into {folder.path} (compare sizes with the repo's listing).",
        )
    total = sum(f.size for f in files)
    return passed("weights", f"{len(files)} weight file(s), {total / MIB:,.0f} MiB, headers intact")


def check_weight_size(folder: ModelFolder, config: dict[str, Any]) -> Check:
    """Files far smaller than the config implies: a wrong or partial download (or the wrong config)."""
    dims = dims_of(config)
    files, _ = folder.weights
    if dims is None or not files:
        return passed("weight_size", "not estimated (config lacks the shape numbers)")
    expected = dims.parameters()
    declared = [f.elements for f in files]
    if all(n is not None for n in declared):
        found = sum(n or 0 for n in declared)
        unit = "parameters in the safetensors headers"
    else:
        width = TORCH_DTYPE_BYTES.get(str(config.get("torch_dtype") or config.get("dtype") or "bfloat16"), 2)
        if config.get("quantization_config"):
            width = 1  # 4- or 8-bit: judge by the generous side
        found = sum(f.size for f in files) // width
        unit = "parameters by file size"
    if found < expected * WEIGHT_SIZE_MIN_RATIO and not config.get("quantization_config"):
        return failed(
            "weight_size", Kind.STARTUP_FAILURE,
            f"the weights hold about {found / 1e6:,.1f} M {unit}; config.json implies about {expected / 1e6:,.1f} M "
            f"({dims.layers} layers, hidden {dims.hidden}, vocab {dims.vocab})",
            f"The weights do not belong to this config.json or are partial: download the model again into "
            f"{folder.path}.",
        )
    return passed("weight_size", f"about {found / 1e6:,.1f} M {unit} (config implies about {expected / 1e6:,.1f} M)")


def check_tokenizer(folder: ModelFolder, downloadable: bool = False) -> Check:
    present = [n for n in TOKENIZER_FILES if (folder.path / n).is_file()]
    present += [p.name for p in folder.path.glob("*.tiktoken")]
    if not present:
        message = f"no tokenizer files ({', '.join(TOKENIZER_FILES)}) in {folder.path}"
        if downloadable:
            return warned("tokenizer", Kind.STARTUP_FAILURE, message + "; vLLM will download them if the hub is "
                          "reachable", "Download the whole repo beforehand on offline machines.")
        return failed(
            "tokenizer", Kind.STARTUP_FAILURE, message,
            f"Copy tokenizer.json (or tokenizer.model) and tokenizer_config.json from the model's repo into "
            f"{folder.path}, or point --tokenizer in CHAT_EXTRA_ARGS at a folder that has them.",
        )
    if "tokenizer.json" in present:
        _, error = folder.tokenizer_json
        if error:
            return failed("tokenizer", Kind.STARTUP_FAILURE, f"tokenizer.json is {error}",
                          f"Copy tokenizer.json again from the model's repo into {folder.path}.")
    return passed("tokenizer", f"tokenizer files: {', '.join(present)}")


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
        return passed("chat_template", "given by --chat-template in CHAT_EXTRA_ARGS")
    template, source = folder.chat_template
    if template is None:
        return failed(
            "chat_template", Kind.CHAT_TEMPLATE,
            "no chat template (tokenizer_config.json chat_template, chat_template.jinja or chat_template.json): "
            "vLLM would start, then answer every chat request with 400 'default chat template is no longer "
            "allowed'",
            f"Add chat_template.jinja to {folder.path} (the model's instruct variant has one), or add "
            "--chat-template FILE to CHAT_EXTRA_ARGS; base models without a template are not chat models.",
        )
    error = _template_syntax_error(template)
    if error and source:
        return failed(
            "chat_template", Kind.CHAT_TEMPLATE, f"the chat template in {source} does not parse: {error}",
            f"Fix the Jinja syntax in {folder.path / source}, or add --chat-template FILE to CHAT_EXTRA_ARGS.",
        )
    return passed("chat_template", f"chat template from {source}")


_SPECIAL = re.compile(r"<\|[^|<>\s]{1,40}\|>|</s>|<end_of_turn>|<eos>|<\|endoftext\|>")


def template_turn_end(template: str) -> str | None:
    """The special token that closes a turn in the template (e.g. <|im_end|>), by a simple heuristic:
    the first end-like special token after the first message content, else the first end-like one."""
    def end_like(token: str) -> bool:
        name = token.strip("<|>").lower()
        return token.startswith("</") or (
            any(word in name for word in ("end", "eot", "eos")) and "header" not in name
        )

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
    problems: list[str] = []
    fixes: list[str] = []
    if not stop_ids and eos_text is None:
        problems.append("no eos token anywhere (tokenizer_config.json eos_token, generation_config.json "
                        "eos_token_id, config.json eos_token_id)")
        fixes.append("set eos_token in tokenizer_config.json and eos_token_id in generation_config.json")
    if eos_id is not None and gen_ids and eos_id not in gen_ids:
        problems.append(f"tokenizer eos {eos_text} (id {eos_id}) is not in generation_config.json eos_token_id "
                        f"{gen_ids}")
        fixes.append(f"add {eos_id} to eos_token_id in generation_config.json")
    if cfg_ids and gen_ids and not set(cfg_ids) & set(gen_ids):
        problems.append(f"config.json eos_token_id {cfg_ids} differs from generation_config.json {gen_ids}")
        fixes.append("make eos_token_id agree in config.json and generation_config.json")
    bos = _ids(cfg.get("bos_token_id"))
    if bos and bos[0] in stop_ids and bos[0] != eos_id:
        problems.append(f"the bos id {bos[0]} is an eos id: answers may end at once (empty output)")
        fixes.append(f"remove {bos[0]} from eos_token_id in generation_config.json / config.json")
    if turn_end and turn_end != eos_text and (turn_id is None or turn_id not in stop_ids):
        shown = f"{turn_end} (id {turn_id})" if turn_id is not None else turn_end
        problems.append(f"the chat template ends turns with {shown}, which is not a stop token "
                        f"(eos {eos_text}, ids {sorted(stop_ids)}): answers may run on past the turn")
        fixes.append(f"add the id of {turn_end} to eos_token_id in generation_config.json, or set eos_token to "
                     f"{turn_end} in tokenizer_config.json")
    if problems:
        return warned("eos", Kind.EMPTY_OUTPUT, "; ".join(problems), "; ".join(fixes).capitalize() + ".")
    shown_turn = f", template turn end {turn_end}" if turn_end else ""
    return passed("eos", f"eos {eos_text or '?'} ids {sorted(stop_ids)}{shown_turn}: consistent")

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
