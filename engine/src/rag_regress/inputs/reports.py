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
(reading.py: no key twice, no NaN), and checks every field the engine uses against the types
the dataclasses below declare (pydantic, as eval.toml is checked; the sections kept as JSON
objects by the TypedDicts after them): numbers are finite numbers (never "0.9", true or
null), metrics and checks are shares from 0 to 1. What types cannot say is checked after:
an answerable question has metrics and an unanswerable one none, every evaluated question
has the metrics `settings.metrics` lists, and each question appears once. A hand-edited or
truncated baseline is an error naming the field (exit 2), never a traceback or a silently
wrong comparison. Whether its numbers agree with each other is the gate's check
(gate/integrity.py).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import (
    Annotated,
    Any,
    NamedTuple,
    Required,  # pydantic reads typing's TypedDict from Python 3.12 on
)

from pydantic import AfterValidator, Field, Strict, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError
from typing_extensions import TypedDict

from ..errors import EvalInputError
from .files import write_atomic
from .reading import REPORT_LIMIT, parse_json, read_data

FORMAT = "rag-eval-report"
VERSION = 3
# Format versions this tool reads (1: before the baseline form; 2: before the receipt named
# the engine and the judge identity its version).
READS = (1, 2, 3)
SLACK = 1e-9  # a share read back may exceed [0, 1] by this much (float rounding of a mean)
# The types of a report's fields as they are read back: nothing is coerced ("0.9" or true is
# no number: `eval` never writes one, so it was typed by hand), and NaN or an infinity, which
# never compares as a regression, is refused.
Text = Annotated[str, Strict()]
Flag = Annotated[bool, Strict()]
Count = Annotated[int, Strict(), Field(ge=0)]
Positive = Annotated[int, Strict(), Field(ge=1)]
Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]
# A metric or a check: every one the tool computes is a share from 0 to 1 (SLACK allows for
# the last bits of a mean).
Share = Annotated[float, Strict(), Field(ge=-SLACK, le=1 + SLACK, allow_inf_nan=False)]


@dataclass(frozen=True)
class Unsupported:
    """A sentence of an answer the judge found unsupported, and why."""

    claim: Text
    why: Text


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

    text: Text
    why: Text


@dataclass(frozen=True)
class AnswerResult:
    """One question's answer and its checks (null where a check does not apply:
    answers/checks.py says which apply to which questions)."""

    text: Text
    abstained: Flag
    contexts: list[Text]  # document ids of the passages the answer was written from
    abstention: Share  # 1: abstained exactly when the question is unanswerable
    key_facts: Share | None  # answerable questions only
    missing_facts: list[Text]
    faithfulness: Share | None  # answered questions only: share of supported sentences
    claims: Count  # sentences judged
    unsupported: list[Unsupported]
    correctness: Share | None = None  # share of the reference's sentences the answer states
    answer_precision: Share | None = None  # share of the answer's sentences the reference states
    answer_f1: Share | None = None  # token F1 with the reference (SQuAD normalisation)
    exact_match: Share | None = None
    nugget_recall: Share | None = None
    vital_recall: Share | None = None
    citation_precision: Share | None = None
    citation_recall: Share | None = None
    relevance: Share | None = None  # share of the question's key terms the answer says
    well_formed: Share | None = None  # 1: the output shows no defect (answers/defects.py)
    judged: Share | None = None  # share of this answer's judge items the judge gave a verdict
    matched: list[Finding] = field(default_factory=list)  # facts found other than literally, where
    missing_nuggets: list[Text] = field(default_factory=list)
    not_stated: list[Finding] = field(default_factory=list)  # reference sentences the answer lacks
    miscited: list[Finding] = field(default_factory=list)  # citations of passages that do not support
    uncited: list[Text] = field(default_factory=list)  # supported sentences citing no supporting passage
    defects: list[Text] = field(default_factory=list)  # what went wrong with the output (defects.py)
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


def _role(value: str) -> str:
    if value not in ("user", "assistant"):
        raise PydanticCustomError("role", 'must be "user" or "assistant"')
    return value


