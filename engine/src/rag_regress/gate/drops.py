"""The questions behind a failing aggregate or slice: which questions moved the mean.

A floor missed or a drop beyond the tolerance is a statement about a mean; a reader fixes
questions. For each such failure the gate lists the questions whose value of that metric
dropped the most against the baseline (largest drop first, ties in report order), over the
same questions the mean is taken on: every question the metric applies to in both reports
overall, the evaluated questions carrying the tag for a slice. Questions that did not drop
are never listed. A floor missed although no question dropped (the baseline was as low, or
no question is in the baseline) lists the questions now below the floor instead, lowest
first; when there is none either, `note` says why. The renderings cut the list to
[display] max_listed; the JSON report keeps it whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..inputs.reports import QuestionResult, Report
from .significance import OVERALL, question_pairs, question_value

# Per-question changes smaller than this are float noise, not a drop.
_NOISE = 1e-12


@dataclass(frozen=True)
class QuestionMove:
    """One question's value of a metric in the baseline (None: not in it) and now."""

    id: str
    question: str
    baseline: float | None
    now: float

    @property
    def delta(self) -> float | None:
        return None if self.baseline is None else self.now - self.baseline

    @property
    def numbers(self) -> str:
        """'1.000 -> 0.000 (-1.000)', or '0.000 now (not in the baseline)'."""
        if self.baseline is None:
            return f"{self.now:.3f} now (not in the baseline)"
        return f"{self.baseline:.3f} -> {self.now:.3f} ({self.now - self.baseline:+.3f})"


@dataclass(frozen=True)
class QuestionMoves:
    """The questions behind one failing mean: `moves` in the order to list them, and `note`
    saying what they are (or why there are none)."""

    metric: str
    scope: str  # OVERALL or a tag
    moves: tuple[QuestionMove, ...]
    note: str


def _where(metric: str, scope: str) -> str:
    return metric if scope == OVERALL else f"{metric} on tag {scope!r}"


def question_moves(
    report: Report, baseline: Report, metric: str, scope: str = OVERALL, floor: float | None = None
) -> QuestionMoves:
    """The questions behind a failing `metric` over `scope` (OVERALL or a tag); `floor`, for a
    floor missed, lets it fall back to the questions below it when none dropped."""
    tag = None if scope == OVERALL else scope
    pairs = question_pairs(report, baseline, tag)
    compared, dropped = 0, []
    for order, (old, new) in enumerate(pairs):
        was, now = question_value(old, metric), question_value(new, metric)
        if was is None or now is None:
            continue
        compared += 1
        if now < was - _NOISE:
            dropped.append((now - was, order, QuestionMove(new.id, new.question, was, now)))
    where = _where(metric, scope)
    if dropped:
        dropped.sort(key=lambda item: (item[0], item[1]))
        note = (
            f"largest per-question drops of {where} against the baseline "
            f"({len(dropped)} of {compared} questions dropped)"
        )
        return QuestionMoves(metric, scope, tuple(move for _, _, move in dropped), note)
    nothing = (
        "no question is in both the baseline and this run"
        if compared == 0
        else f"none of the {compared} questions in both reports dropped"
    )
    if floor is None:
        return QuestionMoves(metric, scope, (), f"no question listed for {where}: {nothing}")
    old_rows = {row.id: row for row in baseline.questions}
    rows: list[QuestionResult] = [  # the questions the mean is over, as significance.py pairs them
        row for row in report.questions if tag is None or (tag in row.tags and row.metrics is not None)
    ]
    below, valued = [], 0
    for order, row in enumerate(rows):
        now = question_value(row, metric)
        valued += now is not None
        if now is None or now >= floor:
            continue
        before = old_rows.get(row.id)
        was = question_value(before, metric) if before is not None else None
        below.append((now, order, QuestionMove(row.id, row.question, was, now)))
    if not below:
        return QuestionMoves(
            metric, scope, (), f"no question listed for {where}: {nothing}, and none is below the floor"
        )
    below.sort(key=lambda item: (item[0], item[1]))
    note = (
        f"{nothing}; the lowest-scoring questions of {where} now "
        f"({len(below)} of {valued} below the floor {floor:.3f})"
    )
    return QuestionMoves(metric, scope, tuple(move for _, _, move in below), note)
