"""Compare a fresh report with the committed baseline and decide whether quality held.

The gate fails (exit 3) when
  (a) floor:         an aggregate metric is below its absolute floor ([gate.floors]), or a
                     tag's mean is below its slice floor ([gate.slices]);
  (b) regression:    a gated mean, overall or for a tag, dropped more than `tolerance` below
                     the baseline AND the drop is significant: paired sign-flip test on the
                     per-question deltas, Holm-corrected across metrics and slices, p <= alpha
                     (see significance.py). A drop that is not significant is a note;
  (c) must-pass:     a must-pass question retrieves no relevant document in the top k,
                     whatever the baseline says.
It lists, without failing on them alone, newly failing questions: a question that fails a
per-question check ([gate.checks]: passes when its value >= the threshold) it passed in the
baseline. One flipped question is noise until it is part of a significant drop.
It refuses to compare (exit 2) when the baseline lacks a metric the gate needs.
Answer checks (abstention, key_facts, faithfulness) take part by name: floors, and
regressions tested the same way over the questions each check applies to; newly failing
answers are listed like newly failing questions (answer_rules.py). It also refuses (exit 2)
a baseline judged by a different judge, model, revision or threshold.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EvalInputError
from ..inputs.reports import QuestionResult, Report
from ..settings.config import GateSettings, StatsSettings
from .acceptance import must_pass_missed, not_lower
from .answer_rules import answer_message, answer_tests, newly_failing_answers, require_same_judge
from .significance import OVERALL, PairedComparison, PairedTest, compare_paired
from .stats import format_p

# Floating-point slack for the tolerance: a drop must exceed it by more than float noise.
EPSILON = 1e-9


@dataclass(frozen=True)
class Failure:
    kind: str  # "floor", "regression", "newly failing", "must-pass" or both of the last two
    subject: str  # a metric name, or a question id
    message: str
    details: tuple[str, ...] = ()
    blocking: bool = True  # False: listed for review, does not fail the gate on its own
    question: str = ""  # per-question failures: the question's text
    reasons: tuple[str, ...] = ()  # per-question failures: each check that failed


def question_failure(
    kind: str, row: QuestionResult, reasons: list[str], details: tuple[str, ...], blocking: bool
) -> Failure:
    """A failure about one question: its id, text and every check that failed."""
    message = f'{row.id} "{row.question}": ' + "; ".join(reasons)
    return Failure(kind, row.id, message, details, blocking, row.question, tuple(reasons))


@dataclass
class GateResult:
    summary: list[tuple[str, float | None, float, float | None]]  # metric, baseline, now, floor
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    comparison: PairedComparison | None = None  # delta, CI and p per metric and slice
    answer_tests: list[PairedTest] = field(default_factory=list)  # each gated answer check, overall

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def problems(self) -> list[Failure]:
        """The failures that fail the gate."""
        return [failure for failure in self.failures if failure.blocking]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready verdict, stored under "comparison" in the report the gate writes."""
        return {
            "passed": self.passed,
            **(self.comparison.to_dict() if self.comparison else {}),
            "answer_tests": [asdict(test) for test in self.answer_tests],
            "failures": [asdict(failure) for failure in self.failures],
            "notes": list(self.notes),
        }


def _why(row: QuestionResult, before: QuestionResult | None, k: int) -> tuple[str, ...]:
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


