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
from ..calling.asking import with_history
from ..calling.caller import Caller
from ..calling.calls import failure
from ..calling.remote import call_everywhere, on_cluster
from ..errors import EvalInputError
from ..execution import Raised
from ..inputs.data import Question
from ..inputs.reports import AnswerResult, Finding, Unsupported
from .cache import VerdictCache
from .citations import Sentence, citation_recall, cited_sentences, strip_markers
from .contract import AnswerOutputError, check_answer
from .defects import defects
from .facts import Found, find
from .judges import Item, Verdict, build_judge
from .judges.claims import split_sentences
from .reference import exact_match, share, token_f1
from .relevance import relevance
from .settings import ANSWER_CHECKS, JudgeSettings
from .verdicts import ALWAYS_JUDGES, NO_CONTEXT, asked_of, judged


@dataclass
class AnswerResults:
    rows: list[AnswerResult]  # one per question, in golden-set order
    aggregate: dict[str, float]
    judge: dict[str, Any]  # the judge's identity, recorded in the report settings
    cache: dict[str, int]  # hits, misses and model calls of this run


_NOT_FETCHED = object()  # no answer came from a cluster: the generator is called here


def checked_answer(
    generator: Generator,
    question: Question,
    corpus: dict[str, Document],
    golden: Path,
    caller: Caller,
    fetched: dict[str, object] | None = None,
) -> Answer:
    """The checked answer to `question`: from the output cache when it holds one, else from
    the generator (cached once it passed); `fetched` holds what the generator returned or
    raised on a cluster's workers. A cached answer is checked as a fresh one is."""
    cache, turn = caller.cache, question.asked
    cached = cache.answer_for(turn.key) if cache is not None else None
    try:  # through calling/calls.py: an exit or a hang of the team's generator is an error too
        raw = cached if cached is not None else (fetched or {}).get(turn.key, _NOT_FETCHED)
        if raw is _NOT_FETCHED:
            raw = caller.call(with_history(generator.answer, turn), turn.text)
        elif isinstance(raw, Raised):
            raise raw.error
        elif cached is None and isinstance(raw, Answer):  # a worker called the generator: its usage counts
            caller.usage.add(raw.usage)
        answer = check_answer(raw, corpus)
    except AnswerOutputError as error:
        who, fix = _author(generator)
        problem = f"question {question.id!r}: bad output of {who}: {error}"
        raise EvalInputError(golden, problem, fix, question.line) from None
    except Exception as error:  # a crash in the generator: name the question
        who, fix = _author(generator)
        raise EvalInputError(
            golden, f"question {question.id!r}: {who} {failure(error)}", fix, question.line
        ) from error
    if cache is not None and cached is None:
        cache.put_answer(turn.key, answer)
    return answer


def _author(generator: Generator) -> tuple[str, str]:
    """Who wrote an answer, and what to fix when it fails: a shipped adapter (the openai one
    calling a model) is named with its settings, never the team's answer()."""
    module = type(generator).__module__
    if module.startswith("rag_regress.adapters."):
        name = module.rsplit(".", 1)[1]
        return (
            f"the {name} adapter ({module})",
            "check [generation] (the server, its model, the key) and the model server's log; "
            "this question reproduces it",
        )
    return "the generator", "fix answer() in generator.py; this question reproduces it"


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
        fresh = iter(asked_of(judge, todo, settings, config_path))
        served = dict(getattr(judge, "stats", {}))
    verdicts = [verdict if verdict is not None else next(fresh) for verdict in found]
    for item, verdict in zip(items, verdicts, strict=True):
        if judged(verdict):  # an item not judged is asked again next run
            cache.put(item, verdict)
    cache.save()
    skipped = sum(not judged(verdict) for verdict in verdicts)
    stats = {
        "hits": cache.hits,
        "misses": cache.misses,
        "judged": len(todo) - skipped,
        "not_judged": skipped,
        "rejected": cache.rejected,
    }
    return verdicts, stats | served


