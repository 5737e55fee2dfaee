"""Answer every golden question and check each answer: abstention, key facts, faithfulness.

Per question (the report row's "answer"):
  abstention    1 when the system abstained exactly when the question is unanswerable
  key_facts     1 when the answer holds every `must_include` string, compared after case
                and whitespace normalisation (answerable questions only, else null)
  faithfulness  share of the answer's sentences (claims) the judge finds supported by the
                contexts the answer used (answered questions only, else null), with the
                unsupported claims and why
Aggregates: abstention over all questions, key_facts over answerable ones, faithfulness
over answered ones (0 when nothing was answered: always abstaining cannot pass a floor).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from .answer_settings import ANSWER_CHECKS
from .answers import Answer, AnswerOutputError, check_answer
from .claims import split_sentences
from .config import Config
from .data import Document, Question
from .errors import EvalInputError
from .generator import build_generator
from .judges import Item, Verdict, build_judge
from .ranking import Retriever
from .retrievers import OptionsError
from .verdict_cache import VerdictCache


def normalise(text: str) -> str:
    """Lower case, every run of whitespace one space, trimmed: how key facts are compared."""
    return re.sub(r"\s+", " ", text).strip().lower()


def missing_facts(answer: str, must_include: list[str]) -> list[str]:
    """The `must_include` strings not in the answer (after normalising both)."""
    text = normalise(answer)
    return [fact for fact in must_include if normalise(fact) not in text]


@dataclass
class AnswerResults:
    rows: list[dict[str, Any]]  # one per question, in golden-set order
    aggregate: dict[str, float]
    judge: dict[str, Any]  # the judge's identity, recorded in the report settings
    cache: dict[str, int]  # hits, misses and model calls of this run


def _answer(generator: Any, question: Question, corpus: dict[str, Document], config: Config) -> Answer:
    try:
        return check_answer(generator.answer(question.question), corpus)
    except AnswerOutputError as error:
        problem = f"question {question.id!r}: bad generator output: {error}"
        raise EvalInputError(config.golden, problem, "fix answer() in generator.py", question.line) from None
    except Exception as error:  # a crash in the team's own generator: name the question
        raise EvalInputError(
            config.golden,
            f"question {question.id!r}: the generator raised {type(error).__name__}: {error}",
            "fix answer() in generator.py; this question reproduces it",
            question.line,
        ) from error


def judge_all(items: list[Item], config: Config) -> tuple[list[Verdict], dict[str, int]]:
    """Verdicts for every item: from the cache when possible, else from one batched judge
    call. The judge (and its model) is loaded only when something is not cached."""
    cache = VerdictCache(config.judge.cache, config.judge.identity())
    found = [cache.get(item) for item in items]
    todo = [item for item, verdict in zip(items, found, strict=True) if verdict is None]
    calls = 0
    if todo:
        fresh = iter(build_judge(config.judge, config.path).verdicts(todo))
        calls = 1
        found = [verdict if verdict is not None else next(fresh) for verdict in found]
    for item, verdict in zip(items, found, strict=True):
        cache.put(item, verdict)
    cache.save()
    stats = {"hits": cache.hits, "misses": cache.misses, "judge_calls": calls}
    return found, stats  # type: ignore[return-value]


def evaluate_answers(
    config: Config, questions: list[Question], corpus: dict[str, Document], retriever: Retriever
) -> AnswerResults:
    try:
        generator = build_generator(retriever, list(corpus.values()), config.generation)
    except OptionsError as error:
        raise EvalInputError(config.path, f"[generation]: {error}", "fix or remove that option") from None
    answers = [_answer(generator, question, corpus, config) for question in questions]

    claims = [[] if a.abstained else split_sentences(a.text) for a in answers]
    items = [
        (claim, tuple(c.text for c in answer.contexts))
        for answer, found in zip(answers, claims, strict=True)
        for claim in found
    ]
    verdicts, stats = judge_all(items, config)

    rows, position = [], 0
    for question, answer, found in zip(questions, answers, claims, strict=True):
        judged = verdicts[position : position + len(found)]
        position += len(found)
        missing = missing_facts(answer.text, question.must_include) if question.answerable else []
        row: dict[str, Any] = {
            "text": answer.text,
            "abstained": answer.abstained,
            "contexts": [c.doc_id for c in answer.contexts],
            "abstention": float(answer.abstained != question.answerable),
            "key_facts": (0.0 if answer.abstained or missing else 1.0) if question.answerable else None,
            "missing_facts": question.must_include if answer.abstained else missing,
            "faithfulness": None,
            "claims": len(found),
            "unsupported": [
                {"claim": c, "why": v.reason} for c, v in zip(found, judged, strict=True) if not v.supported
            ],
        }
        if not answer.abstained:
            row["faithfulness"] = fmean(v.supported for v in judged) if judged else 0.0
        rows.append(row)

    def mean(name: str) -> float:
        values = [row[name] for row in rows if row[name] is not None]
        return fmean(values) if values else 0.0

    return AnswerResults(rows, {name: mean(name) for name in ANSWER_CHECKS}, config.judge.identity(), stats)


def format_answers(report: dict[str, Any]) -> str:
    """Per-question answer checks (failures only), then the answer aggregates and the judge."""
    judge = report["settings"].get("judge", {})
    lines = ["", "Answers (abstention, key facts, faithfulness); problems only:"]
    for row in report["questions"]:
        answer = row.get("answer")
        if not answer:
            continue
        problems = []
        if answer["abstention"] < 1:
            problems.append(
                "abstained on an answerable question"
                if answer["abstained"]
                else "answered an unanswerable question"
            )
        if answer["key_facts"] == 0 and not answer["abstained"]:
            problems.append("missing key facts: " + "; ".join(repr(f) for f in answer["missing_facts"]))
        problems += [f"unsupported: {u['claim']!r} ({u['why']})" for u in answer["unsupported"]]
        if problems:
            lines.append(f"  {row['id']}: " + f"\n  {'':{len(row['id'])}}  ".join(problems))
    aggregate = report["aggregate"]
    lines.append("Answer aggregates:")
    lines += [f"  {name:<12} {aggregate[name]:6.3f}   {meaning}" for name, meaning in ANSWER_CHECKS.items()]
    model = f", model {judge.get('model')}" + (f"@{judge['revision']}" if judge.get("revision") else "")
    lines.append(
        f"Judge {judge.get('name')}{model if judge.get('model') else ''}, threshold {judge.get('threshold')}"
    )
    return "\n".join(lines)


def cache_line(cache: dict[str, int]) -> str:
    """What the verdict cache did this run (printed by eval, baseline and gate)."""
    return (
        f"Verdict cache: {cache['hits']} hits, {cache['misses']} misses; "
        f"judge model calls this run: {cache['judge_calls']}"
    )
