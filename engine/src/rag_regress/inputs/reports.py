"""The report: one typed record of an evaluation, written as JSON and read back as a baseline.

`run.evaluate` builds a `Report`; the gate compares two of them and adds its verdict; the
renderers (render/) show it. The JSON file is the machine-readable result, its layout
unchanged since format version 1:

  format, version  "rag-eval-report", 1
  settings   what shaped the numbers: k, depth, metrics, tokenizer, stats, retriever and its
             options, generation options, judge
  counts     questions, evaluated, left_out (unanswerable questions have no relevant
             documents, so they are left out of every retrieval average)
  aggregate  {metric or answer check: mean}
  slices     {tag: {questions, evaluated, metrics}}
  receipt    sha256 of corpus, golden set and config; git commit; judge; versions; seed; k
  questions  one row per question: retrieved [[id, score], ...], found and missing relevant
             ids within the top k, metrics and per-question checks, and the answer with
             its checks
  comparison (written by `gate` only) the verdict: passed, paired tests, failures, notes
  holdout    (written by `gate` only, when configured) holdout aggregate and dev - holdout gap
  run        (run form only) what the run asked of the system, not what it measured:
             {"system": {calls, retries, errors, cached, rejected, output_cache}}; the same
             system gives other counts on another run (a warm output cache: no call at all)
  judged     judged@k: {k, mean, questions, unjudged}: the mean over all questions of the
             share of each top k that the golden set judged (relevant or not_relevant), the
             questions with an unjudged document in their top k, and how many such documents
             (docs/golden.md: unjudged documents count as not relevant, as in trec_eval)
  passages   (only when the golden set names passages) passage metrics: names, evaluated
             (questions with passages), aggregate {name: mean}, questions {id: {name: value}}
             (retrieval/passages.py); informational, the gate does not compare them

Two forms, one format (version 3; versions 1 and 2 are still read):
  run       what `eval` and `gate` write under build/: every retrieved id and score, every
            answer's text.
  baseline  what `baseline` writes to evals/baseline.json and a team commits: only what the
            gate needs. Per question: the metrics and check results, the top k retrieved
            (ids and scores), the rank of every judged document (`relevant_ranks`, relevant
            and not_relevant alike, so the gate can say where one was before and recompute
            every metric), and the answer's checks and context ids,
            without its text. At 300 questions and depth 1,000 it is a few hundred KB
            instead of megabytes, and its diff shows what changed.

It is written with one question per line, so that a changed baseline reads well in a
pull-request diff, and atomically, so that a crash never leaves half a file behind.

Reading (`read_report`) takes a regular file of at most REPORT_LIMIT bytes, parsed strictly
(reading.py: no key twice, no NaN), and checks every field the engine uses: numbers are
finite numbers (never "0.9", true or null), metrics and checks are shares from 0 to 1, an
answerable question has metrics and an unanswerable one none, every evaluated question has
the metrics `settings.metrics` lists, each question appears once, and the recorded settings
and receipt have the types the gate reads. A hand-edited or truncated baseline is an error
naming the field (exit 2), never a traceback or a silently wrong comparison. Whether its
numbers agree with each other is the gate's check (gate/integrity.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ..errors import EvalInputError
from .files import write_atomic
from .reading import REPORT_LIMIT, parse_json, read_data

FORMAT = "rag-eval-report"
VERSION = 3
# Format versions this tool reads (1: before the baseline form; 2: before the receipt named
# the engine and the judge identity its version).
READS = (1, 2, 3)
SLACK = 1e-9  # a share read back may exceed [0, 1] by this much (float rounding of a mean)
T = TypeVar("T")


@dataclass(frozen=True)
class Unsupported:
    """A sentence of an answer the judge found unsupported, and why."""

    claim: str
    why: str


# The answer checks a record may lack (written before rag-regress 2.2): null when absent.
_CORRECTNESS = (
    "correctness",
    "answer_precision",
    "answer_f1",
    "exact_match",
    "nugget_recall",
    "vital_recall",
    "citation_precision",
    "citation_recall",
    "relevance",
    "well_formed",  # written since rag-regress 2.4
    "judged",
)


@dataclass(frozen=True)
class Finding:
    """A fact, sentence or citation of an answer, and what the checks found of it."""

    text: str
    why: str


@dataclass(frozen=True)
class AnswerResult:
    """One question's answer and its checks (null where a check does not apply:
    answers/checks.py says which apply to which questions)."""

    text: str
    abstained: bool
    contexts: list[str]  # document ids of the passages the answer was written from
    abstention: float  # 1: abstained exactly when the question is unanswerable
    key_facts: float | None  # answerable questions only
    missing_facts: list[str]
    faithfulness: float | None  # answered questions only: share of supported sentences
    claims: int  # sentences judged
    unsupported: list[Unsupported]
    correctness: float | None = None  # share of the reference's sentences the answer states
    answer_precision: float | None = None  # share of the answer's sentences the reference states
    answer_f1: float | None = None  # token F1 with the reference (SQuAD normalisation)
    exact_match: float | None = None
    nugget_recall: float | None = None
    vital_recall: float | None = None
    citation_precision: float | None = None
    citation_recall: float | None = None
    relevance: float | None = None  # share of the question's key terms the answer says
    well_formed: float | None = None  # 1: the output shows no defect (answers/defects.py)
    judged: float | None = None  # share of this answer's judge items the judge gave a verdict
    matched: list[Finding] = field(default_factory=list)  # facts found other than literally, where
    missing_nuggets: list[str] = field(default_factory=list)
    not_stated: list[Finding] = field(default_factory=list)  # reference sentences the answer lacks
    miscited: list[Finding] = field(default_factory=list)  # citations of passages that do not support
    uncited: list[str] = field(default_factory=list)  # supported sentences citing no supporting passage
    defects: list[str] = field(default_factory=list)  # what went wrong with the output (defects.py)
    not_judged: list[Finding] = field(default_factory=list)  # items the judge gave no verdict, which check

    def check(self, name: str) -> float | None:
        """The value of answer check `name` (answers/settings.ANSWER_CHECKS)."""
        value: float | None = getattr(self, name)
        return value

    def wrong(self) -> list[str]:
        """What the reference, nugget and citation checks found wrong, one line each."""
        lines = [f"reference not stated: {f.text!r} ({f.why})" for f in self.not_stated]
        if self.missing_nuggets:
            lines.append("missing nuggets: " + "; ".join(repr(n) for n in self.missing_nuggets))
        lines += [f"miscited: {f.text!r} {f.why}" for f in self.miscited]
        lines += [f"cites no passage that supports it: {text!r}" for text in self.uncited]
        lines += [f"output defect: {defect}" for defect in self.defects]
        lines += [f"not judged ({f.why}): {f.text!r}" for f in self.not_judged]
        return lines


@dataclass(frozen=True)
class QuestionResult:
    """One golden question: what the retriever returned, its metrics, and its answer."""

    id: str
    question: str
    tags: list[str]
    answerable: bool
    must_pass: bool
    relevant: dict[str, int]  # document id -> grade
    retrieved: list[tuple[str, float]]  # (document id, score), best first (baseline: top k)
    found: list[str]  # relevant ids within the top k, in rank order
    missing: list[str]  # relevant ids not within the top k, highest grade first
    metrics: dict[str, float] | None  # None: unanswerable, left out of retrieval metrics
    checks: dict[str, bool] | None  # per-question retrieval checks ([gate.checks])
    answer: AnswerResult | None = None
    relevant_ranks: dict[str, int | None] | None = None  # baseline form: rank of each judged id
    not_relevant: list[str] = field(default_factory=list)  # judged not relevant (grade 0)
    judged: float | None = None  # judged@k: share of the top k the golden set judged
    # The conversation before the question, as the system was asked it: (role, content) pairs,
    # the assistant's as the golden set gives them or as the system wrote them. A run's report
    # only; the baseline form leaves it out, as it leaves out answer texts.
    history: tuple[tuple[str, str], ...] = ()

    @property
    def qrels(self) -> dict[str, int]:
        """Every judgment of this question, as trec_eval's qrels (grade 0: judged not relevant)."""
        return {**dict.fromkeys(self.not_relevant, 0), **self.relevant}

    def unjudged(self, k: int, qrels: dict[str, int] | None = None) -> list[str]:
        """The ids within the top k that the golden set did not judge, in rank order: judged
        by this row's own qrels, or by `qrels` (today's, for a baseline's row)."""
        judged = self.qrels if qrels is None else qrels
        return [doc_id for doc_id, _ in self.retrieved[:k] if doc_id not in judged]

    def rank_of(self, doc_id: str) -> int | None:
        """1-based rank of `doc_id` in what was retrieved, or None."""
        if self.relevant_ranks is not None and doc_id in self.relevant_ranks:
            return self.relevant_ranks[doc_id]
        for rank, (retrieved_id, _) in enumerate(self.retrieved, start=1):
            if retrieved_id == doc_id:
                return rank
        return None

    def for_baseline(self, k: int) -> QuestionResult:
        """The baseline form of this row (see the module docstring)."""
        answer = self.answer
        if answer is not None:
            answer = replace(answer, text="")
        ranks = {doc_id: self.rank_of(doc_id) for doc_id in self.qrels}
        return replace(self, retrieved=self.retrieved[:k], answer=answer, relevant_ranks=ranks, history=())