class _Asked:
    """The judge's items of one run, each asked once: a claim and the texts it is read against."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self._at: dict[Item, int] = {}

    def __call__(self, claim: str, contexts: tuple[str, ...]) -> int:
        item = (claim, contexts)
        at = self._at.get(item)
        if at is None:
            at = self._at[item] = len(self.items)
            self.items.append(item)
        return at


_Cited = tuple[list[int], list[tuple[int, int, int]], list[tuple[int, int]]]


class _Sentences:
    """What an answer's sentences ask of the judge (each sentence against all its contexts,
    and against each context it cites), worked out once per answer: the same answer comes back
    for many questions, and asks the same items each time."""

    def __init__(self, ask: _Asked) -> None:
        self.ask = ask
        self._done: dict[tuple[str, bool, tuple[str, ...]], _Cited] = {}

    def __call__(self, answer: Answer, found: list[Sentence], contexts: tuple[str, ...]) -> _Cited:
        """(faithful, pairs, outside) of _Plan for `answer`, its sentences `found`, read
        against `contexts`; fresh lists each time."""
        key = (answer.text, answer.citations, contexts)
        done = self._done.get(key)
        if done is None:
            done = self._done[key] = self._asked(found, contexts)
        faithful, pairs, outside = done
        return list(faithful), list(pairs), list(outside)

    def _asked(self, found: list[Sentence], contexts: tuple[str, ...]) -> _Cited:
        """Each sentence asked against all the contexts, then against each context it cites."""
        faithful = [self.ask(sentence.text, contexts) for sentence in found]
        pairs: list[tuple[int, int, int]] = []
        outside: list[tuple[int, int]] = []
        for i, sentence in enumerate(found):  # none when it abstained
            given = [n for n in sentence.cites if 1 <= n <= len(contexts)]
            pairs += [(i, n, self.ask(sentence.text, (contexts[n - 1],))) for n in given]
            outside += [(i, n) for n in sentence.cites if n not in given]  # a miscitation, measured
        return faithful, pairs, outside


class _Reading:
    """How the checks read the texts of one run, each text read once: the same answer comes
    back for many questions (a question asked again, an answer from the output cache), and its
    sentences, its text without markers, where it holds a key fact and its relevance to the
    same question are the same each time. Everything here is a pure function of the texts, so
    a memo changes no number."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self._sentences: dict[tuple[str, bool], tuple[Sentence, ...]] = {}
        self._plain: dict[str, str] = {}
        self._contexts: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._relevance: dict[tuple[str, str], float | None] = {}
        self._found: dict[tuple[str, str, str], Found | None] = {}
        self._defects: dict[tuple[str, bool, tuple[str, ...]], tuple[str, ...]] = {}

    def sentences(self, answer: Answer) -> list[Sentence]:
        """The answer's sentences, with the contexts each cites when its markers are citations
        (Answer.citations; with citations off, "[2]" is the model's text); none when it abstained."""
        if answer.abstained:
            return []
        key = (answer.text, answer.citations)
        found = self._sentences.get(key)
        if found is None:
            found = self._sentences[key] = tuple(
                cited_sentences(answer.text)
                if answer.citations
                else [Sentence(t, ()) for t in split_sentences(answer.text)]
            )
        return list(found)

    def plain(self, answer: Answer) -> str:
        """The answer's text without its citation markers (its text when they are not citations)."""
        if not answer.citations:
            return answer.text
        plain = self._plain.get(answer.text)
        if plain is None:
            plain = self._plain[answer.text] = strip_markers(answer.text)
        return plain

    def contexts(self, answer: Answer) -> tuple[str, ...]:
        """The texts of the answer's contexts, as one tuple for every answer given the same ones:
        the judge's items of a run then share it (compared by identity, kept once)."""
        texts = tuple(c.text for c in answer.contexts)
        return self._contexts.setdefault(texts, texts)

    def relevance(self, question: str, plain: str) -> float | None:
        """relevance.relevance of the answer's `plain` text to `question`, with [judge] names."""
        key = (question, plain)
        if key not in self._relevance:
            self._relevance[key] = relevance(question, plain, self.names)
        return self._relevance[key]

    def defects(self, answer: Answer) -> list[str]:
        """defects.defects of `answer` (a fresh list each time)."""
        key = (answer.text, answer.abstained, answer.notes)
        found = self._defects.get(key)
        if found is None:
            found = self._defects[key] = tuple(defects(answer))
        return list(found)

    def find(self, fact: str, plain: str, match: str) -> Found | None:
        """facts.find: where the answer's `plain` text holds `fact` (by `match`), or None."""
        key = (fact, plain, match)
        if key not in self._found:
            self._found[key] = find(fact, plain, match)
        return self._found[key]


@dataclass
class _Plan:
    """What one answer asks of the judge: the index of each verdict in the run's items."""

    plain: str  # the answer without its citation markers
    claims: list[str]
    faithful: list[int]  # each sentence against all the contexts
    pairs: list[tuple[int, int, int]]  # (sentence, cited position, verdict) per citation
    outside: list[tuple[int, int]]  # (sentence, cited position) per citation of no context given
    stated: list[tuple[str, int]]  # each reference sentence against the answer
    in_reference: list[int]  # each answer sentence against the reference
    facts: dict[str, Found | int | None]  # key fact or nugget -> where found, a verdict, or None


