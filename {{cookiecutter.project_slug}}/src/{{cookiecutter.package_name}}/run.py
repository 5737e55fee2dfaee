"""The one orchestrator: golden set -> retriever -> metrics -> answers -> report -> verdict.

The command line (cli.py) hands it the team's system as a `System` (the two factories from
retriever.py and generator.py); nothing here imports the team's files.

A run reads its inputs once (corpus, golden set and, for `gate`, the holdout), builds the
retriever and the generator once, and produces one typed `Report` (inputs/reports.py, which
also describes the JSON file). The gate adds its verdict; render/ shows both.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from .answers.checks import evaluate_answers
from .api import Document, Generator, Hit, Retriever, System
from .errors import EvalInputError, ExitCode
from .gate.holdout import check_disjoint
from .gate.receipt import build_receipt, check_same_data
from .gate.rules import compare
from .gate.significance import check_slice_tags
from .inputs.data import Question, load_corpus, load_golden
from .inputs.files import write_atomic
from .inputs.reports import (
    Counts,
    HoldoutResult,
    QuestionResult,
    Report,
    SliceResult,
    read_report,
    write_report,
)
from .render.console import cache_line, console_verdict, format_table
from .render.html import html_report
from .render.markdown import markdown_summary, write_summary
from .render.progress import QUIET, Progress, interactive
from .render.view import gate_view
from .retrieval.batch import compute, judge_rankings
from .retrieval.ranking import Remembered
from .retrieval.retrievers import OptionsError
from .retrieval.search import retrieve_all
from .retrieval.tokens import make_tokenizer
from .settings.config import Config


def _row(question: Question, hits: list[Hit], config: Config, values: dict[str, float]) -> QuestionResult:
    top = [hit.doc_id for hit in hits][: config.k]
    answerable = question.answerable
    return QuestionResult(
        id=question.id,
        question=question.question,
        tags=question.tags,
        answerable=answerable,
        must_pass=question.must_pass,
        relevant=question.relevant,
        retrieved=[(hit.doc_id, round(hit.score, 6)) for hit in hits],
        found=[doc_id for doc_id in top if doc_id in question.relevant],
        missing=sorted(
            (doc_id for doc_id in question.relevant if doc_id not in top),
            key=lambda doc_id: (-question.relevant[doc_id], doc_id),
        ),
        metrics=values if answerable else None,
        checks={str(m): values[str(m)] >= t for m, t in config.gate.checks.items()} if answerable else None,
    )


def _means(rows: list[QuestionResult], config: Config) -> dict[str, float] | None:
    scored = [row.metrics for row in rows if row.metrics is not None]
    if not scored:
        return None
    return {str(m): fmean(metrics[str(m)] for metrics in scored) for m in config.metrics}


def _retriever_settings(retriever: object, config: Config) -> dict[str, Any]:
    options = getattr(retriever, "options", None)
    if dataclasses.is_dataclass(options) and not isinstance(options, type):
        effective = dataclasses.asdict(options)
    else:
        effective = dict(config.retriever)
    return {"name": type(retriever).__name__, "options": effective}


@dataclass(frozen=True)
class Inputs:
    """Everything a run reads, read once: the corpus, the golden set and, for `gate`, the holdout."""

    corpus: dict[str, Document]
    questions: list[Question]
    holdout: list[Question] | None = None


def load_inputs(config: Config, *, holdout: bool = False) -> Inputs:
    """Read and check the corpus and golden set (and the holdout when asked and configured)."""
    corpus = load_corpus(config.corpus)
    questions = load_golden(config.golden, corpus)
    if not holdout or config.holdout is None:
        return Inputs(corpus, questions)
    held_out = load_golden(config.holdout, corpus)
    check_disjoint(questions, held_out, config)
    return Inputs(corpus, questions, held_out)


class Built:
    """The team's retriever and generator, each built once per run and used for every split.

    The generator gets the retriever wrapped in `Remembered`: it sees exactly the evaluated
    hits, and retrieval is not run twice.
    """

    def __init__(self, system: System, corpus: dict[str, Document], config: Config, progress: Progress):
        self.system, self.corpus, self.config = system, corpus, config
        with progress.step("indexing"):
            self.retriever = self._build_retriever()
        self.known: dict[str, list[Hit]] = {}
        self._generator: Generator | None = None

    def _build_retriever(self) -> Retriever:
        """A crash in the team's factory is exit 2 naming it, not a traceback."""
        config = self.config
        try:
            return self.system.build_retriever(
                list(self.corpus.values()), make_tokenizer(config.tokenizer), config.retriever
            )
        except OptionsError as error:
            raise EvalInputError(config.path, f"[retriever]: {error}", "fix or remove that option") from None
        except EvalInputError:
            raise
        except Exception as error:
            raise EvalInputError(
                config.path,
                f"build_retriever raised {type(error).__name__}: {error}",
                "fix build_retriever in retriever.py, or the [retriever] options it reads",
            ) from error

    def generator(self) -> Generator:
        """The team's generator, built on first use from the [generation] settings."""
        if self._generator is None:
            remembered = Remembered(self.retriever, self.known, self.config.depth)
            try:
                self._generator = self.system.build_generator(
                    remembered, list(self.corpus.values()), self.config.generation
                )
            except OptionsError as error:
                raise EvalInputError(
                    self.config.path, f"[generation]: {error}", "fix or remove that option"
                ) from None
        return self._generator