@dataclass(frozen=True)
class Counts:
    questions: int
    evaluated: int
    left_out: int


@dataclass(frozen=True)
class SliceResult:
    """The questions carrying one tag."""

    questions: int
    evaluated: int
    metrics: dict[str, float] | None  # None: no evaluated question has the tag


@dataclass(frozen=True)
class HoldoutResult:
    """The hidden holdout split, evaluated by `gate`: its means and the dev - holdout gap."""

    file: str
    counts: Counts
    aggregate: dict[str, float]
    gap: dict[str, float]


@dataclass
class Report:
    settings: dict[str, Any]
    counts: Counts
    aggregate: dict[str, float]
    slices: dict[str, SliceResult]
    receipt: dict[str, Any]
    questions: list[QuestionResult]
    comparison: dict[str, Any] | None = None  # the gate's verdict, as GateResult.to_dict()
    holdout: HoldoutResult | None = None
    passages: dict[str, Any] | None = None  # only when the golden set names passages
    run: dict[str, Any] | None = None  # what this run asked of the system; never in a baseline
    judged: dict[str, Any] | None = None  # judged@k overall (module docstring); None: older report

    def for_baseline(self) -> Report:
        """What `baseline` commits: the gate's needs only (see the module docstring)."""
        return replace(
            self,
            questions=[row.for_baseline(self.k) for row in self.questions],
            comparison=None,
            holdout=None,
            run=None,
        )

    @property
    def k(self) -> int:
        k: int = self.settings["k"]
        return k

    @property
    def metric_names(self) -> list[str]:
        """The retrieval metrics computed, in report order."""
        names: list[str] = self.settings.get("metrics", [])
        return names

    def evaluated(self) -> list[QuestionResult]:
        """The questions with retrieval metrics (answerable ones)."""
        return [row for row in self.questions if row.metrics is not None]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form, in the file's key order."""
        return self._fields(_row_dict)

    def _fields(self, row_form: Callable[[QuestionResult], dict[str, Any]]) -> dict[str, Any]:
        """`to_dict`, each question row made by `row_form`."""
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "settings": self.settings,
            "counts": vars(self.counts).copy(),
            "aggregate": dict(self.aggregate),
            "slices": {tag: vars(piece).copy() for tag, piece in self.slices.items()},
            "receipt": self.receipt,
            "questions": [row_form(row) for row in self.questions],
        }
        if self.judged is not None:
            data["judged"] = self.judged
        if self.passages is not None:
            data["passages"] = self.passages
        if self.comparison is not None:
            data["comparison"] = self.comparison
        if self.run is not None:
            data["run"] = self.run
        if self.holdout is not None:
            data["holdout"] = {
                "file": self.holdout.file,
                "counts": vars(self.holdout.counts).copy(),
                "aggregate": dict(self.holdout.aggregate),
                "gap": dict(self.holdout.gap),
            }
        return data

    @classmethod
    def from_dict(cls, data: object, path: Path, what: str = "baseline") -> Report:
        """Check every field of a parsed report; EvalInputError names the first bad one."""
        return _Parser(path, what).report(data)


