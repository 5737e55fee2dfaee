"""Flips: questions whose per-question check ([gate.checks]) changed between the baseline and
now, both ways.

A check passes when the question's value is >= its threshold: a retrieval metric (hit@k,
recall@k) or an answer check (abstention, key_facts, faithfulness). Newly failing questions
fail the gate beyond the check's allowance ([gate.allowed_flips], default 0); newly passing
ones are listed so a reviewer sees what a change traded. Questions the check does not apply
to (unanswerable ones for retrieval metrics, abstentions for faithfulness), in one report
only, or without a value in both are not flips.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..answers.settings import ANSWER_CHECKS
from ..inputs.reports import QuestionResult, Report


@dataclass(frozen=True)
class Flip:
    check: str
    row: QuestionResult  # the question now
    before: QuestionResult  # the question in the baseline
    was: float
    now: float
    threshold: float

    @property
    def failing(self) -> bool:
        """Newly failing (True) or newly passing (False)."""
        return self.now < self.threshold

    @property
    def reason(self) -> str:
        return f"{self.check} {self.was:.3f} -> {self.now:.3f} (passes at >= {self.threshold:g})"


def check_value(row: QuestionResult, check: str) -> float | None:
    """The row's value for `check`; None where the check does not apply."""
    if check in ANSWER_CHECKS:
        return row.answer.check(check) if row.answer is not None else None
    return None if row.metrics is None else row.metrics.get(check)


@dataclass(frozen=True)
class CheckFlips:
    check: str
    applicable: int  # questions the check applies to in both reports
    allowed: int  # newly failing questions tolerated ([gate.allowed_flips])
    failing: list[Flip]
    passing: list[Flip]
    blocking: bool  # False: a stochastic check, listed and left to its non-inferiority test

    @property
    def over(self) -> bool:
        """More newly failing questions than allowed: the gate fails."""
        return self.blocking and len(self.failing) > self.allowed

    def summary(self) -> str:
        if not self.blocking:
            within = "stochastic: listed, not counted"
        else:
            within = f"{'over' if self.over else 'within'} the {self.allowed} allowed"
        return (
            f"{self.check}: {len(self.failing)} newly failing, {len(self.passing)} newly passing "
            f"of {self.applicable} ({within})"
        )


def find_flips(
    report: Report,
    baseline: Report,
    checks: dict[str, float],
    allowed: dict[str, int | float],
    stochastic: set[str],
) -> list[CheckFlips]:
    """Every check's flips both ways. `allowed` maps a check to a count (int) or a share of its
    applicable questions (float, rounded down); `stochastic` checks never block."""
    old = {row.id: row for row in baseline.questions}
    found = []
    for check, threshold in checks.items():
        failing, passing, applicable = [], [], 0
        for row in report.questions:
            before = old.get(row.id)
            was = check_value(before, check) if before is not None else None
            now = check_value(row, check)
            if before is None or was is None or now is None:
                continue
            applicable += 1
            if was >= threshold > now:
                failing.append(Flip(check, row, before, was, now, threshold))
            elif now >= threshold > was:
                passing.append(Flip(check, row, before, was, now, threshold))
        limit = allowed.get(check, 0)
        count = limit if isinstance(limit, int) else int(limit * applicable + 1e-9)
        found.append(CheckFlips(check, applicable, count, failing, passing, check not in stochastic))
    return found
