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

import functools
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from ..api import Answer, Document, Generator
from ..errors import EvalInputError
from ..execution import Raised
from ..inputs.data import Question
from ..inputs.reports import AnswerResult, Unsupported
from ..retrieval.caller import Caller
from ..retrieval.calls import failure
from ..retrieval.remote import call_everywhere, on_cluster
from .cache import VerdictCache
from .contract import AnswerOutputError, check_answer
from .judges import Item, Verdict, build_judge
from .judges.claims import split_sentences
from .settings import ANSWER_CHECKS, JudgeSettings


@functools.lru_cache(maxsize=1 << 12)  # answers and key facts come back in many questions
def normalise(text: str) -> str:
    """Lower case, every run of whitespace one space, trimmed: how key facts are compared."""
    return re.sub(r"\s+", " ", text).strip().lower()


def missing_facts(answer: str, must_include: list[str]) -> list[str]:
    """The `must_include` strings not in the answer (after normalising both)."""
    text = normalise(answer)
    return [fact for fact in must_include if normalise(fact) not in text]


@dataclass
class AnswerResults:
    rows: list[AnswerResult]  # one per question, in golden-set order
    aggregate: dict[str, float]
    judge: dict[str, Any]  # the judge's identity, recorded in the report settings
    cache: dict[str, int]  # hits, misses and model calls of this run


_NOT_FETCHED = object()  # no answer came from a cluster: the generator is called here


def _answer(
    generator: Generator,
    question: Question,
    corpus: dict[str, Document],
    golden: Path,
    caller: Caller,
    fetched: dict[str, object],
) -> Answer:
    """The checked answer to `question`: from the output cache when it holds one, else from
    the generator (cached once it passed); `fetched` holds what the generator returned or
    raised on a cluster's workers. A cached answer is checked as a fresh one is."""
    cache = caller.cache
    cached = cache.answer_for(question.question) if cache is not None else None
    try:  # through calls.py: an exit or a hang of the team's generator is an error too
        raw = cached if cached is not None else fetched.get(question.question, _NOT_FETCHED)
        if raw is _NOT_FETCHED:
            raw = caller.call(generator.answer, question.question)
        elif isinstance(raw, Raised):
            raise raw.error
        answer = check_answer(raw, corpus)
    except AnswerOutputError as error:
        problem = f"question {question.id!r}: bad generator output: {error}"
        raise EvalInputError(golden, problem, "fix answer() in generator.py", question.line) from None
    except Exception as error:  # a crash in the team's own generator: name the question
        raise EvalInputError(
            golden,
            f"question {question.id!r}: the generator {failure(error)}",
            "fix answer() in generator.py; this question reproduces it",
            question.line,
        ) from error
    if cache is not None and cached is None:
        cache.put_answer(question.question, answer)
    return answer


def judge_all(
    items: list[Item], settings: JudgeSettings, config_path: Path
) -> tuple[list[Verdict], dict[str, int]]:
    """Verdicts for every item: from the cache when possible, else from one batched judge
    call. The judge (and its model) is loaded only when something is not cached."""
    cache = VerdictCache(settings.cache, settings.identity())
    if cache.note:
        print(f"warning: {cache.note}", file=sys.stderr)
    found = [cache.get(item) for item in items]
    todo = [item for item, verdict in zip(items, found, strict=True) if verdict is None]
    fresh: Iterator[Verdict] = iter(())
    served: dict[str, int] = {}  # what a backend with a server asked of it (requests, tokens)
    if todo:
        judge = build_judge(settings, config_path)
        fresh = iter(judge.verdicts(todo))
        served = dict(getattr(judge, "stats", {}))
    verdicts = [verdict if verdict is not None else next(fresh) for verdict in found]
    for item, verdict in zip(items, verdicts, strict=True):
        cache.put(item, verdict)
    cache.save()
    stats = {"hits": cache.hits, "misses": cache.misses, "judged": len(todo), "rejected": cache.rejected}
    return verdicts, stats | served


def evaluate_answers(
    generator: Generator,
    questions: list[Question],
    corpus: dict[str, Document],
    judge: JudgeSettings,
    *,
    golden: Path,
    config_path: Path,
    caller: Caller | None = None,
    what: str = "answering",
    judging: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> AnswerResults:
    """Answer every question with `generator` and check each answer (see the module doc).

    `golden` and `config_path` only name the files in error messages: the golden set for a
    question whose answer is broken, eval.toml for a judge that cannot be built. `caller`
    calls the generator (retrieval/caller.py: concurrency, retries, rate limit, the output
    cache; by default one call after another, uncached) and shows progress labelled `what`;
    `judging` shows progress while judging.
    """
    caller = caller or Caller()
    fetched: dict[str, object] = {}  # what the generator returned on a cluster's workers
    if on_cluster():
        cache = caller.cache
        asked = [
            q.question for q in questions if cache is None or cache.answer_for(q.question, peek=True) is None
        ]
        unique = list(dict.fromkeys(asked))
        fetched = dict(
            zip(unique, call_everywhere(generator, "answer", unique, (), caller) or [], strict=True)
        )
    answers = caller.map(
        lambda question: _answer(generator, question, corpus, golden, caller, fetched), questions, what
    )

    claims = [[] if a.abstained else split_sentences(a.text) for a in answers]
    items = [
        (claim, tuple(c.text for c in answer.contexts))
        for answer, found in zip(answers, claims, strict=True)
        for claim in found
    ]
    with judging():
        verdicts, stats = judge_all(items, judge, config_path)

    rows, position = [], 0
    for question, answer, found in zip(questions, answers, claims, strict=True):
        judged = verdicts[position : position + len(found)]
        position += len(found)
        missing = missing_facts(answer.text, question.must_include) if question.answerable else []
        faithfulness = None if answer.abstained else (fmean(v.supported for v in judged) if judged else 0.0)
        rows.append(
            AnswerResult(
                text=answer.text,
                abstained=answer.abstained,
                contexts=[c.doc_id for c in answer.contexts],
                abstention=float(answer.abstained != question.answerable),
                key_facts=(0.0 if answer.abstained or missing else 1.0) if question.answerable else None,
                missing_facts=question.must_include if answer.abstained else missing,
                faithfulness=faithfulness,
                claims=len(found),
                unsupported=[
                    Unsupported(c, v.reason) for c, v in zip(found, judged, strict=True) if not v.supported
                ],
            )
        )

    def mean(name: str) -> float:
        values = [value for row in rows if (value := row.check(name)) is not None]
        return fmean(values) if values else 0.0

    return AnswerResults(rows, {name: mean(name) for name in ANSWER_CHECKS}, judge.identity(), stats)
