"""What a sweep found: each candidate's row of the table, the holdout's confirmation, and
the verdict, as command.py computes them and output.py shows them."""

from __future__ import annotations

from dataclasses import dataclass, field

from .grid import Candidate


@dataclass
class Row:
    """One candidate in the table."""

    candidate: Candidate
    questions: int  # the dev questions it was last evaluated on
    rung: int  # the last rung it reached
    mean: float
    current_mean: float  # the current configuration's mean on the same questions
    p: float | None = None  # one-sided, better than the current; None: the current itself
    p_holm: float | None = None
    p_vs_best: float | None = None  # final field only: HSD-adjusted p against the best
    final: bool = False
    same_as_current: bool = False  # the grid spelled out the current configuration

    @property
    def delta(self) -> float:
        return self.mean - self.current_mean


@dataclass
class Holdout:
    source: str  # where the holdout questions came from, in words
    questions: int
    delta: float | None = None  # winner - current on the holdout; None: no winner to confirm
    p: float | None = None
    confirmed: bool = False


@dataclass
class SweepResult:
    metric: str
    alpha: float
    dev_questions: int
    rows: list[Row]  # the table's order: the final field by mean, then the eliminated
    rungs: list[tuple[int, int, int]]  # (rung, questions, candidates)
    builds: int  # retrievers built; the rest reused an index
    holdout: Holdout
    winner: Candidate | None = None
    runner_up: Candidate | None = None
    p_runner_up: float | None = None
    beats_current: bool = False
    adopt: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """One sentence: the winner and its confirmation, or why there is none."""
        if self.winner is None:
            if self.beats_current:
                return (
                    "no winner: the best candidate beats the current configuration, but not the "
                    f"runner-up ({self.runner_up.label if self.runner_up else '-'}) significantly: "
                    "the top of the field is indistinguishable"
                )
            return (
                "no winner: no candidate is significantly better than the current configuration and "
                "the runner-up at once; the field is indistinguishable on these questions"
            )
        held = self.holdout
        if held.confirmed:
            return f"winner: {self.winner.label}, confirmed on the holdout"
        return (
            f"winner on the dev questions: {self.winner.label}, NOT confirmed on the holdout "
            "(keep the current configuration, or add questions and sweep again)"
        )