def _plan(
    question: Question, answer: Answer, found: list[Sentence], match: str, cited: _Sentences, read: _Reading
) -> _Plan:
    """What `answer` (its sentences `found`) asks of the judge, each item through `cited.ask`
    (once per run), with the key facts and nuggets found without the judge (`match`)."""
    plain = read.plain(answer)
    claims = [sentence.text for sentence in found]
    plan = _Plan(plain, claims, *cited(answer, found, read.contexts(answer)), [], [], {})
    ask = cited.ask
    if answer.abstained or not question.answerable:
        return plan
    if question.reference is not None:
        plan.stated = [(part, ask(part, (plain,))) for part in split_sentences(question.reference)]
        plan.in_reference = [ask(claim, (question.reference,)) for claim in claims]
    for fact in [*question.must_include, *(nugget.text for nugget in question.nuggets)]:
        where = read.find(fact, plain, match)
        plan.facts[fact] = ask(fact, (plain,)) if where is None and match == "judge" else where
    return plan


def _result(
    question: Question,
    answer: Answer,
    plan: _Plan,
    verdicts: list[Verdict],
    *,
    cites: bool,
    read: _Reading,
    may_skip: bool = True,
    all_judged: bool = False,
) -> AnswerResult:
    """The checks of one answer from its plan and the run's verdicts (module doc), its texts
    read through `read`. An item the judge gave no verdict (verdicts.NotJudged) counts neither
    way in a share: it is listed under not_judged with its check, and `judged` is the share of
    the answer's items judged (None for a judge that always gives one: `may_skip` False).
    `all_judged` says the run's verdicts hold no NotJudged, so there is nothing to list."""
    sentences = [verdicts[i] for i in plan.faithful]
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
    pair_ok = {(i, n): verdicts[v].supported for i, n, v in plan.pairs if judged(verdicts[v])}
    pair_ok |= dict.fromkeys(plan.outside, False)
    faithful = [(c, v) for c, v in zip(plan.claims, sentences, strict=True) if judged(v)]
    supported = [v.supported for v in sentences]
    citing_ok = {at for (at, _), ok in pair_ok.items() if ok}  # sentences one of whose citations holds
    cites_support = [i in citing_ok for i in range(len(sentences))]
    stated = [(part, verdicts[v]) for part, v in plan.stated]
    citing = cites and not answer.abstained
    outputs = read.defects(answer)
    return AnswerResult(
        text=answer.text,
        abstained=answer.abstained,
        contexts=[c.doc_id for c in answer.contexts],
        abstention=float(answer.abstained != question.answerable),
        key_facts=(0.0 if answer.abstained or missing else 1.0) if wanted else None,
        missing_facts=question.must_include if answer.abstained else missing,
        faithfulness=None if answer.abstained else _faithfulness(sentences),
        claims=len(sentences),
        unsupported=[Unsupported(c, v.reason) for c, v in faithful if not v.supported],
        correctness=None
        if reference is None
        else (0.0 if refused else share([v.supported for _, v in stated if judged(v)])),
        answer_precision=None
        if reference is None or answer.abstained
        else share([verdicts[v].supported for v in plan.in_reference if judged(verdicts[v])]),
        answer_f1=None if reference is None else token_f1("" if refused else plan.plain, reference),
        exact_match=None if reference is None else exact_match("" if refused else plan.plain, reference),
        nugget_recall=share(found_nuggets) if wanted else None,
        vital_recall=share([f for f, n in zip(found_nuggets, question.nuggets, strict=True) if n.vital])
        if wanted
        else None,
        citation_precision=share(list(pair_ok.values())) if citing else None,
        citation_recall=citation_recall(supported, cites_support) if citing else None,
        relevance=None if answer.abstained else read.relevance(question.question, plan.plain),
        well_formed=0.0 if outputs else 1.0,
        judged=(1.0 if all_judged else _judged_share(plan, verdicts)) if may_skip else None,
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
        else [
            Finding(part, _stated_why(v, plan.plain)) for part, v in stated if judged(v) and not v.supported
        ],
        miscited=_miscited(plan, answer, pair_ok) if citing else [],
        uncited=[
            c for c, ok, cited in zip(plan.claims, supported, cites_support, strict=True) if ok and not cited
        ]
        if citing
        else [],
        defects=outputs,
        not_judged=[] if all_judged else _not_judged(plan, verdicts, refused),
    )