class Said(NamedTuple):
    """One turn of the conversation before a question (read from {"role", "content"})."""

    role: Annotated[Text, AfterValidator(_role)]
    content: Text


@dataclass(frozen=True)
class QuestionResult:
    """One golden question: what the retriever returned, its metrics, and its answer."""

    id: Text
    question: Text
    tags: list[Text]
    answerable: Flag
    must_pass: Flag
    relevant: dict[str, Count]  # document id -> grade
    retrieved: list[tuple[Text, Number]]  # (document id, score), best first (baseline: top k)
    found: list[Text]  # relevant ids within the top k, in rank order
    missing: list[Text]  # relevant ids not within the top k, highest grade first
    metrics: dict[str, Share] | None  # None: unanswerable, left out of retrieval metrics
    checks: dict[str, Flag] | None  # per-question retrieval checks ([gate.checks])
    answer: AnswerResult | None = None
    relevant_ranks: dict[str, Count | None] | None = None  # baseline form: rank of each judged id
    not_relevant: list[Text] = field(default_factory=list)  # judged not relevant (grade 0)
    judged: Share | None = None  # judged@k: share of the top k the golden set judged
    # The conversation before the question, as the system was asked it: (role, content) pairs,
    # the assistant's as the golden set gives them or as the system wrote them. A run's report
    # only; the baseline form leaves it out, as it leaves out answer texts.
    history: tuple[Said, ...] = ()

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
    questions: Count
    evaluated: Count
    left_out: Count


@dataclass(frozen=True)
class SliceResult:
    """The questions carrying one tag."""

    questions: Count
    evaluated: Count
    metrics: dict[str, Share] | None  # None: no evaluated question has the tag


@dataclass(frozen=True)
class HoldoutResult:
    """The hidden holdout split, evaluated by `gate`: its means and the dev - holdout gap."""

    file: Text
    counts: Counts
    aggregate: dict[str, Share]
    gap: dict[str, Number]


@dataclass
class Report:
    settings: dict[str, Any]
    counts: Counts
    aggregate: dict[str, Share]
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
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise EvalInputError(path, f"not a {FORMAT} file", _fix(what))
        if data.get("version") not in READS:
            raise EvalInputError(
                path,
                f"made by report format version {data.get('version')!r:.20}, this tool reads "
                + " and ".join(str(v) for v in READS),
                _fix(what),
            )
        return _parsed(data, path, what)


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


class _Judge(TypedDict, total=False):
    name: Text | None
    model: Text | None
    revision: Text | None
    threshold: Number | None


class _Stats(TypedDict, total=False):
    min_slice_size: Count


class _Retriever(TypedDict, total=False):
    name: Text
    options: dict[str, Any]


class _Stochastic(TypedDict, total=False):
    parts: list[Text]
    repeats: Positive
    noise: dict[str, Number]


class _Settings(TypedDict, total=False):
    """The recorded settings' fields the engine reads; the rest follows eval.toml, kept as is."""

    k: Required[Positive]
    depth: Positive
    metrics: list[Text]
    tokenizer: dict[str, Any]
    stats: _Stats
    generation: dict[str, Any]
    retriever: _Retriever
    judge: _Judge | None
    stochastic: _Stochastic | None


class _Receipt(TypedDict, total=False):
    """The receipt's recorded fields (a missing one is "not recorded", which the gate reports
    with its own fix)."""

    engine: dict[str, Text]
    sha256: dict[str, Text]
    git_commit: Text | None
    judge: _Judge | None
    versions: dict[str, Text]
    seed: Count
    k: Positive


class _Judged(TypedDict):
    k: Positive
    mean: Share
    questions: Count
    unjudged: Count


class _Passages(TypedDict):
    names: list[Text]
    evaluated: Count
    aggregate: dict[str, Share]
    questions: dict[str, dict[str, Share] | None]


class _Recorded(TypedDict):
    """The sections a Report keeps as JSON objects, checked where the engine reads them."""

    settings: _Settings
    receipt: _Receipt
    judged: _Judged | None
    passages: _Passages | None