def _row_dict(row: QuestionResult) -> dict[str, Any]:
    """A question's row, JSON-ready: each retrieved pair a list, as the file reads back."""
    data = _row_fields(row)
    data["retrieved"] = [[doc_id, score] for doc_id, score in row.retrieved]
    return data


def _row_fields(row: QuestionResult) -> dict[str, Any]:
    """A question's row with its retrieved (id, score) pairs as they are held: JSON writes a
    pair as an array either way, and `dumps` is spared a new list per hit (a million in a
    large run)."""
    data: dict[str, Any] = {
        "id": row.id,
        "question": row.question,
        "tags": list(row.tags),
        "answerable": row.answerable,
        "must_pass": row.must_pass,
        "relevant": dict(row.relevant),
        "retrieved": row.retrieved,
        "found": list(row.found),
        "missing": list(row.missing),
        "metrics": row.metrics,
        "checks": row.checks,
    }
    if row.not_relevant:
        data["not_relevant"] = list(row.not_relevant)
    if row.judged is not None:
        data["judged"] = row.judged
    if row.history:
        data["history"] = [{"role": role, "content": content} for role, content in row.history]
    if row.relevant_ranks is not None:
        data["relevant_ranks"] = dict(row.relevant_ranks)
    if row.answer is not None:
        answer = row.answer
        data["answer"] = {
            "text": answer.text,
            "abstained": answer.abstained,
            "contexts": list(answer.contexts),
            "abstention": answer.abstention,
            "key_facts": answer.key_facts,
            "missing_facts": list(answer.missing_facts),
            "faithfulness": answer.faithfulness,
            "claims": answer.claims,
            "unsupported": [{"claim": u.claim, "why": u.why} for u in answer.unsupported],
            **{name: getattr(answer, name) for name in _CORRECTNESS},
            "matched": [{"text": f.text, "why": f.why} for f in answer.matched],
            "missing_nuggets": list(answer.missing_nuggets),
            "not_stated": [{"text": f.text, "why": f.why} for f in answer.not_stated],
            "miscited": [{"text": f.text, "why": f.why} for f in answer.miscited],
            "uncited": list(answer.uncited),
            "defects": list(answer.defects),
            "not_judged": [{"text": f.text, "why": f.why} for f in answer.not_judged],
        }
    return data


