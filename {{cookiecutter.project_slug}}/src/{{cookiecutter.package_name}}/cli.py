"""Command line: `eval`, `baseline`, `gate` and `calibrate` (the judge against human labels).
The nox sessions are thin wrappers over it.

Exit codes: 0 success (gate passed), 2 invalid input or a baseline that cannot be compared,
3 quality regression (gate failed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .calibration import calibrate, format_calibration
from .config import DEFAULT_PATH, Config, load_config
from .errors import EvalInputError, ExitCode
from .evaluate import evaluate
from .gate import compare, format_result
from .generation import cache_line
from .report import format_table, read_report, write_report


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_eval(config: Config, report_path: Path | None, quiet: bool) -> ExitCode:
    report = evaluate(config)
    target = report_path or config.report
    write_report(target, report)
    if not quiet:
        print(format_table(report))
    print(f"\nwrote {_relative(target)}")
    return ExitCode.OK


def run_baseline(config: Config) -> ExitCode:
    report = evaluate(config)
    write_report(config.baseline, report)
    print(format_table(report))
    print(f"\nwrote the new baseline {_relative(config.baseline)}: review its diff and commit it")
    return ExitCode.OK


def run_gate(config: Config, baseline_path: Path | None) -> ExitCode:
    baseline_path = baseline_path or config.baseline
    baseline = read_report(baseline_path)  # fail fast, before the evaluation runs
    report = evaluate(config)
    result = compare(report, baseline, config.gate, baseline_path)  # may refuse: exit 2, nothing written
    write_report(config.report, report)
    counts = report["counts"]
    print(
        f"Gate: {counts['evaluated']} of {counts['questions']} questions evaluated "
        f"({counts['left_out']} unanswerable left out); baseline {_relative(baseline_path)}; "
        f"report {_relative(config.report)}"
    )
    print(format_result(result, config.gate.tolerance))
    print(cache_line(report))
    return ExitCode.OK if result.passed else ExitCode.REGRESSION


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="{{ cookiecutter.package_name }}",
        description="Evaluate retrieval on the golden set and gate regressions against a baseline.",
        epilog="Exit codes: 0 ok, 2 invalid input or incomparable baseline, 3 quality regression.",
    )
    parser.add_argument(
        "--config", type=Path, default=DEFAULT_PATH, help="settings file (default: eval.toml)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("eval", help="evaluate, print the per-question table, write the JSON report")
    run.add_argument("--report", type=Path, help="where to write the report (default: [data] report)")
    run.add_argument("--quiet", action="store_true", help="print only the report path")
    commands.add_parser("baseline", help="evaluate and overwrite the committed baseline report")
    gate = commands.add_parser("gate", help="evaluate and compare with the baseline; exit 3 on regression")
    gate.add_argument("--baseline", type=Path, help="baseline report (default: [data] baseline)")
    commands.add_parser("calibrate", help="score the judge against the human labels ([judge] labels)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = load_config(args.config)
        if args.command == "eval":
            return run_eval(config, args.report, args.quiet)
        if args.command == "baseline":
            return run_baseline(config)
        if args.command == "calibrate":
            print(format_calibration(calibrate(config)))
            return ExitCode.OK
        return run_gate(config, args.baseline)
    except EvalInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return ExitCode.INVALID_INPUT
