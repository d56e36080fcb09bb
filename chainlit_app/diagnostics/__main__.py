"""Command line: `python -m chainlit_app.diagnostics classify [--json] FILE...`.

For people whose vLLM runs elsewhere: point it at any vLLM log and get the root cause and the fix.
With --json it prints one JSON object per file and line (the contract other tools rely on).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from .findings import Report
from .taxonomy import kind_info
from .whole_log import classify_file

if TYPE_CHECKING:  # the doctor and the remedies load settings and httpx: `classify` does not pay for them
    from chainlit_app.doctor import Check, PreflightConfig
    from chainlit_app.remedies import OverridesStore
    from chainlit_app.remedies.doctor_fix import FixPlan
    from chainlit_app.settings import Settings


def _print_text(path: str, report: Report, out: TextIO) -> None:
    """Readable report: root cause with title, evidence and fix steps first, consequences after."""
    print(f"== {path} ({report.lines} lines)", file=out)
    root = report.root
    if root is None:
        print("   healthy: no failure found", file=out)
        return
    info = kind_info(root.kind)
    title = info.title if info else root.kind
    print(f"   Root cause: {root.kind} - {title}", file=out)
    print(f"   line {root.line}: {root.text}", file=out)
    if info:
        for line in textwrap.wrap(info.explanation, 96):
            print(f"   {line}", file=out)
    print(f"   Hint: {root.hint}", file=out)
    if info:
        print("   Fix:", file=out)
        for number, step in enumerate(info.fix, start=1):
            wrapped = textwrap.wrap(step, 92)
            print(f"     {number}. {wrapped[0]}", file=out)
            for cont in wrapped[1:]:
                print(f"        {cont}", file=out)
    others = [f for f in report.findings if not f.root]
    if others:
        print("   Also seen (consequences or other symptoms):", file=out)
        for f in others:
            print(f"     line {f.line} [{f.kind}]: {f.text[:160]}", file=out)


def _cmd_classify(args: argparse.Namespace, out: TextIO) -> int:
    status = 0
    for path in args.files:
        try:
            report = classify_file(path, secrets=args.secret or ())
        except OSError as exc:
            print(f"{path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            status = 2
            continue
        if args.json:
            payload = {"file": path, "kind": report.kind, "findings": [f.to_json() for f in report.findings]}
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
                                      "checks": [c.to_json() for c in checks]}
        if plan is not None:
            payload["remedies"] = [{"check": c.name, "remedies": [p.to_json() for p in ps]} for c, ps in plan.proposals]
            payload["applied"] = [p.remedy.id for p in plan.applied]
            payload["held"] = [p.remedy.id for p in plan.held]
        print(json.dumps(payload, ensure_ascii=False), file=out)
        return 1 if blocking else 0
    where = config.model_dir or config.hub_id
    print(f"== doctor: {config.model}" + (f" ({where})" if str(where) != config.model else ""), file=out)
    width = max((len(c.name) for c in checks), default=0)
    for check in checks:
        print(f"{check.status.upper():<4}  {check.name:<{width}}  {check.message}", file=out)
        if check.status != "pass":
            label = "fix (blocking)" if check.blocking else "fix"
            for number, line in enumerate(textwrap.wrap(check.fix, 96 - width)):
                print(f"{'':<6}{'':<{width}}  {label + ': ' if number == 0 else '  '}{line}", file=out)
    fails = sum(c.status == "fail" for c in checks)
    warns = sum(c.status == "warn" for c in checks)
    verdict = "BLOCKED: fix the failures above before starting" if blocking else "ready to start vLLM"
    print(f"== {verdict} ({fails} failed, {warns} warnings, {time.monotonic() - started:.1f} s)", file=out)
    if plan is not None:
        _print_plan(plan, args.apply, out)
    return 1 if blocking else 0


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m chainlit_app.diagnostics",
        description="Diagnose vLLM failures from logs.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    classify = sub.add_parser("classify", help="name the root cause of one or more vLLM log files")
    classify.add_argument("files", nargs="+", metavar="FILE", help="vLLM server or client log files")
    classify.add_argument("--json", action="store_true", help="one JSON object per file per line")
    classify.add_argument(
        "--secret", action="append", metavar="VALUE", help="extra value to mask in evidence (repeatable)"
    )
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
    doctor.set_defaults(handler=_cmd_doctor)
    # ------------------------------------------------------------------------------------------
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.handler(args, out or sys.stdout)
    return result


if __name__ == "__main__":
    sys.exit(main())
