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
from typing import TextIO

from .findings import Report
from .taxonomy import kind_info
from .whole_log import classify_file


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
    config = config_from_settings(Settings(), args.model)
    checks = run_preflight(config)
    blocking = is_blocking(checks)
    if args.json:
        payload = {"model": config.model, "blocking": blocking, "checks": [c.to_json() for c in checks]}
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
    return 1 if blocking else 0


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
    doctor.set_defaults(handler=_cmd_doctor)
    # ------------------------------------------------------------------------------------------
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.handler(args, out or sys.stdout)
    return result


if __name__ == "__main__":
    sys.exit(main())
