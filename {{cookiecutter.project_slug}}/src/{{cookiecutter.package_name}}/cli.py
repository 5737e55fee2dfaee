"""Command line: `eval`, `baseline`, `gate` and `calibrate` (the judge against human labels).
The nox sessions are thin wrappers over it.

Also `compare` (accept or reject a candidate run against a baseline run on given qrels, any
system's TREC or JSON files), `export-qrels` and `export-run` (for trec_eval, ranx & co.).

Exit codes: 0 success (gate passed), 2 invalid input or a baseline that cannot be compared,
3 quality regression (gate failed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .calibration import calibrate, format_calibration
from .compare import run_compare
from .config import DEFAULT_PATH, Config, load_config
from .data import load_corpus, load_golden
from .errors import EvalInputError, ExitCode
from .evaluate import evaluate
from .export import export_qrels, export_run
from .files import write_atomic
from .gate import compare, format_result
from .generation import cache_line
from .holdout import evaluate_holdout, format_holdout
from .html_report import html_report
from .receipt import check_same_data
from .report import format_table, read_report, write_report
from .significance import check_slice_tags
from .summary import markdown_summary, write_summary


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_eval(config: Config, report_path: Path | None, quiet: bool) -> ExitCode:
    judge_stats: dict[str, int] = {}
    report = evaluate(config, judge_stats)
    target = report_path or config.report
    write_report(target, report)
    if not quiet:
        print(format_table(report))
        print(cache_line(judge_stats))
    print(f"\nwrote {_relative(target)}")
    return ExitCode.OK


def run_baseline(config: Config) -> ExitCode:
    judge_stats: dict[str, int] = {}
    report = evaluate(config, judge_stats)
    write_report(config.baseline, report)
    print(format_table(report))
    print(cache_line(judge_stats))
    print(f"\nwrote the new baseline {_relative(config.baseline)}: review its diff and commit it")
    return ExitCode.OK


def run_gate(config: Config, baseline_path: Path | None, accept_changed_data: bool = False) -> ExitCode:
    baseline_path = baseline_path or config.baseline
    baseline = read_report(baseline_path)  # fail fast, before the evaluation runs
    # A malformed line or a slice floor on a missing tag first: each names its line.
    check_slice_tags(config, load_golden(config.golden, load_corpus(config.corpus)))
    data_notes = check_same_data(baseline, config, baseline_path, accept=accept_changed_data)
    judge_stats: dict[str, int] = {}
    report = evaluate(config, judge_stats)
    holdout = evaluate_holdout(config, report)
    # may refuse: exit 2, nothing written
    result = compare(report, baseline, config.gate, baseline_path, config.stats)
    result.notes[:0] = data_notes
    report["comparison"] = result.to_dict()
    if holdout is not None:
        report["holdout"] = holdout
    write_report(config.report, report)
    summary = write_summary(markdown_summary(report), config.summary)
    write_atomic(config.html, html_report(report, baseline))
    counts = report["counts"]
    print(
        f"Gate: {counts['evaluated']} of {counts['questions']} questions evaluated "
        f"({counts['left_out']} unanswerable left out); baseline {_relative(baseline_path)}; "
        f"report {_relative(config.report)}"
    )
    if holdout is not None:
        print(format_holdout(holdout, report))
    print(f"summary: {_relative(summary)}; HTML report: {_relative(config.html)}")
    print(format_result(result, config.gate.tolerance))
    print(cache_line(judge_stats))
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
    gate.add_argument(
        "--accept-changed-data",
        action="store_true",
        help="compare even though the corpus or golden set differs from the baseline's (see its receipt)",
    )
    commands.add_parser("calibrate", help="score the judge against the human labels ([judge] labels)")
    add_interop_commands(commands)
    return parser


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return int(text)


def add_interop_commands(commands: argparse._SubParsersAction) -> None:
    """`compare`, `export-qrels`, `export-run`: TREC / JSON files in and out (see trec.py)."""
    cmp = commands.add_parser(
        "compare",
        help="accept (exit 0) or reject (exit 3) a candidate run against a baseline run; needs no eval.toml",
    )
    cmp.add_argument(
        "--qrels", type=Path, required=True, help="TREC qrels or JSON {qid: [ids] | {id: grade}}"
    )
    cmp.add_argument(
        "--runs", type=Path, nargs="+", required=True, help="TREC runs or JSON files holding both runs"
    )
    cmp.add_argument("--baseline", required=True, help="name of the baseline run (TREC tag or JSON key)")
    cmp.add_argument("--candidate", required=True, help="name of the candidate run")
    cmp.add_argument("--must-pass", nargs="+", default=[], metavar="QID", help="queries that must hit")
    cmp.add_argument("--k", type=_positive, required=True, help="cutoff: how many results count")
    cmp.add_argument("--output", type=Path, help="also write the verdict as JSON here")
    qrels = commands.add_parser("export-qrels", help="write the golden set as TREC qrels (.json: JSON)")
    qrels.add_argument("output", type=Path)
    run = commands.add_parser("export-run", help="evaluate and write the retriever's output as a TREC run")
    run.add_argument("output", type=Path, help="TREC run file (.json: JSON {qid: {docid: score}})")
    run.add_argument("--tag", default="{{ cookiecutter.package_name }}", help="run name (last TREC column)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "compare":  # needs only the files it is given, no eval.toml
            return run_compare(
                args.qrels, args.runs, args.baseline, args.candidate, args.k, args.must_pass, args.output
            )
        config = load_config(args.config)
        if args.command == "export-qrels":
            print(f"wrote {export_qrels(config, args.output)} queries to {args.output}")
            return ExitCode.OK
        if args.command == "export-run":
            for qid in export_run(config, args.output, args.tag):
                print(
                    f"warning: {qid}: tied scores not in trec_eval's order; other tools rank them otherwise"
                )
            print(f"wrote run {args.tag!r} to {args.output}")
            return ExitCode.OK
        if args.command == "eval":
            return run_eval(config, args.report, args.quiet)
        if args.command == "baseline":
            return run_baseline(config)
        if args.command == "calibrate":
            print(format_calibration(calibrate(config)))
            return ExitCode.OK
        return run_gate(config, args.baseline, args.accept_changed_data)
    except EvalInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return ExitCode.INVALID_INPUT