def evaluate(
    config: Config,
    system: System,
    judge_stats: dict[str, int] | None = None,
    progress: Progress = QUIET,
) -> Report:
    """Evaluate `system` on the golden set named in `config`; return the report.

    `judge_stats`, when given, receives the verdict cache's hits and misses and the judge
    calls of this run: they describe the run, not the system, so the report leaves them out.
    `progress` draws bars for the long steps when a person is watching.
    """
    inputs = load_inputs(config)
    built = Built(system, inputs.corpus, config, progress)
    return evaluate_split(config, inputs.questions, built, config.golden, judge_stats, progress)


def evaluate_split(
    config: Config,
    questions: list[Question],
    built: Built,
    golden: Path,
    judge_stats: dict[str, int] | None = None,
    progress: Progress = QUIET,
) -> Report:
    """Evaluate one split's `questions` (read from `golden`) with an already built system."""
    corpus, retriever = built.corpus, built.retriever
    ranked = retrieve_all(
        retriever, questions, corpus, config.depth, golden, lambda qs: progress.over(qs, "searching")
    )
    # All metrics for all questions in one batch (equal to metrics.py's per-question functions).
    values = compute(
        judge_rankings([[hit.doc_id for hit in hits] for hits in ranked], [q.relevant for q in questions]),
        config.metrics,
    )
    rows = [
        _row(question, hits, config, {name: float(column[i]) for name, column in values.items()})
        for i, (question, hits) in enumerate(zip(questions, ranked, strict=True))
    ]
    evaluated = sum(1 for row in rows if row.metrics is not None)
    if evaluated == 0:
        raise EvalInputError(
            golden,
            "no answerable question, so nothing can be evaluated",
            "add questions with relevant documents ('answerable': true)",
        )
    built.known.update((question.question, hits) for question, hits in zip(questions, ranked, strict=True))
    answers = evaluate_answers(
        built.generator(),
        questions,
        corpus,
        config.judge,
        golden=golden,
        config_path=config.path,
        track=lambda qs: progress.over(qs, "answering"),
        judging=lambda: progress.step("judging"),
    )
    rows = [dataclasses.replace(row, answer=answer) for row, answer in zip(rows, answers.rows, strict=True)]
    if judge_stats is not None:
        judge_stats.update(answers.cache)
    slices = {}
    for tag in sorted({tag for row in rows for tag in row.tags}):
        members = [row for row in rows if tag in row.tags]
        slices[tag] = SliceResult(
            questions=len(members),
            evaluated=sum(1 for row in members if row.metrics is not None),
            metrics=_means(members, config),
        )
    settings = {
        **config.settings(),
        "retriever": _retriever_settings(retriever, config),
        "generation": config.generation,
        "judge": answers.judge,
    }
    return Report(
        settings=settings,
        counts=Counts(questions=len(rows), evaluated=evaluated, left_out=len(rows) - evaluated),
        aggregate={**(_means(rows, config) or {}), **answers.aggregate},
        slices=slices,
        receipt=build_receipt(config, settings),
        questions=rows,
    )


