"""The one orchestrator: golden set -> retriever -> metrics -> answers -> report -> verdict.

The command line (cli.py) hands it the team's system as a `System` (the two factories from
retriever.py and generator.py); nothing here imports the team's files.

Report layout (written by inputs/reports.py, read back by the gate):
  settings   what shaped the numbers: k, depth, metrics, tokenizer, retriever and options
  counts     questions, evaluated, left_out (unanswerable questions have no relevant
             documents, so they are left out of every retrieval average)
  aggregate  {metric: mean over evaluated questions}
  slices     {tag: {questions, evaluated, metrics}}
  receipt    sha256 of corpus, golden set and config; git commit; judge; versions; seed; k
  comparison (written by `gate` only) delta, CI, p per metric and tag; failures; notes
  holdout    (written by `gate` only, when configured) holdout aggregate and dev - holdout gap
  questions  one row per question: retrieved [[id, score], ...], found and missing
             relevant ids within the top k, metrics and per-question checks, and the
             answer with its checks (answers/checks.py)
The aggregate also holds the answer checks (abstention, key_facts, faithfulness), and the
settings the judge that produced the verdicts and the [generation] options.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from statistics import fmean
from typing import Any

from .answers.checks import evaluate_answers
from .api import Generator, Hit, Retriever, System
from .errors import EvalInputError, ExitCode
from .gate.holdout import check_disjoint
from .gate.receipt import build_receipt, check_same_data
from .gate.rules import compare, format_result
from .gate.significance import check_slice_tags
from .inputs.data import Question, load_corpus, load_golden
from .inputs.files import write_atomic
from .inputs.reports import FORMAT, VERSION, read_report, write_report
from .render.console import cache_line, format_holdout, format_table
from .render.html import html_report
from .render.markdown import markdown_summary, write_summary
from .render.progress import QUIET, Progress, interactive
from .retrieval.batch import compute, judge_rankings
from .retrieval.ranking import Remembered
from .retrieval.retrievers import OptionsError
from .retrieval.search import retrieve_all
from .retrieval.tokens import make_tokenizer
from .settings.config import Config


def _row(question: Question, hits: list[Hit], config: Config, values: dict[str, float]) -> dict[str, Any]:
    ranking = [hit.doc_id for hit in hits]
    top = ranking[: config.k]
    row: dict[str, Any] = {
        "id": question.id,
        "question": question.question,
        "tags": question.tags,
        "answerable": question.answerable,
        "must_pass": question.must_pass,
        "relevant": question.relevant,
        "retrieved": [[hit.doc_id, round(hit.score, 6)] for hit in hits],
        "found": [doc_id for doc_id in top if doc_id in question.relevant],
        "missing": sorted(
            (doc_id for doc_id in question.relevant if doc_id not in top),
            key=lambda doc_id: (-question.relevant[doc_id], doc_id),
        ),
        "metrics": None,
        "checks": None,
    }
    if question.answerable:
        row["metrics"] = values
        row["checks"] = {str(m): values[str(m)] >= threshold for m, threshold in config.gate.checks.items()}
    return row


def _means(rows: list[dict[str, Any]], config: Config) -> dict[str, float] | None:
    scored = [row for row in rows if row["metrics"] is not None]
    if not scored:
        return None
    return {str(m): fmean(row["metrics"][str(m)] for row in scored) for m in config.metrics}


def _retriever_settings(retriever: object, config: Config) -> dict[str, Any]:
    options = getattr(retriever, "options", None)
    if dataclasses.is_dataclass(options) and not isinstance(options, type):
        effective = dataclasses.asdict(options)
    else:
        effective = dict(config.retriever)
    return {"name": type(retriever).__name__, "options": effective}


def build_retriever(system: System, corpus: dict[str, Any], config: Config) -> Retriever:
    """The team's retriever, built from the corpus and the [tokenizer] and [retriever] settings.
    A crash in the team's factory is exit 2 naming it, not a traceback."""
    try:
        return system.build_retriever(
            list(corpus.values()), make_tokenizer(config.tokenizer), config.retriever
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


def build_generator(
    system: System, retriever: Retriever, corpus: dict[str, Any], config: Config
) -> Generator:
    """The team's generator, given the (remembering) retriever and the [generation] settings."""
    try:
        return system.build_generator(retriever, list(corpus.values()), config.generation)
    except OptionsError as error:
        raise EvalInputError(config.path, f"[generation]: {error}", "fix or remove that option") from None


def evaluate(
    config: Config,
    system: System,
    judge_stats: dict[str, int] | None = None,
    progress: Progress = QUIET,
) -> dict[str, Any]:
    """Evaluate `system` on the golden set named in `config`; return the report.

    `judge_stats`, when given, receives the verdict cache's hits and misses and the judge
    calls of this run: they describe the run, not the system, so the report leaves them out.
    `progress` draws bars for the long steps when a person is watching.
    """
    corpus = load_corpus(config.corpus)
    questions = load_golden(config.golden, corpus)
    with progress.step("indexing"):
        retriever = build_retriever(system, corpus, config)
    ranked = retrieve_all(
        retriever, questions, corpus, config.depth, config.golden, lambda qs: progress.over(qs, "searching")
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

    evaluated = sum(1 for row in rows if row["metrics"] is not None)
    if evaluated == 0:
        raise EvalInputError(
            config.golden,
            "no answerable question, so nothing can be evaluated",
            "add questions with relevant documents ('answerable': true)",
        )
    # The generator sees exactly the evaluated hits: retrieval is not run twice.
    known = {question.question: hits for question, hits in zip(questions, ranked, strict=True)}
    generator = build_generator(system, Remembered(retriever, known, config.depth), corpus, config)
    answers = evaluate_answers(
        generator,
        questions,
        corpus,
        config.judge,
        golden=config.golden,
        config_path=config.path,
        track=lambda qs: progress.over(qs, "answering"),
        judging=lambda: progress.step("judging"),
    )
    for row, answer in zip(rows, answers.rows, strict=True):
        row["answer"] = answer
    if judge_stats is not None:
        judge_stats.update(answers.cache)
    tags = sorted({tag for row in rows for tag in row["tags"]})
    slices = {}
    for tag in tags:
        members = [row for row in rows if tag in row["tags"]]
        slices[tag] = {
            "questions": len(members),
            "evaluated": sum(1 for row in members if row["metrics"] is not None),
            "metrics": _means(members, config),
        }
    settings = {
        **config.settings(),
        "retriever": _retriever_settings(retriever, config),
        "generation": config.generation,
        "judge": answers.judge,
    }
    return {
        "format": FORMAT,
        "version": VERSION,
        "settings": settings,
        "counts": {"questions": len(rows), "evaluated": evaluated, "left_out": len(rows) - evaluated},
        "aggregate": {**(_means(rows, config) or {}), **answers.aggregate},
        "slices": slices,
        "receipt": build_receipt(config, settings),
        "questions": rows,
    }


def evaluate_holdout(
    config: Config, system: System, dev_report: dict[str, Any], progress: Progress = QUIET
) -> dict[str, Any] | None:
    """Evaluate the holdout split; return its counts, aggregate and the dev - holdout gap.

    None when no holdout is configured.
    """
    if config.holdout is None:
        return None
    corpus = load_corpus(config.corpus)
    check_disjoint(load_golden(config.golden, corpus), load_golden(config.holdout, corpus), config)
    report = evaluate(dataclasses.replace(config, golden=config.holdout), system, progress=progress)
    gated = [str(metric) for metric in config.gate.metrics]
    return {
        "file": config.holdout.name,
        "counts": report["counts"],
        "aggregate": {name: report["aggregate"][name] for name in gated},
        "gap": {name: dev_report["aggregate"][name] - report["aggregate"][name] for name in gated},
    }


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_eval(
    config: Config, system: System, report_path: Path | None, quiet: bool, show_progress: bool = False
) -> ExitCode:
    """`eval`: evaluate, print the table (unless quiet), write the report."""
    judge_stats: dict[str, int] = {}
    report = evaluate(config, system, judge_stats, Progress(show_progress and interactive()))
    target = report_path or config.report
    write_report(target, report)
    if not quiet:
        print(format_table(report))
        print(cache_line(judge_stats))
    print(f"\nwrote {_relative(target)}")
    return ExitCode.OK


def run_baseline(
    config: Config, system: System, quiet: bool = False, show_progress: bool = False
) -> ExitCode:
    """`baseline`: evaluate and overwrite the committed baseline on purpose."""
    judge_stats: dict[str, int] = {}
    report = evaluate(config, system, judge_stats, Progress(show_progress and interactive()))
    write_report(config.baseline, report)
    if not quiet:
        print(format_table(report))
        print(cache_line(judge_stats))
    print(f"\nwrote the new baseline {_relative(config.baseline)}: review its diff and commit it")
    return ExitCode.OK


def run_gate(
    config: Config,
    system: System,
    baseline_path: Path | None,
    accept_changed_data: bool = False,
    show_progress: bool = False,
) -> ExitCode:
    """`gate`: evaluate afresh, compare with the baseline, write the reports; 0 pass, 3 fail."""
    baseline_path = baseline_path or config.baseline
    baseline = read_report(baseline_path)  # fail fast, before the evaluation runs
    # A malformed line or a slice floor on a missing tag first: each names its line.
    check_slice_tags(config, load_golden(config.golden, load_corpus(config.corpus)))
    data_notes = check_same_data(baseline, config, baseline_path, accept=accept_changed_data)
    judge_stats: dict[str, int] = {}
    progress = Progress(show_progress and interactive())
    report = evaluate(config, system, judge_stats, progress)
    holdout = evaluate_holdout(config, system, report, progress)
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