def _faithfulness(sentences: list[Verdict]) -> float | None:
    """The share of the judged sentences supported; 0 with no sentence (nothing it says can be
    checked); None when the judge judged none of them (not judged is no pass and no fail)."""
    if not sentences:
        return 0.0
    return share([v.supported for v in sentences if judged(v)])


def _judged_share(plan: _Plan, verdicts: list[Verdict]) -> float:
    """The share of the answer's judge items that have a verdict; 1 when it asks none (nothing
    of it is left unjudged)."""
    used = {*plan.faithful, *(v for _, _, v in plan.pairs), *(v for _, v in plan.stated), *plan.in_reference}
    used |= {where for where in plan.facts.values() if isinstance(where, int)}
    return fmean(judged(verdicts[i]) for i in used) if used else 1.0


def _stated_why(verdict: Verdict, answer: str) -> str:
    """Why a reference sentence is not stated: the verdict's reason, read against the answer
    (the judge's "no context" is an answer with no sentence to check it against)."""
    if verdict.reason == NO_CONTEXT:
        return "the answer holds no sentence to check it against" if answer.strip() else "the answer is empty"
    return verdict.reason


def _miscited(plan: _Plan, answer: Answer, pair_ok: dict[tuple[int, int], bool]) -> list[Finding]:
    """Each citation whose passage does not support its sentence, or that names no passage
    the answer was given."""
    held = len(answer.contexts)
    given = f"{held} context{'' if held == 1 else 's'}"
    return [
        Finding(
            plan.claims[i],
            f"cites [{n}] ({answer.contexts[n - 1].doc_id}), which does not support it"
            if 1 <= n <= held
            else f"cites [{n}], but the answer was given {given}: a passage it never had",
        )
        for (i, n), ok in pair_ok.items()
        if not ok
    ]


def _not_judged(plan: _Plan, verdicts: list[Verdict], refused: bool) -> list[Finding]:
    """Each item the judge gave no verdict, with the check it belongs to."""
    asked = [(claim, "faithfulness", v) for claim, v in zip(plan.claims, plan.faithful, strict=True)]
    asked += [(plan.claims[i], f"citation [{n}]", v) for i, n, v in plan.pairs]
    if not refused:
        asked += [(part, "correctness", v) for part, v in plan.stated]
    asked += [
        (claim, "answer_precision", v) for claim, v in zip(plan.claims, plan.in_reference, strict=False)
    ]
    asked += [(fact, "key fact", v) for fact, v in plan.facts.items() if isinstance(v, int)]
    return [
        Finding(text, f"{check}: {verdicts[v].reason}") for text, check, v in asked if not judged(verdicts[v])
    ]


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
    calls the generator (calling/caller.py: concurrency, retries, rate limit, the output
    cache; by default one call after another, uncached) and shows progress labelled `what`;
    `judging` shows progress while judging.
    """
    caller = caller or Caller()
    fetched: dict[str, object] = {}  # what the generator returned on a cluster's workers
    if on_cluster():
        cache = caller.cache
        turns = [question.asked for question in questions]
        asked = [turn for turn in turns if cache is None or cache.answer_for(turn.key, peek=True) is None]
        unique = list({turn.key: turn for turn in asked}.values())
        answered = call_everywhere(generator, "answer", unique, (), caller) or []
        fetched = {turn.key: raw for turn, raw in zip(unique, answered, strict=True)}
    answers = caller.map(
        lambda question: checked_answer(generator, question, corpus, golden, caller, fetched), questions, what
    )

    read = _Reading(tuple(judge.names))
    sentences = [read.sentences(answer) for answer in answers]
    ask = _Asked()
    cited = _Sentences(ask)
    plans = [
        _plan(question, answer, found, judge.match, cited, read)
        for question, answer, found in zip(questions, answers, sentences, strict=True)
    ]
    with judging():
        verdicts, stats = judge_all(ask.items, judge, config_path)
    cites = any(sentence.cites for found in sentences for sentence in found)
    may_skip = judge.backend not in ALWAYS_JUDGES
    all_judged = all(judged(verdict) for verdict in verdicts)  # once, not per answer
    rows = [
        _result(
            question, answer, plan, verdicts, cites=cites, read=read, may_skip=may_skip, all_judged=all_judged
        )
        for question, answer, plan in zip(questions, answers, plans, strict=True)
    ]

    def mean(name: str) -> float:
        values = [value for row in rows if (value := row.check(name)) is not None]
        return fmean(values) if values else 0.0

    # `judged` only for a judge that may give no verdict: the others judge every item
    checks = [name for name in ANSWER_CHECKS if may_skip or name != "judged"]
    return AnswerResults(rows, {name: mean(name) for name in checks}, judge.identity(), stats)
