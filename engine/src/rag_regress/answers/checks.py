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
from ..inputs.reports import AnswerResult, Finding, Unsupported
from ..retrieval.caller import Caller
from ..retrieval.calls import failure
from ..retrieval.remote import call_everywhere, on_cluster
from .cache import VerdictCache
from .citations import Sentence, citation_recall, cited_sentences, out_of_range, strip_markers
from .contract import AnswerOutputError, check_answer
from .facts import Found, find
from .judges import Item, Verdict, build_judge
from .judges.claims import split_sentences
from .reference import exact_match, share, token_f1
from .relevance import relevance
from .settings import ANSWER_CHECKS, JudgeSettings


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


class _Asked:
    """The judge's items of one run, each asked once: a claim and the texts it is read against."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self._at: dict[Item, int] = {}

    def __call__(self, claim: str, contexts: tuple[str, ...]) -> int:
        item = (claim, contexts)
        if item not in self._at:
            self._at[item] = len(self.items)
            self.items.append(item)
        return self._at[item]


@dataclass
class _Plan:
    """What one answer asks of the judge: the index of each verdict in the run's items."""

    plain: str  # the answer without its citation markers
    claims: list[str]
    faithful: list[int]  # each sentence against all the contexts
    pairs: list[tuple[int, int, int]]  # (sentence, cited position, verdict) per citation
    stated: list[tuple[str, int]]  # each reference sentence against the answer
    in_reference: list[int]  # each answer sentence against the reference
    facts: dict[str, Found | int | None]  # key fact or nugget -> where found, a verdict, or None


def _plan(question: Question, answer: Answer, found: list[Sentence], match: str, ask: _Asked) -> _Plan:
    plain = strip_markers(answer.text)
    contexts = tuple(c.text for c in answer.contexts)
    claims = [sentence.text for sentence in found]
    plan = _Plan(plain, claims, [ask(claim, contexts) for claim in claims], [], [], [], {})
    for i, sentence in enumerate(found):  # none when it abstained
        plan.pairs += [(i, n, ask(sentence.text, (contexts[n - 1],))) for n in sentence.cites]
    if answer.abstained or not question.answerable:
        return plan
    if question.reference is not None:
        plan.stated = [(part, ask(part, (plain,))) for part in split_sentences(question.reference)]
        plan.in_reference = [ask(claim, (question.reference,)) for claim in claims]
    for fact in [*question.must_include, *(nugget.text for nugget in question.nuggets)]:
        where = find(fact, plain, match)
        plan.facts[fact] = ask(fact, (plain,)) if where is None and match == "judge" else where
    return plan


def _result(
    question: Question,
    answer: Answer,
    plan: _Plan,
    verdicts: list[Verdict],
    *,
    cites: bool,
    names: tuple[str, ...],
) -> AnswerResult:
    """The checks of one answer from its plan and the run's verdicts (module doc)."""
    judged = [verdicts[i] for i in plan.faithful]
    facts: dict[str, Found | None] = {}
    for fact, where in plan.facts.items():
        if isinstance(where, int):
            verdict = verdicts[where]
            window = verdict.window or plan.plain
            where = Found(window, "judge", window) if verdict.supported else None
        facts[fact] = where
    wanted = question.answerable
    refused = wanted and answer.abstained  # every correctness check of a refusal is 0
    missing = [fact for fact in question.must_include if facts.get(fact) is None]
    found_nuggets = [facts.get(nugget.text) is not None for nugget in question.nuggets]
    reference = question.reference if wanted else None
    pair_ok = {(i, n): verdicts[v].supported for i, n, v in plan.pairs}
    supported = [v.supported for v in judged]
    cites_support = [any(ok for (at, _), ok in pair_ok.items() if at == i) for i in range(len(judged))]
    citing = cites and not answer.abstained
    return AnswerResult(
        text=answer.text,
        abstained=answer.abstained,
        contexts=[c.doc_id for c in answer.contexts],
        abstention=float(answer.abstained != question.answerable),
        key_facts=(0.0 if answer.abstained or missing else 1.0) if wanted else None,
        missing_facts=question.must_include if answer.abstained else missing,
        faithfulness=None if answer.abstained else (fmean(supported) if judged else 0.0),
        claims=len(judged),
        unsupported=[
            Unsupported(c, v.reason) for c, v in zip(plan.claims, judged, strict=True) if not v.supported
        ],
        correctness=None
        if reference is None
        else (0.0 if refused else share([verdicts[v].supported for _, v in plan.stated])),
        answer_precision=None
        if reference is None or answer.abstained
        else share([verdicts[v].supported for v in plan.in_reference]),
        answer_f1=None if reference is None else token_f1("" if refused else plan.plain, reference),
        exact_match=None if reference is None else exact_match("" if refused else plan.plain, reference),
        nugget_recall=share(found_nuggets) if wanted else None,
        vital_recall=share([f for f, n in zip(found_nuggets, question.nuggets, strict=True) if n.vital])
        if wanted
        else None,
        citation_precision=share(list(pair_ok.values())) if citing else None,
        citation_recall=citation_recall(supported, cites_support) if citing else None,
        relevance=None if answer.abstained else relevance(question.question, plan.plain, names),
        matched=[
            Finding(fact, _held(where))
            for fact, where in facts.items()
            if where is not None and where.how != "literal"
        ],
        missing_nuggets=[n.text for n, ok in zip(question.nuggets, found_nuggets, strict=True) if not ok]
        if wanted
        else [],
        not_stated=[]
        if refused
        else [Finding(part, verdicts[v].reason) for part, v in plan.stated if not verdicts[v].supported],
        miscited=[
            Finding(
                plan.claims[i], f"cites [{n}] ({answer.contexts[n - 1].doc_id}), which does not support it"
            )
            for (i, n), ok in pair_ok.items()
            if not ok
        ]
        if citing
        else [],
        uncited=[
            c for c, ok, cited in zip(plan.claims, supported, cites_support, strict=True) if ok and not cited
        ]
        if citing
        else [],
    )


def _held(where: Found) -> str:
    """How a fact found other than literally is shown: what holds it, how, and where."""
    shown = f"held by {where.span!r} ({where.how})"
    return shown if where.sentence in ("", where.span) else f"{shown} in {where.sentence!r}"


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

    names = tuple(judge.names)
    sentences = [[] if a.abstained else cited_sentences(a.text) for a in answers]
    for question, answer, found in zip(questions, answers, sentences, strict=True):
        if (number := out_of_range(found, len(answer.contexts))) is not None:
            held = len(answer.contexts)
            raise EvalInputError(
                golden,
                f"question {question.id!r}: the answer cites [{number}], but it has {held} context"
                f"{'' if held == 1 else 's'}",
                "a marker [n] names a context by its position in Answer.contexts, from 1 (fix answer() "
                "in generator.py)",
                question.line,
            )
    ask = _Asked()
    plans = [
        _plan(question, answer, found, judge.match, ask)
        for question, answer, found in zip(questions, answers, sentences, strict=True)
    ]
    with judging():
        verdicts, stats = judge_all(ask.items, judge, config_path)
    cites = any(sentence.cites for found in sentences for sentence in found)
    rows = [
        _result(question, answer, plan, verdicts, cites=cites, names=names)
        for question, answer, plan in zip(questions, answers, plans, strict=True)
    ]

    def mean(name: str) -> float:
        values = [value for row in rows if (value := row.check(name)) is not None]
        return fmean(values) if values else 0.0

    return AnswerResults(rows, {name: mean(name) for name in ANSWER_CHECKS}, judge.identity(), stats)
