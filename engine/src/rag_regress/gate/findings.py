"""What a gate rule returns, and the protocol every rule follows.

A rule (floors.py, slice_floors.py, regression.py, must_pass.py, flips.py, pooling.py ...) is
one class with a `name` and `findings(context)`: it reads the measured comparison
(context.py) and returns its failures and notes. `compare` (rules.py) runs the rules in the
order rules.RULES lists them; their failures and notes, in that order, are the verdict.

A failure carries what the renderings need to place it (render/view.py), so none of them reads
its kind: its `scope` (an aggregate or slice mean, listed under its metric with the questions
behind it; or one question, listed once per question) and its `labels` (the kinds it joins:
"must-pass" and "newly failing" of one question are one failure, `kind` "must-pass, newly
failing").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from ..inputs.reports import QuestionResult
from .drops import QuestionMove

if TYPE_CHECKING:
    from .context import GateContext


# the groups per-question failures merge within (merge_questions), in the order listed
RETRIEVAL, ANSWER = "retrieval", "answer"


class Scope(Enum):
    """What a failure is about, which decides where the renderings list it."""

    AGGREGATE = "aggregate"  # a mean, overall or of a tag (floors, regressions): by metric
    QUESTION = "question"  # one question (must-pass, newly failing): once per question


@dataclass(frozen=True)
class Failure:
    kind: str  # "floor", "regression", "newly failing", "must-pass" or both of the last two
    subject: str  # a metric name, or a question id
    message: str
    details: tuple[str, ...] = ()
    blocking: bool = True  # False: listed for review, does not fail the gate on its own
    question: str = ""  # per-question failures: the question's text
    reasons: tuple[str, ...] = ()  # per-question failures: each check that failed
    # floors and regressions: the questions behind the mean, in the order to list them
    # (largest drop first; drops.py), and what they are or why there are none
    moves: tuple[QuestionMove, ...] = ()
    moves_note: str = ""
    # a check resting on a judge not trusted to gate (answers/trust.py): why; never blocking
    advisory: str = ""
    # Where the renderings list it, and the kinds `kind` joins (default: `kind` alone). Not in
    # the JSON report: `kind` says both.
    scope: Scope = Scope.AGGREGATE
    labels: tuple[str, ...] = ()
    # per-question failures: the group it is merged within (merge_questions)
    group: str = ""

    def __post_init__(self) -> None:
        if not self.labels:
            object.__setattr__(self, "labels", (self.kind,))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, as the report stores it under comparison.failures."""
        data = asdict(self)
        for internal in ("scope", "labels", "group"):
            del data[internal]
        return data


@dataclass
class Findings:
    """What one rule found: failures (blocking or listed for review) and notes, in order."""

    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Rule(Protocol):
    """One gate rule: registered once, in rules.RULES."""

    name: str

    def findings(self, context: GateContext) -> Findings: ...


def question_failure(
    label: str,
    row: QuestionResult,
    reasons: list[str],
    details: tuple[str, ...],
    blocking: bool,
    group: str,
) -> Failure:
    """A failure about one question: its id, text and every check that failed. Failures of
    one question in one `group` are merged into one (merge_questions)."""
    message = f'{row.id} "{row.question}": ' + "; ".join(reasons)
    return Failure(
        label,
        row.id,
        message,
        details,
        blocking,
        row.question,
        tuple(reasons),
        scope=Scope.QUESTION,
        group=group,
    )


def merge_questions(failures: Iterable[Failure], order: list[str], groups: list[str]) -> list[Failure]:
    """The failures with those about one question in one group merged into one: its labels,
    reasons and blocking joined in the order found (the first's details: they describe the
    question, not the label). The per-question ones follow the others, by question (`order`:
    the ids in report order) then by group (`groups`)."""
    kept: list[Failure] = []
    merged: dict[tuple[str, str], Failure] = {}
    for failure in failures:
        if failure.scope is not Scope.QUESTION:
            kept.append(failure)
            continue
        key = (failure.subject, failure.group)
        first = merged.get(key)
        if first is None:
            merged[key] = failure
            continue
        labels = (*first.labels, *(label for label in failure.labels if label not in first.labels))
        reasons = (*first.reasons, *failure.reasons)
        merged[key] = replace(
            first,
            kind=", ".join(labels),
            labels=labels,
            message=f'{first.subject} "{first.question}": ' + "; ".join(reasons),
            reasons=reasons,
            blocking=first.blocking or failure.blocking,
        )
    where = {qid: i for i, qid in enumerate(order)}
    rank = {group: i for i, group in enumerate(groups)}
    ordered = sorted(merged.values(), key=lambda f: (where.get(f.subject, len(where)), rank.get(f.group, 0)))
    return kept + ordered


def question_where(row: QuestionResult, before: QuestionResult | None, k: int) -> tuple[str, ...]:
    """Where each relevant document ranks now (and in the baseline), and what came back."""

    def where(rank: int | None) -> str:
        return "not retrieved" if rank is None else f"rank {rank}"

    lines = []
    for doc_id, grade in sorted(row.relevant.items(), key=lambda item: (-item[1], item[0])):
        now = where(row.rank_of(doc_id))
        was = f"{where(before.rank_of(doc_id))} -> " if before is not None else ""
        lines.append(f"relevant {doc_id} (grade {grade}): {was}{now}")
    top = [doc_id for doc_id, _ in row.retrieved[:k]]
    lines.append(f"top {k} now: {' '.join(top) or '(nothing)'}")
    return tuple(lines)