@functools.cache
def _adapters() -> tuple[TypeAdapter[Report], TypeAdapter[_Recorded]]:
    # Built on first use: a command that reads no report never pays for the schemas.
    return TypeAdapter(Report), TypeAdapter(_Recorded)


def _parsed(data: dict[str, Any], path: Path, what: str) -> Report:
    """Every field of a parsed report checked by its declared type; EvalInputError names the
    first bad one, then what types cannot say: each question once, metrics exactly for the
    answerable ones, and the metrics `settings.metrics` lists."""
    fix = _fix(what)

    def refused(where: str, problem: str) -> EvalInputError:
        return EvalInputError(path, f"the {what} report's {where}: {problem}", fix)

    data = {"receipt": {}, "judged": None, "passages": None, **data}
    reading, recorded = _adapters()
    try:
        recorded.validate_python(data)
        report = reading.validate_python(data)
    except ValidationError as error:
        item = error.errors(include_url=False)[0]
        raise refused(_where(item["loc"], data), _problem(item)) from None
    seen: set[str] = set()
    names = report.settings.get("metrics")
    for row in report.questions:
        where = f"question {row.id!r}"
        if row.id in seen:
            raise refused(where, "appears twice (each question has one row)")
        seen.add(row.id)
        if row.answerable != (row.metrics is not None):  # evaluate() leaves out exactly the unanswerable
            problem = "is null, but the question is answerable" if row.answerable else "must be null"
            raise refused(f"{where}.metrics", f"{problem} (only unanswerable questions have no metrics)")
        if names is not None and row.metrics is not None and sorted(row.metrics) != sorted(names):
            raise refused(
                f"{where}.metrics",
                f"holds {', '.join(sorted(row.metrics)) or 'nothing'}; settings.metrics lists "
                f"{', '.join(sorted(names)) or 'nothing'}",
            )
    return report


def _where(loc: tuple[int | str, ...], data: dict[str, Any]) -> str:
    """A field's place as the errors name it: `question 'q1'.answer.faithfulness` once the
    row's id is known, else `questions[0].id`."""
    where = ""
    rest = list(loc)
    if len(rest) > 1 and rest[0] == "questions" and isinstance(rest[1], int):
        row = data["questions"][rest[1]]
        if isinstance(row, dict) and isinstance(row.get("id"), str) and rest[2:] != ["id"]:
            where, rest = f"question {row['id']!r}", rest[2:]
    for key in rest:
        where += f"[{key}]" if isinstance(key, int) else f".{key}"
    return where.lstrip(".")


def _problem(item: ErrorDetails) -> str:
    """What is wrong with one field, in the words the engine has always used."""
    kind, value, bound = item["type"], item.get("input"), item.get("ctx", {}).get("ge")
    got = f"got {value!r:.60}"
    if kind == "missing":
        return "is missing"
    if kind in ("dict_type", "dataclass_type", "list_type"):
        return f"must be {'a list' if kind == 'list_type' else 'an object'}, got {type(value).__name__}"
    if kind == "float_type" and isinstance(value, int) and not isinstance(value, bool):
        return f"must be a finite number, {got}"  # an integer past float's range
    if kind == "less_than_equal" or (kind == "greater_than_equal" and bound is not None and bound < 0):
        return f"must be a number from 0 to 1 (a metric or a check), {got}"
    if kind == "greater_than_equal":
        return f"must be a whole number >= {bound}, {got}"
    words = _WORDS.get(kind) or item["msg"].replace("Input should be", "must be")
    return f"{words}, {got}"


_WORDS = {
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "too_long": "must be [document id, score]",  # the report's only tuple: a hit
    "too_short": "must be [document id, score]",
}


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


def _fix(what: str) -> str:
    return "make it with `nox -s baseline` and commit it" if what == "baseline" else "run `nox -s eval`"


def read_report(path: Path, *, what: str = "baseline") -> Report:
    """Read a report written by `write_report`; EvalInputError if missing or not one."""
    fix = _fix(what)
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