def evaluate_holdout(
    config: Config, inputs: Inputs, built: Built, dev_report: Report, progress: Progress = QUIET
) -> HoldoutResult | None:
    """Evaluate the holdout split with the same built system; its means and the dev - holdout
    gap of every gated metric. None when no holdout is configured."""
    if inputs.holdout is None or config.holdout is None:
        return None
    report = evaluate_split(config, inputs.holdout, built, config.holdout, progress=progress)
    gated = [str(metric) for metric in config.gate.metrics]
    return HoldoutResult(
        file=config.holdout.name,
        counts=report.counts,
        aggregate={name: report.aggregate[name] for name in gated},
        gap={name: dev_report.aggregate[name] - report.aggregate[name] for name in gated},
    )


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _evaluate_and_write(
    config: Config, system: System, target: Path, quiet: bool, show_progress: bool
) -> None:
    """Evaluate, write the report to `target`, print the table unless quiet."""
    judge_stats: dict[str, int] = {}
    report = evaluate(config, system, judge_stats, Progress(show_progress and interactive()))
    write_report(target, report)
    if not quiet:
        print(format_table(report, config.display.max_listed))
        print(cache_line(judge_stats))


def run_eval(
    config: Config, system: System, report_path: Path | None, quiet: bool, show_progress: bool = False
) -> ExitCode:
    """`eval`: evaluate, print the table (unless quiet), write the report."""
    target = report_path or config.report
    _evaluate_and_write(config, system, target, quiet, show_progress)
    print(f"\nwrote {_relative(target)}")
    return ExitCode.OK


def run_baseline(
    config: Config, system: System, quiet: bool = False, show_progress: bool = False
) -> ExitCode:
    """`baseline`: evaluate and overwrite the committed baseline on purpose."""
    _evaluate_and_write(config, system, config.baseline, quiet, show_progress)
    print(f"\nwrote the new baseline {_relative(config.baseline)}: review its diff and commit it")
    return ExitCode.OK


def run_gate(
    config: Config,
    system: System,
    baseline_path: Path | None,
    accept_changed_data: bool = False,
    show_progress: bool = False,
) -> ExitCode:
    """`gate`: evaluate afresh, compare with the baseline, write the reports; 0 pass, 3 fail.

    Reads every input once (corpus, golden set, holdout) and builds the system once."""
    baseline_path = baseline_path or config.baseline
    baseline = read_report(baseline_path)  # fail fast, before the evaluation runs
    inputs = load_inputs(config, holdout=True)
    # A malformed line or a slice floor on a missing tag first: each names its line.
    check_slice_tags(config, inputs.questions)
    data_notes = check_same_data(baseline, config, baseline_path, accept=accept_changed_data)
    judge_stats: dict[str, int] = {}
    progress = Progress(show_progress and interactive())
    built = Built(system, inputs.corpus, config, progress)
    report = evaluate_split(config, inputs.questions, built, config.golden, judge_stats, progress)
    report.holdout = evaluate_holdout(config, inputs, built, report, progress)
    # may refuse: exit 2, nothing written
    result = compare(report, baseline, config.gate, baseline_path, config.stats)
    result.notes[:0] = data_notes
    report.comparison = result.to_dict()
    view = gate_view(report, result, baseline, config.display.max_listed)
    write_report(config.report, report)
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
    return ExitCode.OK if result.passed else ExitCode.REGRESSION
