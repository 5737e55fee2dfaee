"""What the flips of a check are (flips.py finds them, and says what its two rules mean): each
question whose check changed side of its threshold, and a check's flips with the verdict of
its rule. Records only, read by the gate's context, its rules and the views."""

from __future__ import annotations

from dataclasses import dataclass

from ..inputs.reports import QuestionResult
from .stats import format_p

STRICT, NET = "strict", "net"  # [gate] flip_rule (flips.py)


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

    @property
    def numbers(self) -> str:
        """'1.000 -> 0.000': the check's value in the baseline and now."""
        return f"{self.was:.3f} -> {self.now:.3f}"


@dataclass(frozen=True)
class CheckFlips:
    check: str
    applicable: int  # questions the check applies to in both reports
    allowed: int  # strict: newly failing questions tolerated ([gate.allowed_flips])
    failing: list[Flip]
    passing: list[Flip]
    blocking: bool  # False: a stochastic or advisory check, listed and never counted
    rule: str = STRICT  # STRICT or NET ([gate] flip_rule)
    allowed_net_loss: int = 0  # net: newly failing beyond newly passing tolerated
    p: float | None = None  # net: exact one-sided sign test of the flips (stats.flip_p)
    p_adjusted: float | None = None  # net: min-P step-down over the checks judged by the net rule
    alpha: float = 0.05  # [stats] alpha, the net rule's level
    advisory: str = ""  # why: a check resting on a judge not trusted to gate (answers/trust.py)

    @property
    def net_loss(self) -> int:
        """Newly failing minus newly passing: b - c (negative: a net gain)."""
        return len(self.failing) - len(self.passing)

    @property
    def significant(self) -> bool:
        """Net rule: the adjusted p of the flips is at most alpha."""
        return self.p_adjusted is not None and self.p_adjusted <= self.alpha

    @property
    def over(self) -> bool:
        """Whether this check's flips fail the gate, by its rule (module docstring)."""
        if not self.blocking:
            return False
        if self.rule == NET:
            return self.net_loss > self.allowed_net_loss or self.significant
        return len(self.failing) > self.allowed

    def summary(self) -> str:
        """The check's verdict in one line, with every number it rests on."""
        counts = (
            f"{self.check}: {len(self.failing)} newly failing, {len(self.passing)} newly passing "
            f"of {self.applicable}"
        )
        if self.advisory:
            return f"{counts} (advisory, listed and not counted; the judge: {self.advisory})"
        if not self.blocking:
            return f"{counts} (stochastic: listed, not counted)"
        if self.rule != NET:
            return f"{counts} ({'over' if self.over else 'within'} the {self.allowed} allowed)"
        b, c = len(self.failing), len(self.passing)
        loss = "beyond" if self.net_loss > self.allowed_net_loss else "within"
        gain = " (a net gain)" if self.net_loss < 0 else ""
        verdict = "fails" if self.over else "passes"
        review = (
            "; its newly failing questions are listed for review" if self.failing and not self.over else ""
        )
        significance = "significant" if self.significant else "not significant"
        return (
            f"{counts}; net rule: net loss b - c = {b} - {c} = {self.net_loss}{gain}, {loss} the "
            f"{self.allowed_net_loss} allowed; exact one-sided sign test p={format_p(self.p)}, "
            f"adjusted p={format_p(self.p_adjusted)}, {significance} at alpha {self.alpha:g}: "
            f"{verdict}{review}"
        )