def compare(
    report: Report,
    baseline: Report,
    gate: GateSettings,
    baseline_path: Path,
    stats: StatsSettings | None = None,
) -> GateResult:
    """Apply the gate's rules to `report` against `baseline` (`stats`: default [stats])."""
    require_same_judge(report, baseline, baseline_path)
    needed = [str(m) for m in gate.metrics if not isinstance(m, str)]  # retrieval: paired per question
    answer_metrics = [m for m in gate.metrics if isinstance(m, str)]  # answer checks: answer_gate.py
    missing = [name for name in [*needed, *answer_metrics] if name not in baseline.aggregate]
    if missing:
        raise EvalInputError(
            baseline_path,
            f"the baseline has no value for {', '.join(missing)} (it was made with other settings)",
            "remake it with `nox -s baseline` and commit it, so the comparison is like for like",
        )
    now, before = report.aggregate, baseline.aggregate
    floors = {str(m): value for m, value in gate.floors.items()}
    shown = list(dict.fromkeys([*needed, *answer_metrics, *floors]))
    result = GateResult(summary=[(name, before.get(name), now[name], floors.get(name)) for name in shown])

    for name, floor in floors.items():
        if not not_lower(floor, now[name]):
            result.failures.append(
                Failure("floor", name, f"{name} = {now[name]:.3f} is below its floor {floor:.3f}")
            )
    for tag, tag_floors in gate.slice_floors.items():
        piece = report.slices.get(tag)
        for metric, floor in tag_floors.items():
            value = (piece.metrics or {}).get(str(metric)) if piece is not None else None
            if value is None:
                result.notes.append(f"slice floor for tag {tag!r}: no evaluated question has that tag")
            elif not not_lower(floor, value):
                result.failures.append(
                    Failure(
                        "floor",
                        f"{metric} [{tag}]",
                        f"{metric} = {value:.3f} on tag {tag!r} "
                        f"({piece.evaluated if piece else 0} questions) is below its slice floor {floor:.3f}",
                    )
                )

    old_rows = {row.id: row for row in baseline.questions}
    for stored in old_rows.values():
        if stored.metrics is not None and any(name not in stored.metrics for name in needed):
            raise EvalInputError(
                baseline_path,
                f"question {stored.id!r} lacks a gated metric in the baseline",
                "remake it with `nox -s baseline` and commit it",
            )
    result.comparison = compare_paired(report, baseline, needed, gate.tolerance, stats or StatsSettings())
    for test in result.comparison.tests:
        where = "" if test.scope == OVERALL else f" on tag {test.scope!r}"
        numbers = (
            f"{test.metric}{where} dropped {test.baseline:.3f} -> {test.now:.3f} "
            f"({test.delta:+.3f}, CI [{test.ci_low:+.3f}, {test.ci_high:+.3f}]; n={test.n}; "
            f"p={format_p(test.p)}, Holm p={format_p(test.p_holm)}; "
            f"tolerance {gate.tolerance:.3f}, alpha {result.comparison.alpha:g})"
        )
        subject = test.metric if test.scope == OVERALL else f"{test.metric} [{test.scope}]"
        if test.regression:
            result.failures.append(Failure("regression", subject, numbers))
        elif test.delta < 0 and -test.delta > gate.tolerance + EPSILON and test.scope == OVERALL:
            result.notes.append(f"not significant, so not a regression: {numbers}")
    k = report.k
    # The same must-pass rule as `compare`: no relevant document in the top k.
    found = {r.id: r.found for r in report.questions}
    missed = set(must_pass_missed([r.id for r in report.questions if r.must_pass], found))
    for row in report.questions:
        if row.metrics is None:
            continue
        old = old_rows.get(row.id)
        kinds, reasons = [], []
        if row.id in missed and row.metrics is not None:
            kinds.append("must-pass")
            reasons.append(f"must-pass question found no relevant document in the top {k}")
        if old is not None and old.metrics is not None:
            broken = []
            for metric, threshold in gate.checks.items():
                name = str(metric)
                if name not in old.metrics:
                    raise EvalInputError(
                        baseline_path,
                        f"question {row.id!r} has no {name} in the baseline",
                        "remake it with `nox -s baseline` and commit it",
                    )
                was, value = old.metrics[name], row.metrics[name]
                if was >= threshold and value < threshold:
                    broken.append(f"{name} {was:.3f} -> {value:.3f} (passes at >= {threshold:g})")
            if broken:
                kinds.append("newly failing")
                reasons += broken
        if reasons:
            blocking = "must-pass" in kinds
            why = _why(row, old, k)
            result.failures.append(question_failure(", ".join(kinds), row, reasons, why, blocking))

    stats = stats or StatsSettings()
    result.answer_tests = answer_tests(report, baseline, answer_metrics, gate.tolerance, stats)
    for test in result.answer_tests:
        if test.delta < 0 and test.beyond_tolerance:
            numbers = answer_message(test, gate.tolerance, (stats or StatsSettings()).alpha)
            if test.regression:
                result.failures.append(Failure("regression", test.metric, numbers))
            else:
                result.notes.append(f"not significant, so not a regression: {numbers}")
    for row, broken, details in newly_failing_answers(report, baseline, gate.answer_checks):
        result.failures.append(question_failure("newly failing answer", row, broken, details, blocking=False))

    added = [row.id for row in report.questions if row.id not in old_rows]
    removed = sorted(set(old_rows) - {row.id for row in report.questions})
    if added:
        result.notes.append(
            f"{len(added)} question(s) not in the baseline (not checked per question): {', '.join(added)}"
        )
    if removed:
        result.notes.append(
            f"{len(removed)} baseline question(s) no longer in the golden set: {', '.join(removed)}"
        )
    return result