class _Parser:
    """Typed reading of a parsed report; every mistake is an EvalInputError naming its field."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = path, what
        self.fix = (
            "make it with `nox -s baseline` and commit it" if what == "baseline" else "run `nox -s eval`"
        )

    def fail(self, where: str, problem: str) -> EvalInputError:
        return EvalInputError(self.path, f"the {self.what} report's {where}: {problem}", self.fix)

    def as_object(self, value: object, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be an object, got {type(value).__name__}")
        return value

    def get(self, data: dict[str, Any], key: str, where: str) -> Any:
        if key not in data:
            raise self.fail(f"{where}.{key}".lstrip("."), "is missing")
        return data[key]

    def string(self, value: object, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"must be a string, got {value!r:.60}")
        return value

    def boolean(self, value: object, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"must be true or false, got {value!r:.60}")
        return value

    def integer(self, value: object, where: str, least: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise self.fail(where, f"must be a whole number >= {least}, got {value!r:.60}")
        return value

    def number(self, value: object, where: str) -> float:
        # NaN or an infinity never compares as a regression: refuse it here. A string such as
        # "0.9" or true is refused too: it is not what `eval` writes, so it was typed by hand.
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(where, f"must be a number, got {value!r:.60}")
        try:
            number = float(value)  # an integer past float's range raises OverflowError
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise self.fail(where, f"must be a finite number, got {value!r:.60}")
        return number

    def share(self, value: object, where: str) -> float:
        """A metric or a check: every one the tool computes is a share, from 0 to 1 (SLACK
        allows for the last bits of a mean)."""
        number = self.number(value, where)
        if not -SLACK <= number <= 1 + SLACK:
            raise self.fail(where, f"must be a number from 0 to 1 (a metric or a check), got {value!r:.60}")
        return number

    def shares(self, value: object, where: str) -> dict[str, float]:
        return self.mapping(value, self.share, where)

    def text_or_null(self, value: object, where: str) -> str | None:
        return self.optional(value, self.string, where)

    def number_or_null(self, value: object, where: str) -> float | None:
        return self.optional(value, self.number, where)

    def optional(self, value: object, read: Callable[[object, str], T], where: str) -> T | None:
        return None if value is None else read(value, where)

    def listed(self, value: object, read: Callable[[object, str], T], where: str) -> list[T]:
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list, got {type(value).__name__}")
        return [read(item, f"{where}[{i}]") for i, item in enumerate(value)]

    def mapping(self, value: object, read: Callable[[object, str], T], where: str) -> dict[str, T]:
        return {key: read(item, f"{where}.{key}") for key, item in self.as_object(value, where).items()}

    def counts(self, value: object, where: str) -> Counts:
        data = self.as_object(value, where)
        keys = ("questions", "evaluated", "left_out")
        return Counts(*(self.integer(self.get(data, key, where), f"{where}.{key}") for key in keys))

    def slice(self, value: object, where: str) -> SliceResult:
        data = self.as_object(value, where)
        return SliceResult(
            self.integer(self.get(data, "questions", where), f"{where}.questions"),
            self.integer(self.get(data, "evaluated", where), f"{where}.evaluated"),
            self.optional(self.get(data, "metrics", where), self.shares, f"{where}.metrics"),
        )

    def numbers(self, value: object, where: str) -> dict[str, float]:
        return self.mapping(value, self.number, where)

    def flags(self, value: object, where: str) -> dict[str, bool]:
        return self.mapping(value, self.boolean, where)

    def hit(self, value: object, where: str) -> tuple[str, float]:
        if not isinstance(value, list) or len(value) != 2:
            raise self.fail(where, f"must be [document id, score], got {value!r:.60}")
        return self.string(value[0], f"{where}[0]"), self.number(value[1], f"{where}[1]")

    def unsupported(self, value: object, where: str) -> Unsupported:
        data = self.as_object(value, where)
        return Unsupported(
            self.string(self.get(data, "claim", where), f"{where}.claim"),
            self.string(self.get(data, "why", where), f"{where}.why"),
        )

    def finding(self, value: object, where: str) -> Finding:
        data = self.as_object(value, where)
        return Finding(
            self.string(self.get(data, "text", where), f"{where}.text"),
            self.string(self.get(data, "why", where), f"{where}.why"),
        )

    def answer(self, value: object, where: str) -> AnswerResult:
        data = self.as_object(value, where)

        def at(key: str) -> Any:
            return self.get(data, key, where)

        def listed(key: str, read: Any) -> Any:  # a record written before the key existed: none
            return self.listed(data.get(key, []), read, f"{where}.{key}")

        return AnswerResult(
            text=self.string(at("text"), f"{where}.text"),
            abstained=self.boolean(at("abstained"), f"{where}.abstained"),
            contexts=self.listed(at("contexts"), self.string, f"{where}.contexts"),
            abstention=self.share(at("abstention"), f"{where}.abstention"),
            key_facts=self.optional(at("key_facts"), self.share, f"{where}.key_facts"),
            missing_facts=self.listed(at("missing_facts"), self.string, f"{where}.missing_facts"),
            faithfulness=self.optional(at("faithfulness"), self.share, f"{where}.faithfulness"),
            claims=self.integer(at("claims"), f"{where}.claims"),
            unsupported=self.listed(at("unsupported"), self.unsupported, f"{where}.unsupported"),
            **{name: self.optional(data.get(name), self.share, f"{where}.{name}") for name in _CORRECTNESS},
            matched=listed("matched", self.finding),
            missing_nuggets=listed("missing_nuggets", self.string),
            not_stated=listed("not_stated", self.finding),
            miscited=listed("miscited", self.finding),
            uncited=listed("uncited", self.string),
            defects=listed("defects", self.string),
            not_judged=listed("not_judged", self.finding),
        )

    def row(self, value: object, where: str) -> QuestionResult:
        data = self.as_object(value, where)
        qid = self.string(self.get(data, "id", where), f"{where}.id")
        where = f"question {qid!r}"

        def at(key: str) -> Any:
            return self.get(data, key, where)

        answerable = self.boolean(at("answerable"), f"{where}.answerable")
        metrics = self.optional(at("metrics"), self.shares, f"{where}.metrics")
        if answerable != (metrics is not None):  # evaluate() leaves out exactly the unanswerable
            problem = "is null, but the question is answerable" if answerable else "must be null"
            raise self.fail(f"{where}.metrics", f"{problem} (only unanswerable questions have no metrics)")
        return QuestionResult(
            id=qid,
            question=self.string(at("question"), f"{where}.question"),
            tags=self.listed(at("tags"), self.string, f"{where}.tags"),
            answerable=answerable,
            must_pass=self.boolean(at("must_pass"), f"{where}.must_pass"),
            relevant=self.mapping(at("relevant"), self.integer, f"{where}.relevant"),
            retrieved=self.listed(at("retrieved"), self.hit, f"{where}.retrieved"),
            found=self.listed(at("found"), self.string, f"{where}.found"),
            missing=self.listed(at("missing"), self.string, f"{where}.missing"),
            metrics=metrics,
            checks=self.optional(at("checks"), self.flags, f"{where}.checks"),
            answer=self.optional(data.get("answer"), self.answer, f"{where}.answer"),
            relevant_ranks=self.optional(data.get("relevant_ranks"), self.ranks, f"{where}.relevant_ranks"),
            not_relevant=self.listed(data.get("not_relevant", []), self.string, f"{where}.not_relevant"),
            judged=self.optional(data.get("judged"), self.share, f"{where}.judged"),
            history=tuple(self.listed(data.get("history", []), self.said, f"{where}.history")),
        )

    def said(self, value: object, where: str) -> tuple[str, str]:
        data = self.as_object(value, where)
        role = self.string(self.get(data, "role", where), f"{where}.role")
        if role not in ("user", "assistant"):
            raise self.fail(f"{where}.role", f'must be "user" or "assistant", got {role!r:.40}')
        return role, self.string(self.get(data, "content", where), f"{where}.content")

    def ranks(self, value: object, where: str) -> dict[str, int | None]:
        return self.mapping(value, lambda v, w: self.optional(v, self.integer, w), where)

    def holdout(self, value: object, where: str) -> HoldoutResult:
        data = self.as_object(value, where)
        return HoldoutResult(
            self.string(self.get(data, "file", where), f"{where}.file"),
            self.counts(self.get(data, "counts", where), f"{where}.counts"),
            self.shares(self.get(data, "aggregate", where), f"{where}.aggregate"),
            self.numbers(self.get(data, "gap", where), f"{where}.gap"),
        )

    def report(self, value: object) -> Report:
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            raise EvalInputError(self.path, f"not a {FORMAT} file", self.fix)
        if value.get("version") not in READS:
            raise EvalInputError(
                self.path,
                f"made by report format version {value.get('version')!r:.20}, this tool reads "
                + " and ".join(str(v) for v in READS),
                self.fix,
            )
        settings = self.settings(self.get(value, "settings", ""), "settings")
        comparison = value.get("comparison")
        questions = self.listed(self.get(value, "questions", ""), self.row, "questions")
        self.same_metrics(questions, settings)
        return Report(
            settings=settings,
            counts=self.counts(self.get(value, "counts", ""), "counts"),
            aggregate=self.shares(self.get(value, "aggregate", ""), "aggregate"),
            slices=self.mapping(self.get(value, "slices", ""), self.slice, "slices"),
            receipt=self.receipt(value.get("receipt", {}), "receipt"),
            questions=questions,
            comparison=None if comparison is None else self.as_object(comparison, "comparison"),
            holdout=self.optional(value.get("holdout"), self.holdout, "holdout"),
            passages=self.optional(value.get("passages"), self.passages, "passages"),
            run=self.optional(value.get("run"), self.as_object, "run"),
            judged=self.optional(value.get("judged"), self.judged, "judged"),
        )

    def judged(self, value: object, where: str) -> dict[str, Any]:
        """The judged@k section (module docstring): its k, mean and the unjudged counts."""
        data = self.as_object(value, where)
        return {
            "k": self.integer(self.get(data, "k", where), f"{where}.k", least=1),
            "mean": self.share(self.get(data, "mean", where), f"{where}.mean"),
            "questions": self.integer(self.get(data, "questions", where), f"{where}.questions"),
            "unjudged": self.integer(self.get(data, "unjudged", where), f"{where}.unjudged"),
        }

    def passages(self, value: object, where: str) -> dict[str, Any]:
        """The passage metrics section (module docstring), every value a share or null."""
        data = self.as_object(value, where)
        names = self.listed(self.get(data, "names", where), self.string, f"{where}.names")
        per_question = self.mapping(
            self.get(data, "questions", where),
            lambda v, w: self.optional(v, self.shares, w),
            f"{where}.questions",
        )
        return {
            "names": names,
            "evaluated": self.integer(self.get(data, "evaluated", where), f"{where}.evaluated"),
            "aggregate": self.shares(self.get(data, "aggregate", where), f"{where}.aggregate"),
            "questions": per_question,
        }

    def present(
        self, data: dict[str, Any], key: str, read: Callable[[object, str], object], where: str
    ) -> None:
        """Check `data[key]` with `read` when the key is there (older reports may lack it)."""
        if key in data:
            read(data[key], f"{where}.{key}")

    def settings(self, value: object, where: str) -> dict[str, Any]:
        """The recorded settings, kept as the JSON object they are (their layout follows
        eval.toml), with every field the engine reads checked: k, depth, metrics, the
        judge, the declared stochastic parts and the tables shown in the reports."""
        data = self.as_object(value, where)
        self.integer(self.get(data, "k", where), f"{where}.k", least=1)
        self.present(data, "depth", lambda v, w: self.integer(v, w, least=1), where)
        self.present(data, "metrics", lambda v, w: self.listed(v, self.string, w), where)
        for table in ("tokenizer", "stats", "generation"):
            self.present(data, table, self.as_object, where)
        self.present(data, "retriever", self.retriever, where)
        self.present(data, "judge", lambda v, w: self.optional(v, self.judge, w), where)
        self.present(data, "stochastic", lambda v, w: self.optional(v, self.stochastic, w), where)
        stats = data.get("stats") or {}
        self.present(stats, "min_slice_size", self.integer, f"{where}.stats")
        return data

    def retriever(self, value: object, where: str) -> None:
        data = self.as_object(value, where)
        self.present(data, "name", self.string, where)
        self.present(data, "options", self.as_object, where)

    def judge(self, value: object, where: str) -> None:
        data = self.as_object(value, where)
        for key in ("name", "model", "revision"):
            self.present(data, key, self.text_or_null, where)
        self.present(data, "threshold", self.number_or_null, where)

    def stochastic(self, value: object, where: str) -> None:
        data = self.as_object(value, where)
        self.present(data, "parts", lambda v, w: self.listed(v, self.string, w), where)
        self.present(data, "repeats", lambda v, w: self.integer(v, w, least=1), where)
        self.present(data, "noise", self.numbers, where)

    def receipt(self, value: object, where: str) -> dict[str, Any]:
        """The receipt, kept as its JSON object, with each recorded field checked (a missing
        one is "not recorded", which the gate reports with its own fix)."""
        data = self.as_object(value, where)
        self.present(data, "engine", lambda v, w: self.mapping(v, self.string, w), where)
        self.present(data, "sha256", lambda v, w: self.mapping(v, self.string, w), where)
        self.present(data, "git_commit", self.text_or_null, where)
        self.present(data, "judge", lambda v, w: self.optional(v, self.judge, w), where)
        self.present(data, "versions", lambda v, w: self.mapping(v, self.string, w), where)
        self.present(data, "seed", self.integer, where)
        self.present(data, "k", lambda v, w: self.integer(v, w, least=1), where)
        return data

    def same_metrics(self, questions: list[QuestionResult], settings: dict[str, Any]) -> None:
        """Each question once; each evaluated question has the metrics the settings list."""
        seen: set[str] = set()
        names = settings.get("metrics")
        for row in questions:
            if row.id in seen:
                raise self.fail(f"question {row.id!r}", "appears twice (each question has one row)")
            seen.add(row.id)
            if names is not None and row.metrics is not None and sorted(row.metrics) != sorted(names):
                raise self.fail(
                    f"question {row.id!r}.metrics",
                    f"holds {', '.join(sorted(row.metrics)) or 'nothing'}; settings.metrics lists "
                    f"{', '.join(sorted(names)) or 'nothing'}",
                )


# A row is a tree of dicts, lists and numbers the engine built, never a cycle: no check for
# one (a sixth of the time of 10,000 rows).
_ROW_JSON = json.JSONEncoder(ensure_ascii=False, check_circular=False)


def dumps(report: Report) -> str:
    """JSON text of a report: indented, with each question row on a single line."""
    parts = []
    for key, value in report._fields(_row_fields).items():
        if key == "questions":
            rows = ",\n".join(f"    {_ROW_JSON.encode(row)}" for row in value)
            text = f"[\n{rows}\n  ]"
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        parts.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_report(path: Path, report: Report) -> None:
    write_atomic(path, dumps(report))


def read_report(path: Path, *, what: str = "baseline") -> Report:
    """Read a report written by `write_report`; EvalInputError if missing or not one."""
    fix = "make it with `nox -s baseline` and commit it" if what == "baseline" else "run `nox -s eval`"
    # A regular file of at most REPORT_LIMIT bytes, parsed strictly (reading.py): a key given
    # twice, NaN, nesting past the recursion limit are each an error naming the file.
    raw = read_data(path, f"{what} report", limit=REPORT_LIMIT, missing_fix=fix)
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark from an editor is harmless
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise EvalInputError(path, f"the {what} report is not valid UTF-8", fix, line) from None
    data = parse_json(text, path, fix, prefix=f"the {what} report is ")
    return Report.from_dict(data, path, what)
