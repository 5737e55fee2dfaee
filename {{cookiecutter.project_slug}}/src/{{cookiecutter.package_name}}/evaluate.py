"""Run the golden set through the retriever and build the report (a plain, JSON-ready dict).

Report layout (written by report.py, read back by the gate):
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
             answer with its checks (generation.py)
The aggregate also holds the answer checks (abstention, key_facts, faithfulness), and the
settings the judge that produced the verdicts and the [generation] options.
"""

from __future__ import annotations

import dataclasses
from statistics import fmean
from typing import Any

from .batch import compute, judge_rankings
from .config import Config
from .data import Question, load_corpus, load_golden
from .errors import EvalInputError
from .generation import evaluate_answers
from .ranking import Hit, Remembered, RetrieverOutputError, check_hits
from .receipt import build_receipt
from .retriever import build_retriever
from .retrievers import OptionsError
from .tokens import make_tokenizer

FORMAT = "rag-eval-report"
VERSION = 1


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


def _search_many(retriever: object, questions: list[Question], config: Config) -> list[object] | None:
    """All questions in one call to the retriever's optional `search_many` (see ranking.py);
    None when it has none. Each answer is then checked like one from `search`."""
    many = getattr(retriever, "search_many", None)
    if not callable(many):
        return None
    fix = "fix search_many() in retriever.py, or remove it to have search() called per question"
    try:
        answered = many([question.question for question in questions], config.depth)
    except Exception as error:  # a crash in the team's own retriever: exit 2, not a traceback
        raise EvalInputError(
            config.golden, f"search_many raised {type(error).__name__}: {error}", fix
        ) from error
    if not isinstance(answered, list | tuple) or len(answered) != len(questions):
        got = f"{len(answered)} lists" if isinstance(answered, list | tuple) else type(answered).__name__
        raise EvalInputError(
            config.golden,
            f"search_many must return one list of hits per question ({len(questions)}), got {got}",
            fix,
        )
    return list(answered)


def evaluate(config: Config, judge_stats: dict[str, int] | None = None) -> dict[str, Any]:
    """Evaluate the retriever from `retriever.py` on the golden set named in `config`.

    `judge_stats`, when given, receives the verdict cache's hits and misses and the judge
    calls of this run: they describe the run, not the system, so the report leaves them out.
    """
    corpus = load_corpus(config.corpus)
    questions = load_golden(config.golden, corpus)
    try:
        retriever = build_retriever(list(corpus.values()), make_tokenizer(config.tokenizer), config.retriever)
    except OptionsError as error:
        raise EvalInputError(config.path, f"[retriever]: {error}", "fix or remove that option") from None
    except EvalInputError:
        raise
    except Exception as error:  # a crash in the team's own build_retriever: exit 2, not a traceback
        raise EvalInputError(
            config.path,
            f"build_retriever raised {type(error).__name__}: {error}",
            "fix build_retriever in retriever.py, or the [retriever] options it reads",
        ) from error

    answered = _search_many(retriever, questions, config)  # None: the retriever has no search_many
    method = "search()" if answered is None else "search_many()"  # the one to fix
    ranked = []
    for i, question in enumerate(questions):
        try:
            found = answered[i] if answered is not None else retriever.search(question.question, config.depth)
            hits = check_hits(found, config.depth, corpus)
        except RetrieverOutputError as error:
            raise EvalInputError(
                config.golden,
                f"question {question.id!r}: bad retriever output: {error}",
                f"fix {method} in retriever.py (see the rules in its docstring)",
                question.line,
            ) from None
        except Exception as error:  # a crash in the team's own retriever: name the question
            raise EvalInputError(
                config.golden,
                f"question {question.id!r}: the retriever raised {type(error).__name__}: {error}",
                "fix search() in retriever.py; this question reproduces it",
                question.line,
            ) from error
        ranked.append(hits)

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
    known = {question.question: hits for question, hits in zip(questions, ranked, strict=True)}
    answers = evaluate_answers(config, questions, corpus, Remembered(retriever, known, config.depth))
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
        "aggregate": {**_means(rows, config), **answers.aggregate},  # type: ignore[dict-item]
        "slices": slices,
        "receipt": build_receipt(config, settings),
        "questions": rows,
    }
