"""`sweep`: evaluate the [sweep] grid on the dev questions, choose (choice.py), confirm on the
holdout, print the table and write build/sweep.md and build/sweep.html.

The dev questions choose; the holdout only confirms. With [data] holdout set, the dev
questions are the golden set's answerable ones and the holdout is that file's. Without it,
the golden set's answerable questions are split once, seeded by [stats] seed: a share of
[sweep] holdout_share of them (rounded, at least 2) is held out, the rest choose.

Exit 0 whether or not a winner is named (a sweep informs, it gates nothing); 2 on bad
settings or inputs, before anything is evaluated where it can be told.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..api import System
from ..errors import EvalInputError, ExitCode
from ..inputs.data import Question
from ..inputs.files import check_output, write_atomic
from ..retrieval.names import Metric
from ..run import load_inputs, running
from ..settings.config import Config
from .building import Evaluator
from .choice import Choice, choose, confirm, versus_current
from .grid import Candidate, adopt_lines, current_candidate, expand
from .halving import halve, question_order
from .output import console_text, html_text, markdown_text
from .result import Holdout, Row, SweepResult

MIN_SPLIT = 2  # questions on each side of a split: one question has no spread to test


def primary_metric(config: Config) -> Metric:
    """[sweep] metric, else the first gated retrieval metric, else the first reported one."""
    chosen = config.sweep.metric
    if chosen is None:
        gated = [metric for metric in config.gate.metrics if isinstance(metric, Metric)]
        chosen = (gated or config.retrieval.metrics)[0]
    if chosen.k is not None and chosen.k > config.depth:
        raise EvalInputError(
            config.path,
            f"sweep.metric: {chosen} looks at the top {chosen.k} but the retriever returns only "
            f"{config.depth}",
            f"set [retrieval] depth = {chosen.k} or more, or choose another metric",
            config.line_of("sweep", "metric"),
        )
    return chosen


def split(
    config: Config, questions: list[Question], holdout: list[Question] | None
) -> tuple[list[Question], list[Question], str]:
    """(dev, holdout, where the holdout came from): answerable questions only."""
    dev = [question for question in questions if question.answerable]
    if holdout is not None and config.holdout is not None:
        held = [question for question in holdout if question.answerable]
        source = f"[data] holdout {config.holdout.name}"
    else:
        order = np.random.default_rng(config.stats.seed).permutation(len(dev))
        size = max(MIN_SPLIT, round(config.sweep.holdout_share * len(dev)))
        chosen = {int(i) for i in order[:size]}
        held = [question for i, question in enumerate(dev) if i in chosen]
        dev = [question for i, question in enumerate(dev) if i not in chosen]
        source = (
            f"seeded split of {config.golden.name}: {len(held)} of {len(dev) + len(held)} answerable "
            "questions "
            f"(holdout_share {config.sweep.holdout_share:g}, seed {config.stats.seed})"
        )
    if len(dev) < MIN_SPLIT or len(held) < MIN_SPLIT:
        raise EvalInputError(
            config.golden,
            f"the sweep needs at least {MIN_SPLIT} answerable questions to choose with and {MIN_SPLIT} to "
            f"confirm with; it has {len(dev)} and {len(held)}",
            "add answerable questions (or a [data] holdout)",
        )
    return dev, held, source


def check_sweep_outputs(config: Config) -> None:
    """build/sweep.md and build/sweep.html stay in the project and never replace an input."""
    named = [
        (config.corpus, "the corpus ([data] corpus)"),
        (config.golden, "the golden set ([data] golden)"),
        (config.path, "the settings file"),
        (config.baseline, "the baseline ([data] baseline)"),
        *([(config.holdout, "the holdout ([data] holdout)")] if config.holdout else []),
    ]
    inputs = {path.resolve(): name for path, name in named}
    project = config.path.parent
    for key, what in (("markdown", "sweep's markdown report"), ("html", "sweep's HTML report")):
        check_output(
            config.as_written("sweep", key),
            f"{what} ([sweep] {key})",
            inputs,
            project=project,
            protected=project / "evals",
        )


def no_grid(config: Config) -> EvalInputError:
    return EvalInputError(
        config.path,
        "[sweep]: no grid to try",
        'add e.g. [sweep.retriever] k1 = [0.6, 0.9, 1.2] or [sweep.tokenizer] stemmer = ["none", "porter"] '
        "(docs/sweep.md)",
        config.line_of("sweep"),
    )


def sweep(config: Config, system: System) -> SweepResult:
    """Evaluate the grid, choose, confirm; no output written."""
    candidates = expand(config)
    if not candidates:
        raise no_grid(config)
    metric = primary_metric(config)
    inputs = load_inputs(config, holdout=True)
    dev, held, source = split(config, inputs.questions, inputs.holdout)
    ordered = [dev[i] for i in question_order(len(dev), config.stats.seed)]
    current = current_candidate(config)
    by_index = {candidate.index: candidate for candidate in [current, *candidates]}
    evaluator = Evaluator(system, inputs.corpus, config, metric, config.golden)
    with running(config):

        def mean_on(index: int, size: int) -> float:
            return float(evaluator.values(by_index[index], ordered[:size]).mean())

        evaluator.values(current, ordered)  # the reference on every dev question, built first
        rungs = halve([c.index for c in candidates], len(ordered), config.sweep.halving_above, mean_on)
        reached = {index: (rung, size) for rung, size, field_ in rungs for index in field_}
        rows = []
        for candidate in candidates:
            rung, size = reached[candidate.index]
            mean = mean_on(candidate.index, size)
            same = evaluator.same(candidate, current)
            rows.append(Row(candidate, size, rung, mean, mean_on(0, size), same_as_current=same))
        deltas = [
            evaluator.values(row.candidate, ordered[: row.questions])
            - evaluator.values(current, ordered[: row.questions])
            for row in rows
        ]
        raw, adjusted = versus_current(deltas, config.stats)
        for row, p, p_holm in zip(rows, raw, adjusted, strict=True):
            row.p, row.p_holm = p, p_holm
        final = [row for row in rows if row.rung == rungs[-1][0]]
        for row in final:
            row.final = True
        columns = [current, *(row.candidate for row in final)]
        matrix = np.column_stack([evaluator.values(candidate, ordered) for candidate in columns])
        holm_of = {
            column: 1.0 if row.p_holm is None else row.p_holm for column, row in enumerate(final, start=1)
        }
        choice = choose(matrix, 0, holm_of, config.stats)
        current_row = Row(
            current,
            len(ordered),
            rungs[-1][0],
            float(matrix[:, 0].mean()),
            float(matrix[:, 0].mean()),
            final=True,
        )
        for column, row in enumerate([current_row, *final]):
            row.p_vs_best = choice.p_vs_best[column]
        result = _result(
            config, metric, len(ordered), current_row, rows, rungs, evaluator, source, held, choice, columns
        )
        if result.winner is not None:
            winner_values = evaluator.values(result.winner, held, config.holdout or config.golden)
            current_values = evaluator.values(current, held, config.holdout or config.golden)
            delta, p = confirm(winner_values, current_values, config.stats)
            result.holdout.delta, result.holdout.p = delta, p
            result.holdout.confirmed = delta > 0 and p <= config.stats.alpha
            if result.holdout.confirmed:
                result.adopt = adopt_lines(result.winner)
    result.builds = evaluator.builds
    return result


def _result(
    config: Config,
    metric: Metric,
    dev: int,
    current_row: Row,
    rows: list[Row],
    rungs: list[tuple[int, int, list[int]]],
    evaluator: Evaluator,
    source: str,
    held: list[Question],
    choice: Choice,
    columns: list[Candidate],
) -> SweepResult:
    final = sorted([current_row, *(row for row in rows if row.final)], key=lambda row: -row.mean)
    dropped = sorted((row for row in rows if not row.final), key=lambda row: (-row.rung, -row.mean))
    winner = choice.winner
    return SweepResult(
        metric=str(metric),
        alpha=config.stats.alpha,
        dev_questions=dev,
        rows=[*final, *dropped],
        rungs=[(rung, size, len(field_)) for rung, size, field_ in rungs],
        builds=evaluator.builds,
        holdout=Holdout(source, len(held)),
        winner=columns[winner] if winner is not None else None,
        runner_up=columns[choice.runner_up] if choice.runner_up is not None else None,
        p_runner_up=choice.p_runner_up,
        beats_current=choice.beats_current,
    )


def run_sweep(config: Config, system: System) -> ExitCode:
    """The `sweep` command: evaluate, print, write the two reports. Exit 0 with or without a winner."""
    if not expand(config):
        raise no_grid(config)
    check_sweep_outputs(config)
    result = sweep(config, system)
    print(console_text(result))
    write_atomic(config.sweep.markdown, markdown_text(result))
    write_atomic(config.sweep.html, html_text(result))
    print(f"\nwrote {_relative(config.sweep.markdown)} and {_relative(config.sweep.html)}")
    return ExitCode.OK


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
