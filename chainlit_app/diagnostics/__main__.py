"""Command line: `python -m chainlit_app.diagnostics classify [--json] [--lang L] FILE...`.

For people whose vLLM runs elsewhere: point it at any vLLM log and get the root cause and the fix.
With --json it prints one JSON object per file and line (the contract other tools rely on); --lang
(en, zh-CN; default from the locale: LANGUAGE, LC_ALL, LC_MESSAGES, LANG) changes the texts only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from chainlit_app.i18n import LANGUAGES, Language, from_environment, localize, pick, set_language, t

from .findings import Finding, Report
from .taxonomy import kind_info
from .whole_log import classify_file, classify_stream

if TYPE_CHECKING:  # the doctor and the remedies load settings and httpx: `classify` does not pay for them
    from chainlit_app.doctor import Check, PreflightConfig
    from chainlit_app.remedies import OverridesStore
    from chainlit_app.remedies.doctor_fix import FixPlan
    from chainlit_app.settings import Settings


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` columns; a Chinese character takes two columns in a terminal."""
    wide = sum(1 for ch in text if "\u2e80" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef")
    return textwrap.wrap(text, width * len(text) // (len(text) + wide) if wide else width) or [""]


def _print_text(path: str, report: Report, out: TextIO) -> None:
    """Readable report: root cause with title, evidence and fix steps first, consequences after."""
    print(t("cli.classify.header", path=path, lines=report.lines), file=out)
    root = report.root
    if root is None:
        print(t("cli.classify.healthy"), file=out)
        return
    info = kind_info(root.kind)
    title = info.title if info else root.kind
    print(t("cli.classify.root", kind=root.kind, title=title), file=out)
    print(t("cli.classify.evidence", line=root.line, text=root.text), file=out)
    if info:
        for line in _wrap(info.explanation, 96):
            print(f"   {line}", file=out)
    print(t("cli.classify.hint", hint=localize(root.hint)), file=out)
    if info:
        print(t("cli.classify.fix"), file=out)
        for number, step in enumerate(info.fix, start=1):
            wrapped = _wrap(step, 92)
            print(f"     {number}. {wrapped[0]}", file=out)
            for cont in wrapped[1:]:
                print(f"        {cont}", file=out)
    others = [f for f in report.findings if not f.root]
    if others:
        print(t("cli.classify.also"), file=out)
        for f in others:
            print(t("cli.classify.other", line=f.line, kind=f.kind, text=f.text[:160]), file=out)


def _finding_json(finding: Finding) -> dict[str, object]:
    """The contract's shape; only the hint follows --lang."""
    return {**finding.to_json(), "hint": localize(finding.hint)}


def _cmd_classify(args: argparse.Namespace, out: TextIO) -> int:
    status = 0
    if args.files.count("-") > 1:  # standard input is read once: a second '-' would read nothing, 'healthy'
        print(t("cli.stdin_twice"), file=sys.stderr)
        return 2
    for path in args.files:
        try:
            if path == "-":
                report = classify_stream(sys.stdin.buffer, secrets=args.secret or ())
            else:
                report = classify_file(path, secrets=args.secret or ())
        except OSError as exc:
            print(t("cli.cannot_read", path=path, error=exc.strerror or exc), file=sys.stderr)
            status = 2
            continue
        if args.json:
            payload = {"file": path, "kind": report.kind, "findings": [_finding_json(f) for f in report.findings]}
            print(json.dumps(payload, ensure_ascii=False), file=out)
        else:
            _print_text(path, report, out)
    return status


def _cmd_doctor(args: argparse.Namespace, out: TextIO) -> int:
    """Run the preflight; imported lazily so `classify` does not pay for settings and httpx."""
    import time

    from chainlit_app.doctor import config_from_settings, is_blocking, run_preflight
    from chainlit_app.settings import Settings

    started = time.monotonic()
    settings = Settings()
    from chainlit_app.remedies import OverridesStore

    # The doctor checks the launch the app would make: the settings with the remedies' overrides.
    store = OverridesStore.in_data_dir(settings.storage.data_dir)
    overrides = store.launch_overrides()
    if store.problem:
        print(f"warning: {store.problem}", file=sys.stderr)
    config = config_from_settings(settings, args.model, overrides)
    checks = run_preflight(config)
    blocking = is_blocking(checks)
    plan = _plan(args, settings, config, checks, store) if args.fix or args.apply else None
    if args.json:
        payload: dict[str, object] = {"model": config.model, "blocking": blocking,
                                      "checks": [_check_json(c.to_json()) for c in checks]}
        if plan is not None:
            payload["remedies"] = [{"check": c.name, "remedies": [p.to_json() for p in ps]} for c, ps in plan.proposals]
            payload["applied"] = [p.remedy.id for p in plan.applied]
            payload["held"] = [p.remedy.id for p in plan.held]
        print(json.dumps(payload, ensure_ascii=False), file=out)
        return 1 if blocking else 0
    where = config.model_dir or config.hub_id
    print(t("cli.doctor.header", model=config.model, where=f" ({where})" if str(where) != config.model else ""),
          file=out)
    width = max((len(c.name) for c in checks), default=0)
    for check in checks:
        print(f"{check.status.upper():<4}  {check.name:<{width}}  {localize(check.message)}", file=out)
        if check.status != "pass":
            label = t("cli.doctor.fix_blocking") if check.blocking else t("cli.doctor.fix")
            for number, line in enumerate(_wrap(localize(check.fix), 96 - width)):
                print(f"{'':<6}{'':<{width}}  {label + ': ' if number == 0 else '  '}{line}", file=out)
    fails = sum(c.status == "fail" for c in checks)
    warns = sum(c.status == "warn" for c in checks)
    verdict = t("cli.doctor.blocked") if blocking else t("cli.doctor.ready")
    print(t("cli.doctor.summary", verdict=verdict, fails=fails, warns=warns,
            seconds=f"{time.monotonic() - started:.1f}"), file=out)
    if plan is not None:
        _print_plan(plan, args.apply, out)
    return 1 if blocking else 0


def _check_json(check: dict[str, object]) -> dict[str, object]:
    """A check's JSON; its message and fix follow --lang, the rest is the same in every language."""
    return {**check, "message": localize(check["message"]), "fix": localize(check["fix"])}


def _plan(args: argparse.Namespace, settings: Settings, config: PreflightConfig, checks: list[Check],
          store: OverridesStore) -> FixPlan:
    """`--fix`: the remedies for the checks that did not pass; `--apply`: also write them as overrides."""
    from chainlit_app.remedies.doctor_fix import apply_plan, plan_fixes

    plan = plan_fixes(settings, config, checks, store)
    return apply_plan(plan, store, set(args.confirm or ())) if args.apply else plan


def _print_plan(plan: FixPlan, applied: bool, out: TextIO) -> None:
    from chainlit_app.remedies.doctor_fix import describe

    print("== remedies:", file=out)
    for check, proposals in plan.proposals:
        if not proposals:
            print(f"   {check.name}: no automatic remedy (see the fix above)", file=out)
        for proposal in proposals:
            print(f"   {check.name}: {describe(proposal)}", file=out)
            if proposal.remedy.risk:
                print(f"      risk: {proposal.remedy.risk}", file=out)
    if applied:
        for proposal in plan.applied:
            print(f"   applied {proposal.remedy.id}; undo: {proposal.remedy.undo}", file=out)
        for proposal in plan.held:
            print(f"   not applied {proposal.remedy.id}: {proposal.remedy.risk} Confirm with --confirm "
                  f"{proposal.remedy.id}.", file=out)
        if not plan.applied and not plan.held:
            print("   nothing to apply", file=out)
    elif any(ps for _, ps in plan.proposals):
        print("   run again with --apply to write them as overrides (the next launch uses them)", file=out)


def _language(value: str) -> Language:
    """--lang: en or zh-CN (zh, zh_CN, zh-Hans too); anything else is refused, not silently English."""
    low = value.strip().lower().replace("_", "-")
    if low == "en" or low.startswith("en-") or pick(value) != "en":
        return pick(value)
    raise argparse.ArgumentTypeError(f"unknown language {value!r}: use one of {', '.join(LANGUAGES)}")


def _add_lang(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", type=_language, default=None, metavar="LANG",
                        help=f"language of the texts: {', '.join(LANGUAGES)} (default: from the locale)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m chainlit_app.diagnostics",
        description="Diagnose vLLM failures from logs.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    classify = sub.add_parser("classify", help="name the root cause of one or more vLLM log files")
    classify.add_argument("files", nargs="+", metavar="FILE",
                          help="vLLM server or client log files; - reads standard input (docker logs vllm 2>&1 | ...)")
    classify.add_argument("--json", action="store_true", help="one JSON object per file per line")
    classify.add_argument(
        "--secret", action="append", metavar="VALUE", help="extra value to mask in evidence (repeatable)"
    )
    _add_lang(classify)
    classify.set_defaults(handler=_cmd_classify)

    # ------------------------------------------------------------------------------------------
    # DOCTOR SUBCOMMAND (owned by chainlit_app.doctor): non-zero exit on blocking findings.
    doctor = sub.add_parser("doctor", help="preflight checks before spawning vLLM")
    doctor.add_argument("--json", action="store_true", help="one JSON object with every check")
    doctor.add_argument(
        "--model", metavar="M", help="model folder, Hugging Face repo id or `demo` (default: CHAT_MODEL)"
    )
    doctor.add_argument("--fix", action="store_true", help="print the remedies for what the doctor finds")
    doctor.add_argument("--apply", action="store_true",
                        help="write the safe remedies as overrides in the data folder (implies --fix)")
    doctor.add_argument("--confirm", action="append", metavar="REMEDY",
                        help="also apply this unsafe remedy with --apply, after reading its risk (repeatable)")
    _add_lang(doctor)
    doctor.set_defaults(handler=_cmd_doctor)
    # ------------------------------------------------------------------------------------------
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    set_language(args.lang or from_environment())
    result: int = args.handler(args, out or sys.stdout)
    return result


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `classify … | head`: the reader left; Python's documented way to go quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)  # 128 + SIGPIPE, as a shell reports a pipe's writer that the reader left
