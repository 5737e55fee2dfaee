"""The commands that evaluate: `eval`, `baseline` and `gate` (and their `--dry-run`).

Each checks what it will write (run_files.py) and what it may spend ([run] max_cost) before
any call, runs the pipeline (run.py), checks that the inputs are the ones the team's code was
given, and writes and prints its reports. The gate adds: the baseline read and checked first,
every configured check makeable on the evaluated data (require_checkable), then the verdict
(gate/rules.py) in three views.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import cost
from .api import System
from .calling.outputs import OutputCache, complete_identity
from .errors import EvalInputError, ExitCode
from .estimate import Planned, estimate_lines, estimate_run, require_within
from .execution.heap import paused
from .gate.fit import check_baseline, describe, first_baseline_fix, fit_baseline
from .gate.integrity import check_reproduces, check_same_measurement
from .gate.receipt import check_same_data, check_same_engine
from .gate.rules import compare
from .gate.significance import check_slice_tags, design_lines
from .inputs.files import write_atomic
from .inputs.reports import Report, read_report, write_report
from .inputs.unchanged import check_unchanged, fingerprint
from .render.console import cache_line, calls_line, console_verdict, format_table
from .render.html import html_report
from .render.markdown import markdown_summary, write_summary
from .render.progress import Progress
from .render.view import gate_view
from .run import (
    Built,
    Inputs,
    check_determinism,
    cost_section,
    evaluate,
    evaluate_holdout,
    evaluate_split,
    load_inputs,
    record_trust,
    run_section,
    running,
)
from .run_files import check_outputs, named_inputs
from .settings.config import Config
from .settings.identity import system_identity
from .settings.schema import MAX_RESAMPLED_CELLS
from .terminal import interactive

# The gate compares at least this many evaluated questions: one question has no spread, so
# no paired interval, no Student-t bound and no test; every change would be all or nothing.
MIN_GATED_QUESTIONS = 2


def require_checkable(config: Config, report: Report) -> None:
    """Every check the gate is configured to make can be made on `report`, or EvalInputError
    saying which cannot: a verdict of 0 means every floor, slice floor and must-pass question
    was checked on evaluated data, never that one was skipped."""
    if report.counts.evaluated < MIN_GATED_QUESTIONS:
        raise EvalInputError(
            config.golden,
            f"only {report.counts.evaluated} question(s) evaluated; the gate compares at least "
            f"{MIN_GATED_QUESTIONS} (one question has no spread to test)",
            "add answerable questions to the golden set",
        )
    for metric in config.gate.floors:
        if str(metric) not in report.aggregate:
            raise EvalInputError(
                config.path,
                f"[gate.floors] {metric}: the report has no value for it",
                "add it to [retrieval] metrics, or remove the floor",
                config.line_of("gate", "floors", str(metric)),
            )
    for tag, floors in config.gate.slice_floors.items():
        piece = report.slices.get(tag)
        line = config.line_of("gate", "slices", tag)
        if piece is None or piece.evaluated == 0 or piece.metrics is None:
            raise EvalInputError(
                config.path,
                f"[gate.slices] {tag!r}: no evaluated question has this tag, so its floors cannot be checked",
                "tag answerable questions with it, or remove the table",
                line,
            )
        absent = [str(metric) for metric in floors if str(metric) not in piece.metrics]
        if absent:
            raise EvalInputError(
                config.path,
                f"[gate.slices] {tag!r}: the report has no value for {', '.join(absent)}",
                "add it to [retrieval] metrics, or remove the floor",
                line,
            )
    unchecked = [row.id for row in report.questions if row.must_pass and row.metrics is None]
    if unchecked:
        raise EvalInputError(
            config.golden,
            f"must-pass question(s) {', '.join(unchecked)} were not evaluated",
            'give them relevant documents, or set "must_pass": false',
        )


def _require_memory(config: Config, questions: int) -> None:
    """The bootstrap holds resamples x questions numbers at once: refuse a product that would
    not fit a CI machine (settings/schema.py, MAX_RESAMPLED_CELLS) before evaluating."""
    resamples = config.stats.resamples
    if resamples * questions > MAX_RESAMPLED_CELLS:
        fewer = max(100, MAX_RESAMPLED_CELLS // max(questions, 1))
        raise EvalInputError(
            config.path,
            f"stats.resamples: {resamples:,} resamples x {questions:,} questions is more than the "
            f"{MAX_RESAMPLED_CELLS:,} numbers the gate holds in memory at once",
            f"set resamples = {fewer} or fewer",
            config.line_of("stats", "resamples"),
        )


def _cached_answers(config: Config, system: System) -> Callable[[str], str | None]:
    """The output cache's answer text to a turn (by Turn.key) for this system, peeked, not
    served; None when it holds none (or the cache is off)."""
    identity = system_identity(config, system.code)
    if identity is None:
        return lambda key: None
    identity = complete_identity(
        identity, (config.retriever, config.generation), (config.path.parent, Path.cwd())
    )
    cache = OutputCache(config.run.output_cache_file, identity)

    def answer_of(key: str) -> str | None:
        answer = cache.answer_for(key, peek=True)
        return None if answer is None else answer.text

    return answer_of


def estimate_cost(config: Config, system: System, command: str, inputs: Inputs) -> list[Planned]:
    """What `command` will cost, from its inputs, before any call (estimate.py)."""
    held_out = inputs.holdout or []
    cached = _cached_answers(config, system)
    return estimate_run(config, system, command, inputs.corpus, inputs.questions, held_out, cached)


def run_dry(config: Config, system: System, command: str) -> ExitCode:
    """`--dry-run` of eval, baseline and gate: print the estimate; call nothing, write nothing."""
    inputs = load_inputs(config, holdout=command == "gate")
    for line in estimate_lines(estimate_cost(config, system, command, inputs), command):
        print(line)
    return ExitCode.OK


def require_affordable(config: Config, system: System, command: str, inputs: Inputs | None = None) -> None:
    """[run] max_cost, when set: exit 2 before any model call when the estimate is above it."""
    if config.run.max_cost is None:
        return
    inputs = inputs or load_inputs(config, holdout=command == "gate")
    require_within(config, estimate_cost(config, system, command, inputs))


def save_report(path: Path, report: Report) -> None:
    """write_report, with the cyclic collector paused: a large report's JSON is millions of
    small objects, none of them garbage (execution/heap.py)."""
    with paused():
        write_report(path, report)


def answers_line(calls: dict[str, Any]) -> str:
    """Where this run's answers came from (printed by eval, baseline and gate after the calls
    line): "Answers: 60 from the output cache, 0 generator calls" is a rerun of an unchanged
    system that cost nothing."""
    made = calls.get("generator_calls", 0)
    generated = f"{made} generator call{'' if made == 1 else 's'}"
    if calls.get("output_cache", "off") == "off":
        return f"Answers: {generated} (the output cache is off: [run] output_cache)"
    return f"Answers: {calls.get('answers_cached', 0)} from the output cache, {generated}"


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _evaluate_and_write(
    config: Config,
    system: System,
    target: Path,
    quiet: bool,
    show_progress: bool,
    *,
    baseline: bool = False,
    show_all: bool = False,
) -> Report:
    """Evaluate, write the report to `target` (in its baseline form for `baseline`), print the
    summary and the questions that failed (every question with `show_all`) unless quiet."""
    judge_stats: dict[str, int] = {}
    before = fingerprint(named_inputs(config, baseline=not baseline))
    report = evaluate(config, system, judge_stats, Progress(show_progress and interactive()))
    check_unchanged(before)  # the team's code ran: its inputs must be the ones it was given
    save_report(target, report.for_baseline() if baseline else report)
    if not quiet:
        print(format_table(report, config.display.max_listed, show_all=show_all))
        print(cache_line(judge_stats))
        if report.run is not None:
            print(calls_line(report.run["system"]))
            print(answers_line(report.run["system"]))
            for line in cost.cost_lines(report.run.get("cost", {})):
                print(line)
    return report


def run_eval(
    config: Config,
    system: System,
    report_path: Path | None,
    quiet: bool,
    show_progress: bool = False,
    show_all: bool = False,
) -> ExitCode:
    """`eval`: evaluate, print the table (unless quiet), write the report."""
    check_outputs(config, "eval", report_path)
    require_affordable(config, system, "eval")
    target = report_path or config.report
    _evaluate_and_write(config, system, target, quiet, show_progress, show_all=show_all)
    print(f"\nwrote {_relative(target)}")
    return ExitCode.OK


def run_baseline(
    config: Config, system: System, quiet: bool = False, show_progress: bool = False, fit_floors: bool = False
) -> ExitCode:
    """`baseline`: evaluate and overwrite the committed baseline on purpose, then check the
    gate's settings against it (gate/fit.py): each one it does not meet, or the data cannot
    evaluate, is a warning on stderr with its fix. `fit_floors` applies exactly those fixes
    to eval.toml and the golden set, printing each, and remakes the baseline; a floor it cuts
    below half the one it replaces is a warning naming the questions that pull it down
    (gate/fit.py, steep_cuts). Exit 0: the baseline was written."""
    check_outputs(config, "baseline")
    require_affordable(config, system, "baseline")
    report = _evaluate_and_write(config, system, config.baseline, quiet, show_progress, baseline=True)
    steep: list[str] = []  # floors --fit-floors cut below half: the system may not work at all
    if fit_floors:

        def remake(changed: Config) -> Report:
            return _evaluate_and_write(changed, system, changed.baseline, True, False, baseline=True)

        config, report, changes, left, steep = fit_baseline(config, report, remake)
        print("\n--fit-floors: " + (f"{len(changes)} change(s)" if changes else "every setting holds"))
        print("\n".join(f"  {change}" for change in changes), end="\n" if changes else "")
    else:
        left = check_baseline(config, report)
    print(f"\nwrote the new baseline {_relative(config.baseline)}: review its diff and commit it")
    for line in design_lines(report, config.gate.tolerance, config.stats, config.gate.power):
        print(line)  # parts declared stochastic: the questions non-inferiority needs
    for line in [*steep, *describe(left, config)]:
        print(line, file=sys.stderr)
    return ExitCode.OK


def run_gate(
    config: Config,
    system: System,
    baseline_path: Path | None,
    accept_changed_data: bool = False,
    show_progress: bool = False,
) -> ExitCode:
    """`gate`: evaluate afresh, compare with the baseline, write the reports; 0 pass, 3 fail.

    Reads every input once (corpus, golden set, holdout) and builds the system once. Exit 0
    only when every configured check ran on evaluated data (require_checkable)."""
    baseline_path = baseline_path or config.baseline
    check_outputs(config, "gate", extra_inputs=((baseline_path, "the baseline compared with"),))
    if not baseline_path.exists():  # no baseline yet: name the command that makes this project's first
        missing = "the baseline report file does not exist"
        raise EvalInputError(baseline_path, missing, first_baseline_fix(config))
    baseline = read_report(baseline_path)  # fail fast, before the evaluation runs
    check_same_engine(baseline, baseline_path)  # another major version of the engine: exit 2
    check_reproduces(baseline, baseline_path)  # numbers edited by hand: exit 2
    check_same_measurement(config.settings(), baseline, baseline_path)  # another k or depth: exit 2
    inputs = load_inputs(config, holdout=True)
    # A malformed line or a slice floor on a missing tag first: each names its line.
    check_slice_tags(config, inputs.questions)
    _require_memory(config, len(inputs.questions))
    require_affordable(config, system, "gate", inputs)
    data_notes = check_same_data(baseline, config, baseline_path, accept=accept_changed_data)
    judge_stats: dict[str, int] = {}
    before = fingerprint(named_inputs(config, (baseline_path, "the baseline compared with")))
    progress = Progress(show_progress and interactive())
    with running(config):
        built = Built(system, inputs.corpus, config, progress)
        try:
            inputs = built.conversations(inputs)
            report = evaluate_split(config, inputs.questions, built, config.golden, judge_stats, progress)
            held_out = len(inputs.holdout or [])  # the repeats a fix would add answer these too
            # may refuse: exit 2, its fix costed from this run's numbers
            checked = check_determinism(config, inputs.questions, built, report, judge_stats, held_out)
            report.holdout = evaluate_holdout(config, inputs, built, report, progress)
        finally:
            calls = built.finish()
    report.run = run_section(config, calls, judge_stats, cost_section(config, built, calls))
    check_unchanged(before)  # the team's code ran: its inputs must be the ones it was given
    record_trust(config, report)  # from the labels as checked unchanged
    require_checkable(config, report)  # a check that cannot be made is exit 2, never a skip
    # may refuse: exit 2, nothing written
    result = compare(report, baseline, config.gate, baseline_path, config.stats)
    result.notes[:0] = [*data_notes, *checked]
    report.comparison = result.to_dict()
    view = gate_view(report, result, baseline, config.display.max_listed)
    # The three files of one run go together: the last run's summary and HTML report are
    # removed before this run's report replaces its own, so a run killed halfway leaves
    # this run's files or none, never last run's summary beside this run's report.
    for stale in (config.summary, config.html):
        stale.unlink(missing_ok=True)
    save_report(config.report, report)
    summary = write_summary(markdown_summary(view), config.summary)
    write_atomic(config.html, html_report(view))
    counts = report.counts
    print(
        f"Gate: {counts.evaluated} of {counts.questions} questions evaluated "
        f"({counts.left_out} unanswerable left out); baseline {_relative(baseline_path)}; "
        f"report {_relative(config.report)}"
    )
    print(f"summary: {_relative(summary)}; HTML report: {_relative(config.html)}")
    print(console_verdict(view))
    print(cache_line(judge_stats))
    print(calls_line(calls))
    print(answers_line(calls))
    for line in cost.cost_lines((report.run or {}).get("cost", {})):
        print(line)
    return ExitCode.OK if result.passed else ExitCode.REGRESSION
