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

Two forms, one format (version 2; version 1 files are still read):
  run       what `eval` and `gate` write under build/: every retrieved id and score, every
            answer's text.
  baseline  what `baseline` writes to evals/baseline.json and a team commits: only what the
            gate needs. Per question: the metrics and check results, the top k retrieved
            (ids and scores), the rank of every relevant document (`relevant_ranks`, so the
            gate can say where one was before), and the answer's checks and context ids,
            without its text. At 300 questions and depth 1,000 it is a few hundred KB
            instead of megabytes, and its diff shows what changed.

It is written with one question per line, so that a changed baseline reads well in a
pull-request diff, and atomically, so that a crash never leaves half a file behind. Reading
checks every field's type: a hand-edited or truncated baseline is an error naming the field
(exit 2), never a traceback or a silently wrong comparison.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from ..errors import EvalInputError
from .files import write_atomic

FORMAT = "rag-eval-report"
VERSION = 2
READS = (1, 2)  # format versions this tool reads (1: before the baseline form existed)
T = TypeVar("T")


@dataclass(frozen=True)
class Unsupported:
    """A sentence of an answer the judge found unsupported, and why."""

    claim: str
    why: str


@dataclass(frozen=True)
class AnswerResult:
    """One question's answer and its three checks (null where a check does not apply)."""

    text: str
    abstained: bool
    contexts: list[str]  # document ids of the passages the answer was written from
    abstention: float  # 1: abstained exactly when the question is unanswerable
    key_facts: float | None  # answerable questions only
    missing_facts: list[str]
    faithfulness: float | None  # answered questions only: share of supported sentences
    claims: int  # sentences judged
    unsupported: list[Unsupported]

    def check(self, name: str) -> float | None:
        """The value of answer check `name` (abstention, key_facts, faithfulness)."""
        value: float | None = getattr(self, name)
        return value


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
    relevant_ranks: dict[str, int | None] | None = None  # baseline form: rank of each relevant id

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
        ranks = {doc_id: self.rank_of(doc_id) for doc_id in self.relevant}
        return replace(self, retrieved=self.retrieved[:k], answer=answer, relevant_ranks=ranks)


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

    def for_baseline(self) -> Report:
        """What `baseline` commits: the gate's needs only (see the module docstring)."""
        return replace(
            self,
            questions=[row.for_baseline(self.k) for row in self.questions],
            comparison=None,
            holdout=None,
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
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "settings": self.settings,
            "counts": vars(self.counts).copy(),
            "aggregate": dict(self.aggregate),
            "slices": {tag: vars(piece).copy() for tag, piece in self.slices.items()},
            "receipt": self.receipt,
            "questions": [_row_dict(row) for row in self.questions],
        }
        if self.comparison is not None:
            data["comparison"] = self.comparison
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
    data: dict[str, Any] = {
        "id": row.id,
        "question": row.question,
        "tags": list(row.tags),
        "answerable": row.answerable,
        "must_pass": row.must_pass,
        "relevant": dict(row.relevant),
        "retrieved": [[doc_id, score] for doc_id, score in row.retrieved],
        "found": list(row.found),
        "missing": list(row.missing),
        "metrics": row.metrics,
        "checks": row.checks,
    }
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

    def integer(self, value: object, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(where, f"must be a whole number >= 0, got {value!r:.60}")
        return value

    def number(self, value: object, where: str) -> float:
        # NaN or an infinity never compares as a regression: refuse it here.
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(where, f"must be a finite number, got {value!r:.60}")
        return float(value)

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
            self.optional(self.get(data, "metrics", where), self.numbers, f"{where}.metrics"),
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

    def answer(self, value: object, where: str) -> AnswerResult:
        data = self.as_object(value, where)

        def at(key: str) -> Any:
            return self.get(data, key, where)

        return AnswerResult(
            text=self.string(at("text"), f"{where}.text"),
            abstained=self.boolean(at("abstained"), f"{where}.abstained"),
            contexts=self.listed(at("contexts"), self.string, f"{where}.contexts"),
            abstention=self.number(at("abstention"), f"{where}.abstention"),
            key_facts=self.optional(at("key_facts"), self.number, f"{where}.key_facts"),
            missing_facts=self.listed(at("missing_facts"), self.string, f"{where}.missing_facts"),
            faithfulness=self.optional(at("faithfulness"), self.number, f"{where}.faithfulness"),
            claims=self.integer(at("claims"), f"{where}.claims"),
            unsupported=self.listed(at("unsupported"), self.unsupported, f"{where}.unsupported"),
        )

    def row(self, value: object, where: str) -> QuestionResult:
        data = self.as_object(value, where)
        qid = self.string(self.get(data, "id", where), f"{where}.id")
        where = f"question {qid!r}"

        def at(key: str) -> Any:
            return self.get(data, key, where)

        return QuestionResult(
            id=qid,
            question=self.string(at("question"), f"{where}.question"),
            tags=self.listed(at("tags"), self.string, f"{where}.tags"),
            answerable=self.boolean(at("answerable"), f"{where}.answerable"),
            must_pass=self.boolean(at("must_pass"), f"{where}.must_pass"),
            relevant=self.mapping(at("relevant"), self.integer, f"{where}.relevant"),
            retrieved=self.listed(at("retrieved"), self.hit, f"{where}.retrieved"),
            found=self.listed(at("found"), self.string, f"{where}.found"),
            missing=self.listed(at("missing"), self.string, f"{where}.missing"),
            metrics=self.optional(at("metrics"), self.numbers, f"{where}.metrics"),
            checks=self.optional(at("checks"), self.flags, f"{where}.checks"),
            answer=self.optional(data.get("answer"), self.answer, f"{where}.answer"),
            relevant_ranks=self.optional(data.get("relevant_ranks"), self.ranks, f"{where}.relevant_ranks"),
        )

    def ranks(self, value: object, where: str) -> dict[str, int | None]:
        return self.mapping(value, lambda v, w: self.optional(v, self.integer, w), where)

    def holdout(self, value: object, where: str) -> HoldoutResult:
        data = self.as_object(value, where)
        return HoldoutResult(
            self.string(self.get(data, "file", where), f"{where}.file"),
            self.counts(self.get(data, "counts", where), f"{where}.counts"),
            self.numbers(self.get(data, "aggregate", where), f"{where}.aggregate"),
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
        settings = self.as_object(self.get(value, "settings", ""), "settings")
        self.integer(self.get(settings, "k", "settings"), "settings.k")
        self.listed(settings.get("metrics", []), self.string, "settings.metrics")
        comparison = value.get("comparison")
        return Report(
            settings=settings,
            counts=self.counts(self.get(value, "counts", ""), "counts"),
            aggregate=self.numbers(self.get(value, "aggregate", ""), "aggregate"),
            slices=self.mapping(self.get(value, "slices", ""), self.slice, "slices"),
            receipt=self.as_object(value.get("receipt", {}), "receipt"),
            questions=self.listed(self.get(value, "questions", ""), self.row, "questions"),
            comparison=None if comparison is None else self.as_object(comparison, "comparison"),
            holdout=self.optional(value.get("holdout"), self.holdout, "holdout"),
        )


def dumps(report: Report) -> str:
    """JSON text of a report: indented, with each question row on a single line."""
    parts = []
    for key, value in report.to_dict().items():
        if key == "questions":
            rows = ",\n".join(f"    {json.dumps(row, ensure_ascii=False)}" for row in value)
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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalInputError(path, f"the {what} report does not exist", fix) from None
    except (OSError, UnicodeDecodeError) as error:
        raise EvalInputError(path, f"cannot read the {what} report: {error}", fix) from None
    except json.JSONDecodeError as error:
        raise EvalInputError(
            path, f"the {what} report is not valid JSON: {error.msg}", fix, error.lineno
        ) from None
    except RecursionError:
        raise EvalInputError(path, f"the {what} report nests too deeply to be a report", fix) from None
    return Report.from_dict(data, path, what)
