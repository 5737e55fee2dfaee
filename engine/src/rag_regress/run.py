"""The pipeline: golden set -> retriever -> metrics -> answers -> report.

The commands (commands.py: eval, baseline, gate) hand it the team's system as a `System` (the
two factories from retriever.py and generator.py); nothing here imports the team's files.

A run reads its inputs once (corpus, golden set and, for `gate`, the holdout), builds the
retriever and the generator once, and produces one typed `Report` (inputs/reports.py, which
also describes the JSON file), with repeats and the determinism check when the gate asks.
The gate adds its verdict (commands.py, gate/); render/ shows both.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import BaseModel

from . import cost
from .answers.checks import evaluate_answers
from .answers.conversations import written
from .answers.settings import ANSWER_CHECKS, JudgeSettings
from .answers.trust import measure as measure_trust
from .answers.verdicts import ALWAYS_JUDGES
from .api import Answer, Document, Generator, Hit, Retriever, System
from .calling.asking import with_history
from .calling.caller import Caller
from .calling.calls import TeamCodeError, call, failure, time_limit
from .calling.executor import executor_for
from .calling.outputs import OutputCache, complete_identity
from .calling.ratelimit import RateLimit
from .calling.retries import RetryPolicy
from .errors import EvalInputError
from .execution import ExecutorError, started, using
from .execution.heap import paused, settle, settling
from .execution.team_trace import team_code_error
from .gate.determinism import (
    RunSize,
    answer_differences,
    ranking_differences,
    require_deterministic,
    sample,
)
from .gate.holdout import check_disjoint
from .gate.receipt import build_receipt
from .gate.variation import question_variation
from .inputs.data import Question, load_corpus, load_golden
from .inputs.reports import (
    AnswerResult,
    Counts,
    HoldoutResult,
    QuestionResult,
    Report,
    Said,
    SliceResult,
)
from .options import OptionsError
from .render.progress import QUIET, Progress
from .retrieval.batch import judge_rankings
from .retrieval.metrics import judged_at_k
from .retrieval.names import compute
from .retrieval.passages import report_section
from .retrieval.ranking import Remembered, evaluated_order, found_and_missing, tie_warning
from .retrieval.search import retrieve_all
from .retrieval.tokens import make_tokenizer
from .settings.config import Config
from .settings.identity import system_identity
from .settings.part_options import option_error

# What one judging of a model judge spent (answers/llm/judge.py, LLMJudge.stats).
JUDGE_SPENT = ("requests", "prompt_tokens", "completion_tokens")


def _row(question: Question, hits: list[Hit], config: Config, values: dict[str, float]) -> QuestionResult:
    level = config.retrieval.relevance_level
    found, missing = found_and_missing([hit.doc_id for hit in hits], question.relevant, config.k, level)
    answerable = question.answerable
    return QuestionResult(
        id=question.id,
        question=question.question,
        tags=question.tags,
        answerable=answerable,
        must_pass=question.must_pass,
        relevant=question.relevant,
        retrieved=[(hit.doc_id, hit.score) for hit in hits],  # full precision: export-run reproduces ties
        found=found,
        missing=missing,
        metrics=values if answerable else None,
        checks={str(m): values[str(m)] >= t for m, t in config.gate.checks.items()} if answerable else None,
        not_relevant=question.not_relevant,
        judged=judged_at_k([hit.doc_id for hit in hits[: config.k]], question.qrels, config.k),
        history=tuple(Said(message.role, message.content) for message in question.asked.history),
    )


def judged_section(rows: list[QuestionResult], k: int) -> dict[str, Any]:
    """The report's judged@k: the mean share of each top k the golden set judged, over every
    question, and the questions and documents in a top k that nobody judged."""
    unjudged = [len(row.unjudged(k)) for row in rows]
    return {
        "k": k,
        "mean": fmean(row.judged for row in rows if row.judged is not None) if rows else 1.0,
        "questions": sum(1 for count in unjudged if count),
        "unjudged": sum(unjudged),
    }


def _means(rows: list[QuestionResult], config: Config) -> dict[str, float] | None:
    scored = [row.metrics for row in rows if row.metrics is not None]
    if not scored:
        return None
    return {str(m): fmean(metrics[str(m)] for metrics in scored) for m in config.metrics}


def _retriever_settings(retriever: object, config: Config) -> dict[str, Any]:
    """The retriever's class and the options it runs with: its validated settings, defaults
    filled in (a shipped part's `Settings`, or a dataclass), else [retriever] as written."""
    options = getattr(retriever, "options", None)
    if isinstance(options, BaseModel):
        effective = options.model_dump()
    elif dataclasses.is_dataclass(options) and not isinstance(options, type):
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
    held_out = load_golden(config.holdout, corpus, "holdout")
    check_disjoint(questions, held_out, config)
    return Inputs(corpus, questions, held_out)


class Built:
    """The team's retriever and generator, each built once per run and used for every split.

    The generator gets the retriever wrapped in `Remembered`: it sees exactly the evaluated
    hits, and retrieval is not run twice. The retriever is called through `caller` and the
    generator through `answers`: one executor, rate limit and output cache, each with its own
    counts, so that the run can say how many generator calls it made.
    """

    def __init__(self, system: System, corpus: dict[str, Document], config: Config, progress: Progress):
        self.system, self.corpus, self.config = system, corpus, config
        self.caller = _caller(config, system, progress)
        caller = self.caller
        self.answers = Caller(caller.executor, caller.retry, caller.limit, caller.cache, caller.monitor)
        with progress.step("indexing"):
            self.retriever = self._build_retriever()
        settle()  # the index lives as long as the run
        self.known: dict[str, list[Hit]] = {}
        self._generator: Generator | None = None
        self._searching: Remembered | None = None  # the retriever as the generator was handed it
        # What a model judge spent over every judging of the run (repeats and holdout too).
        self.judge_spent: Counter[str] = Counter()
        self.judged_questions = 0  # the questions of the judgings counted (each split's once)

    def conversations(self, inputs: Inputs) -> Inputs:
        """`inputs` with the assistant turns the golden set leaves blank written by the
        system (answers/conversations.py), before anything else is asked."""
        config, caller = self.config, self.answering()

        def written_in(questions: list[Question], golden: Path) -> list[Question]:
            return written(questions, self.generator(), self.corpus, golden, caller)

        held_out = inputs.holdout
        return Inputs(
            inputs.corpus,
            written_in(inputs.questions, config.golden),
            written_in(held_out, config.holdout) if held_out is not None and config.holdout else held_out,
        )

    def judged(self, stats: dict[str, int]) -> None:
        """Count one judging's requests and tokens (AnswerResults.cache) into `judge_spent`."""
        self.judge_spent.update({name: stats[name] for name in JUDGE_SPENT if name in stats})

    def searching(self) -> Caller:
        """How the retriever is called for the evaluated run: a stochastic retriever bypasses
        the output cache (a cached ranking would repeat the first run)."""
        return self.caller.uncached() if "retriever" in self.config.gate.stochastic else self.caller

    def answering(self) -> Caller:
        """How the generator is called for the evaluated run: a stochastic generator, or one
        answering from a stochastic retriever's hits, bypasses the output cache."""
        moving = {"retriever", "generator"} & set(self.config.gate.stochastic)
        return self.answers.uncached() if moving else self.answers

    def finish(self) -> dict[str, Any]:
        """Save the output cache (what this run asked is kept even when the run failed later)
        and return what this run asked of the system, for the console and the report: every
        call (`calls`, `retries`, `errors`), the outputs from the cache, and of them the
        answers (`answers_cached`) beside the generator's own calls (`generator_calls`)."""
        cache = self.caller.cache
        if cache is not None:
            cache.save()
        searches, answers = vars(self.caller.counts), vars(self.answers.counts)
        return {
            "output_cache": self.config.run.output_cache if cache is not None else "off",
            **{name: searches[name] + answers[name] for name in searches},
            "cached": cache.hits if cache is not None else 0,
            "rejected": cache.rejected if cache is not None else 0,
            "answers_cached": cache.answer_hits if cache is not None else 0,
            "generator_calls": answers["calls"],
        }

    def _build_retriever(self) -> Retriever:
        """A crash in the team's factory is exit 2 naming it, not a traceback."""
        config = self.config
        try:
            return call(
                self.system.build_retriever,
                list(self.corpus.values()),
                make_tokenizer(config.tokenizer),
                config.retriever,
                timed=False,
            )
        except OptionsError as error:
            raise _option_error(config, "retriever", error) from None
        except EvalInputError:
            raise
        except Exception as error:  # a crash or an exit of the team's factory: exit 2 naming it
            fix = "fix build_retriever in retriever.py, or the [retriever] options it reads"
            raise _factory_error(config, "build_retriever", error, fix) from error

    def searches(self) -> dict[str, list[Hit]]:
        """What the retriever itself answers the generator's searches from now on (those the
        evaluated run's hits do not answer), by Turn.key; a new record at each call."""
        self.generator()  # built, with the retriever it searches
        assert self._searching is not None
        self._searching.fresh = {}
        return self._searching.fresh

    def generator(self) -> Generator:
        """The team's generator, built on first use from the [generation] settings."""
        if self._generator is None:
            remembered = self._searching = Remembered(self.retriever, self.known, self.config.depth)
            try:
                self._generator = call(
                    self.system.build_generator,
                    remembered,
                    list(self.corpus.values()),
                    self.config.generation,
                    timed=False,
                )
            except OptionsError as error:
                raise _option_error(self.config, "generation", error) from None
            except EvalInputError:
                raise
            except Exception as error:  # a crash or an exit of the team's factory: exit 2 naming it
                fix = "fix build_generator in generator.py, or the [generation] options it reads"
                raise _factory_error(self.config, "build_generator", error, fix) from error
        return self._generator


def _factory_error(config: Config, factory: str, error: Exception, fix: str) -> EvalInputError:
    """The team's factory raised or exited: exit 2 at the team's own file and line (eval.toml
    when the traceback never reaches their code, as for a shipped adapter), with their frames
    only; an exit's frames are those of the SystemExit it raised."""
    origin = error.cause if isinstance(error, TeamCodeError) and error.cause is not None else error
    return team_code_error(origin, f"{factory} {failure(error)}", fix, config.path)


def _caller(config: Config, system: System, progress: Progress) -> Caller:
    """The caller of the [run] settings: concurrency, retries, rate limit and, when on and
    the system's identity is known, the output cache, keyed by that identity
    (settings/identity.py) completed with the engine's code and the files the [retriever]
    and [generation] options name (calling/outputs.py: a prompt file)."""
    run = config.run
    identity = system_identity(config, system.code)
    cache = None
    if identity is not None:
        folders = (config.path.parent, Path.cwd())  # an adapter reads a prompt file from the current folder
        identity = complete_identity(identity, (config.retriever, config.generation), folders)
        cache = OutputCache(run.output_cache_file, identity)
        if cache.note:
            print(f"warning: {cache.note}", file=sys.stderr)
    elif run.output_cache != "off":
        print("warning: the output cache is off: the system's code is unknown", file=sys.stderr)
    return Caller(
        executor_for(run.concurrency),
        RetryPolicy.named(run.retries, run.backoff, run.retry_on),
        RateLimit(run.rate_limit),
        cache,
        progress,
    )


def _option_error(config: Config, table: str, error: OptionsError) -> EvalInputError:
    """A bad [retriever] or [generation] option: its key and line in eval.toml."""
    return option_error(config.path, config.text, table, error)


@contextmanager
def running(config: Config) -> Iterator[None]:
    """The conditions of every evaluation: each call of the team's code limited to `[run]
    timeout`, and the expensive steps on the `[executor]` (started for the block, stopped
    after it). An executor that fails (a cluster that cannot be reached, a worker that died)
    is exit 2 naming its setting: a run is evaluated whole or not at all."""
    table = config.executor
    try:
        with (
            time_limit(config.run.timeout),
            started(table.backend, table.address, table.workers) as executor,
            using(executor),
            settling(),  # what the run keeps is left out of the collector's walks (execution/heap.py)
        ):
            yield
    except ExecutorError as error:
        line = config.line_of("executor", error.key)
        raise EvalInputError(config.path, error.message, error.fix, line) from None


def evaluate(
    config: Config,
    system: System,
    judge_stats: dict[str, int] | None = None,
    progress: Progress = QUIET,
) -> Report:
    """Evaluate `system` on the golden set named in `config`; return the report.

    `judge_stats`, when given, receives the verdict cache's hits and misses and the judge
    calls of this run: they describe the run, not the system, so the report leaves them out.
    What the run asked of the system (calls, cached outputs) is the report's run-only `run`
    section, which a baseline leaves out. `progress` draws bars for the long steps when a
    person is watching.
    """
    inputs = load_inputs(config)
    with running(config):
        built = Built(system, inputs.corpus, config, progress)
        try:
            inputs = built.conversations(inputs)
            report = evaluate_split(config, inputs.questions, built, config.golden, judge_stats, progress)
        finally:
            calls = built.finish()
    report.run = run_section(config, calls, judge_stats, cost_section(config, built, calls))
    record_trust(config, report)
    return report


def record_trust(config: Config, report: Report) -> None:
    """What the judge's checks rest on, into the report's receipt: the judge's agreement with
    people on the held-out labels, and whether its checks gate (answers/trust.py)."""
    calibration = measure_trust(config.judge, config.path, [row.answer for row in report.questions])
    report.receipt = {**report.receipt, "calibration": calibration}


def run_section(
    config: Config,
    calls: dict[str, Any],
    judge_stats: dict[str, int] | None,
    costs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report's run-only section: what the run asked of the system, and of a judge that
    may give no verdict (its items judged, not judged and asked again: a model that skips
    some is counted here; the built-in judges give every item one), and what the model
    calls cost (`cost_section`)."""
    section: dict[str, Any] = {"system": calls}
    if judge_stats and config.judge.backend not in ALWAYS_JUDGES:
        wanted = ("judged", "not_judged", "reasked", "requests", "retries", "total_tokens")
        section["judge"] = {name: judge_stats[name] for name in wanted if name in judge_stats}
    if costs is not None:
        section["cost"] = costs
    return section


def cost_section(config: Config, built: Built, calls: dict[str, Any]) -> dict[str, Any]:
    """The report's `run.cost` (cost.py): the generator's calls this run and the tokens their
    answers reported (answers from the output cache counted as `cached`, free), a model
    judge's requests and tokens under [judge.llm] model, each priced from [prices], and the total."""
    usage, prices = built.answers.usage, config.prices
    parts = {
        "generator": cost.part(
            prices,
            usage.calls,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.model,
            cached=calls.get("answers_cached", 0),
            unreported=usage.calls - usage.reported,
            prompt_characters=usage.prompt_characters,
        )
    }
    spent = built.judge_spent
    if config.judge.backend == "llm":
        parts["judge"] = cost.part(
            prices,
            spent["requests"],
            spent["prompt_tokens"],
            spent["completion_tokens"],
            config.judge.options.model,
            questions=built.judged_questions,
        )
    return {**parts, "total": cost.total(parts)}


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
    chunks: list[list[Hit]] = []  # each question's chunks as retrieved, for the passage metrics
    ranked = retrieve_all(retriever, questions, corpus, config.depth, golden, chunks, built.searching())
    settle()  # and so do the hits
    # The metrics and rows follow [retrieval] ties; the generator gets the retriever's own order.
    in_order = evaluated_order(ranked, config.retrieval.ties)
    if warning := tie_warning([question.id for question in questions], ranked, in_order):
        print(warning, file=sys.stderr)
    # All metrics for all questions in one batch (equal to metrics.py's per-question functions).
    values = compute(
        judge_rankings(
            [[hit.doc_id for hit in hits] for hits in in_order],
            [q.qrels for q in questions],
            config.retrieval.relevance_level,
        ),
        config.metrics,
    )
    with paused():  # a row per question, a pair per hit: many objects, no cycles
        rows = [
            _row(question, hits, config, {name: float(column[i]) for name, column in values.items()})
            for i, (question, hits) in enumerate(zip(questions, in_order, strict=True))
        ]
    evaluated = sum(1 for row in rows if row.metrics is not None)
    if evaluated == 0:
        raise EvalInputError(
            golden,
            "no answerable question, so nothing can be evaluated",
            "add questions with relevant documents ('answerable': true)",
        )
    # The generator gets what the retriever returned: its chunks, when it returns chunks.
    built.known.update((question.asked.key, hits) for question, hits in zip(questions, chunks, strict=True))
    with _run_judge(config) as judge:
        answers = evaluate_answers(
            built.generator(),
            questions,
            corpus,
            judge,
            golden=golden,
            config_path=config.path,
            caller=built.answering(),
            judging=lambda: progress.step("judging"),
        )
    rows = [dataclasses.replace(row, answer=answer) for row, answer in zip(rows, answers.rows, strict=True)]
    built.judged(answers.cache)
    built.judged_questions += len(questions)
    if judge_stats is not None:
        judge_stats.update(answers.cache)
    stochastic: dict[str, Any] | None = None
    aggregate = {**(_means(rows, config) or {}), **answers.aggregate}
    if config.gate.stochastic:  # the parts declared stochastic run `repeats` times per question
        runs = _repeat_runs(config, questions, built, golden, ranked, answers.rows, progress)
        rows, aggregate, stochastic = _averaged(config, rows, runs)
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
        **({"stochastic": stochastic} if stochastic else {}),  # only when declared: reports stay as they were
    }
    report = Report(
        settings=settings,
        counts=Counts(questions=len(rows), evaluated=evaluated, left_out=len(rows) - evaluated),
        aggregate=aggregate,
        slices=slices,
        receipt=build_receipt(config, settings),
        questions=rows,
        passages=report_section(questions, chunks, corpus, config.k),  # None: no passage labels
        judged=judged_section(rows, config.k),
    )
    require_finite(report, golden)
    return report


def _not_finite(values: dict[str, float] | None) -> str | None:
    return next((name for name, value in (values or {}).items() if not math.isfinite(value)), None)


def require_finite(report: Report, golden: Path) -> None:
    """Every metric of a fresh report is a finite number, or EvalInputError naming the first
    that is not (and its question): NaN passes no comparison, so a floor on it would print
    "ok", and JSON has no NaN. Checked before anything is written."""
    for row in report.questions:
        answer = row.answer
        checks = {name: answer.check(name) for name in ANSWER_CHECKS} if answer is not None else {}
        name = _not_finite(row.metrics) or _not_finite({k: v for k, v in checks.items() if v is not None})
        if name is not None:
            value = (row.metrics or {}).get(name, checks.get(name))
            raise EvalInputError(
                golden, f"question {row.id!r}: {name} is {value}, not a number", _fix_for(name)
            )
    name = _not_finite(report.aggregate) or next(
        (name for piece in report.slices.values() if (name := _not_finite(piece.metrics))), None
    )
    if name is not None:
        raise EvalInputError(golden, f"{name}: the mean is not a finite number", _fix_for(name))


def _fix_for(metric: str) -> str:
    if metric.startswith("ndcg_exp"):
        return "ndcg_exp weighs a document by 2**grade - 1: use small grades (0 to 3 is usual)"
    return "check the grades of this question's relevant documents"


Run = tuple[list[dict[str, float] | None], list[AnswerResult]]  # per question: metrics, answer


@contextmanager
def _run_judge(config: Config) -> Iterator[JudgeSettings]:
    """The judge settings of one run: a stochastic judge never reads the verdict cache (a fresh,
    throw-away cache per run), or every repeat would repeat the first verdict."""
    if "judge" not in config.gate.stochastic:
        yield config.judge
        return
    with tempfile.TemporaryDirectory(prefix="verdicts-") as folder:
        yield dataclasses.replace(config.judge, cache=Path(folder) / "verdicts.json")


def _repeat_runs(
    config: Config,
    questions: list[Question],
    built: Built,
    golden: Path,
    ranked: list[list[Hit]],
    answers: list[AnswerResult],
    progress: Progress,
) -> list[Run]:
    """Every run of the stochastic parts, the first (already made) included. A stochastic
    retriever searches again each run and the generator answers from that run's hits; a
    stochastic generator answers again from the same hits; a stochastic judge judges again."""
    first: list[dict[str, float] | None] = []
    runs: list[Run] = []
    retriever_moves = "retriever" in config.gate.stochastic
    remembered = dict(built.known)  # the first run's hits (chunks included), put back at the end
    for repeat in range(config.gate.repeats):
        hits = ranked
        chunks: list[list[Hit]] | None = None  # a new search's hits, as the retriever returned them
        if repeat and retriever_moves:
            chunks = []
            hits = retrieve_all(
                built.retriever,
                questions,
                built.corpus,
                config.depth,
                golden,
                chunks,
                built.caller.uncached(),  # a repeat asks the system itself, never the cache
                f"repeat {repeat + 1}",
            )
        values = compute(
            judge_rankings(
                [[hit.doc_id for hit in h] for h in evaluated_order(hits, config.retrieval.ties)],
                [q.qrels for q in questions],
                config.retrieval.relevance_level,
            ),
            config.metrics,
        )
        metrics = [
            {name: float(column[i]) for name, column in values.items()} if question.answerable else None
            for i, question in enumerate(questions)
        ]
        if repeat == 0:
            first = metrics
            runs.append((metrics, answers))
            continue
        if chunks is not None:  # this run's hits, as the retriever returned them
            built.known.update((question.asked.key, h) for question, h in zip(questions, chunks, strict=True))
        with _run_judge(config) as judge:
            again = evaluate_answers(
                built.generator(),
                questions,
                built.corpus,
                judge,
                golden=golden,
                config_path=config.path,
                caller=built.answers.uncached(),  # a repeat asks the generator itself, never the cache
                what=f"repeat {repeat + 1}",
            )
        built.judged(again.cache)
        runs.append((metrics if retriever_moves else first, again.rows))
    built.known.update(remembered)
    return runs


def _mean_of(values: list[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return fmean(present) if present else None


def _averaged(
    config: Config, rows: list[QuestionResult], runs: list[Run]
) -> tuple[list[QuestionResult], dict[str, float], dict[str, Any]]:
    """Rows whose metrics and answer checks are the per-question means over the runs (the unit
    the gate compares), their aggregates, and what the report records about the repeats: the
    parts, the repeats, each metric's noise, the standard deviation of the delta between two
    such means of an unchanged system (sqrt of the mean over questions of 2 s_i^2 / R), and
    each question's variation over the runs (gate/variation.py)."""
    repeats = len(runs)
    per_metric: dict[str, list[list[float]]] = {}
    averaged = []
    varied: dict[str, dict[str, Any]] = {}  # each question that varies over the runs
    gated_checks = config.gate.thresholds
    for i, row in enumerate(rows):
        series: dict[str, list[float | None]] = {
            name: [(run[0][i] or {}).get(name) for run in runs] for name in (row.metrics or {})
        }
        if row.answer is not None:
            series |= {name: [run[1][i].check(name) for run in runs] for name in ANSWER_CHECKS}
        if (entry := question_variation(series, gated_checks)) is not None:
            varied[row.id] = entry
        metrics = None
        if row.metrics is not None:
            metrics = {}
            for name in row.metrics:
                seen = [values[name] for run in runs if (values := run[0][i]) is not None]
                metrics[name] = fmean(seen)
                per_metric.setdefault(name, []).append(seen)
        answer = row.answer
        if answer is not None:
            checks: dict[str, Any] = {}  # each answer check's mean over the runs
            for name in ANSWER_CHECKS:
                seen_checks = [run[1][i].check(name) for run in runs]
                checks[name] = _mean_of(seen_checks)
                present = [value for value in seen_checks if value is not None]
                if len(present) == repeats:
                    per_metric.setdefault(name, []).append(present)
            if checks["abstention"] is None:  # never null on a record; kept as it was
                checks["abstention"] = answer.abstention
            answer = dataclasses.replace(answer, **checks)
        averaged.append(
            dataclasses.replace(
                row,
                metrics=metrics,
                answer=answer,
                checks={str(m): metrics[str(m)] >= t for m, t in config.gate.checks.items()}
                if metrics is not None
                else None,
            )
        )
    noise = {
        name: math.sqrt(fmean(2 * statistics.variance(seen) / repeats for seen in values))
        for name, values in per_metric.items()
        if values and repeats > 1
    }
    aggregate = {**(_means(averaged, config) or {})}
    for name in ANSWER_CHECKS:
        present = [
            value
            for row in averaged
            if row.answer is not None and (value := row.answer.check(name)) is not None
        ]
        aggregate[name] = fmean(present) if present else 0.0
    recorded = {
        "parts": sorted(config.gate.stochastic),
        "repeats": repeats,
        "noise": noise,
        "variation": varied,
    }
    return averaged, aggregate, recorded


def check_determinism(
    config: Config,
    questions: list[Question],
    built: Built,
    report: Report,
    judge_stats: dict[str, int] | None = None,
    holdout: int = 0,
) -> list[str]:
    """Run `[gate] determinism_check` questions again, bypassing the remembered hits (the
    retriever itself is asked, and the generator's searches reach it too; the system is not
    built again), and compare with the evaluated run (gate/determinism.py): exit 2 when
    a part not declared stochastic gave another ranking or answer, its fix worked out from
    this run's numbers (`judge_stats`, and the `holdout` questions each run also answers).
    Returns the note saying what was checked (none when there was nothing to check).

    The questions are chosen among those the system was asked this run: an output taken
    from the output cache was recorded from this very system (its code, settings and the
    files they name) and will be served again, identically, on every run until the system
    changes, so a run served wholly from the cache asks nothing (the note says so) and the
    check runs on the first run of a changed system."""
    parts = set(config.gate.stochastic)
    if "retriever" in parts:  # a stochastic retriever moves the answers too
        return []
    cache = built.caller.cache
    served = cache.served("search") if cache is not None else set()
    if "generator" not in parts and cache is not None:
        served &= cache.served("answer")  # a question is left out when both came from the cache
    asked = [question for question in questions if question.asked.key not in served]
    chosen = [asked[i] for i in sample(len(asked), config.gate.determinism_check)]
    if not chosen:
        if questions and config.gate.determinism_check > 0:  # every output from the cache
            return [
                "determinism: not checked again: every output of this run came from the output cache, "
                "recorded from this same system (code, settings and the files they name); the first "
                "run of a changed system checks it ([gate] determinism_check)"
            ]
        return []
    size = RunSize(
        questions=len(questions) + holdout,
        repeats=config.gate.repeats,
        stochastic=tuple(config.gate.stochastic),
        line=config.line_of("gate"),
        **_judge_numbers(config, judge_stats or {}, len(questions) + holdout, len(questions)),
    )
    ids = [question.id for question in chosen]
    again: list[list[Hit]] = []  # as the retriever returned them, as `known` holds them
    real = built.caller.uncached()  # the system itself, never the output cache
    retrieve_all(
        built.retriever, chosen, built.corpus, config.depth, config.golden, again, real, "determinism"
    )
    first = [built.known[question.asked.key] for question in chosen]
    differences = ranking_differences(ids, first, again)
    require_deterministic("retriever", differences, len(chosen), config.path, size)
    checked = "retriever"
    if "generator" not in parts:
        rows = {row.id: row.answer for row in report.questions}
        remembered = dict(built.known)
        built.known.clear()  # the generator's searches now reach the retriever itself
        generator = built.answers.uncached()  # the generator itself, never the output cache
        fresh = built.searches()
        try:
            answers = [_ask_again(built.generator(), q, config.golden, generator) for q in chosen]
        finally:
            built.known.update(remembered)
        differences = answer_differences(ids, [rows.get(qid) for qid in ids], answers)
        if differences and _searched_otherwise(fresh, remembered):
            _require_same_searches(config, chosen, built, rows, generator, differences)
        require_deterministic("generator", differences, len(chosen), config.path, size)
        checked = "retriever and generator"
    same = "rankings and answers" if "generator" in checked else "rankings"
    return [
        f"determinism: the {checked} gave the same {same} on {len(chosen)} question(s) run twice "
        "([gate] determinism_check), so the deterministic rule applies"
    ]


def _judge_numbers(config: Config, stats: dict[str, int], questions: int, judged_on: int) -> dict[str, Any]:
    """What this run asked of an LLM judge, for RunSize: its requests (None: no judge behind
    a server), the sentences it judged and those the verdict cache answered, scaled from the
    `judged_on` questions these numbers are of to the `questions` each run answers."""
    served = "requests" in stats or config.judge.backend == "llm"
    if not served:
        return {"judge_requests": None}
    scale = questions / judged_on if judged_on else 1.0
    return {
        "judge_requests": round(stats.get("requests", 0) * scale),
        "judged": round(stats.get("judged", 0) * scale),
        "cached": round(stats.get("hits", 0) * scale),
    }


def _searched_otherwise(fresh: dict[str, list[Hit]], run: dict[str, list[Hit]]) -> bool:
    """Whether the retriever answered a search of the generator (`fresh`, by Turn.key) with
    other passages than the top of the evaluated run's ranking (`run`), or answered one the
    run never made (nothing to compare). False: the generator read what it read in the run,
    so answers that differ are the generator's own."""
    for key, hits in fresh.items():
        ran = run.get(key)
        if ran is None or [_passage(hit) for hit in hits] != [_passage(hit) for hit in ran[: len(hits)]]:
            return True
    return False


def _passage(hit: Hit) -> tuple[str, int | None, int | None]:
    return hit.doc_id, hit.start, hit.end  # what a generator reads of a hit; its score aside


def _require_same_searches(
    config: Config,
    chosen: list[Question],
    built: Built,
    rows: dict[str, AnswerResult | None],
    caller: Caller,
    differences: list[str],
) -> None:
    """Tell a generator that varies from a retriever that answers its searches otherwise: ask
    the generator once more, its searches answered from the evaluated run's hits. Answers
    that agree then mean the generator is deterministic and the retriever gave its searches
    another ranking than the run's (a ranking that depends on the depth asked, or on the
    call): exit 2 naming the retriever, not the generator."""
    ids = [question.id for question in chosen]
    from_run = [_ask_again(built.generator(), question, config.golden, caller) for question in chosen]
    if answer_differences(ids, [rows.get(qid) for qid in ids], from_run):
        return  # the generator itself varies: require_deterministic says so
    listed = "; ".join(differences[:3]) + (
        f"; and {len(differences) - 3} more" if len(differences) > 3 else ""
    )
    raise EvalInputError(
        config.path,
        f"the retriever answers the generator's searches with another ranking than the evaluated run's: "
        f"asked again on {len(chosen)} question(s), the generator gave other answers from the "
        f"retriever's fresh results ({listed}) and the same answers from the run's own hits. A "
        "retriever whose top results change with the depth asked (the generator asks for fewer) "
        "or from one call to the next makes the answers vary at random",
        "make search(question, depth) return the first `depth` results of one ranking, the same on "
        'every call; or declare it in [gate]: stochastic = ["retriever"] with `repeats` runs per '
        "question (docs/statistics.md), then remake the baseline with `nox -s baseline`",
    )


def _ask_again(generator: Generator, question: Question, golden: Path, caller: Caller) -> Answer:
    """The generator's answer to `question`, asked again (never from the output cache); a
    crash names the question (exit 2)."""
    try:
        turn = question.asked
        return caller.call(with_history(generator.answer, turn), turn.text)
    except Exception as error:  # a crash, exit or hang of the team's own generator: name the question
        raise EvalInputError(
            golden,
            f"question {question.id!r}: the generator {failure(error)} when asked again (determinism check)",
            "fix answer() in generator.py; this question reproduces it",
            question.line,
        ) from error


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
