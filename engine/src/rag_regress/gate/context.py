"""What the gate's rules read: the two reports, the settings, and what was measured once for
all of them (the paired tests, the flips, the questions with more unjudged documents).

Built by `measure` (rules.py) after the refusals passed, so every metric the gate needs is in
the baseline. The rules only decide: each reads the context and returns its findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..inputs.reports import QuestionResult, Report
from ..settings.config import GateSettings, StatsSettings
from .drops import QuestionMoves
from .flipped import CheckFlips
from .significance import OVERALL, PairedComparison, PairedTest


@dataclass
class GateContext:
    report: Report
    baseline: Report
    gate: GateSettings
    stats: StatsSettings
    baseline_path: Path
    # Questions too flaky at the baseline to compare one by one ([gate] max_variation): left
    # out of the per-question checks and the paired tests (the paired_* reports); floors
    # still read every question.
    flaky: dict[str, str]
    paired_report: Report
    paired_baseline: Report
    comparison: PairedComparison  # delta, CI and p per gated metric and slice
    moving: set[str]  # metrics and checks of parts declared stochastic
    flips: list[CheckFlips]  # per check, newly failing and passing
    pooled: list[tuple[str, int, int]]  # questions with clearly more unjudged documents
    advisory: dict[str, str] = field(default_factory=dict)  # check -> why its judge is not trusted

    @property
    def floors(self) -> dict[str, float]:
        return {str(m): value for m, value in self.gate.floors.items()}

    @property
    def old_rows(self) -> dict[str, QuestionResult]:
        return {row.id: row for row in self.baseline.questions}

    @property
    def calibration(self) -> Any:
        return self.report.receipt.get("calibration")

    def held(self, name: str) -> dict[str, Any]:
        """A failure of `name`'s: advisory (never blocking) when it rests on an untrusted judge."""
        why = self.advisory.get(name.split(" [", 1)[0], "")
        return {"blocking": not why, "advisory": why}

    @staticmethod
    def behind(moves: QuestionMoves) -> dict[str, Any]:
        """A failing mean's fields for the questions behind it."""
        return {"moves": moves.moves, "moves_note": moves.note}

    def figures(self, test: PairedTest) -> tuple[float | None, float | None]:
        """The figures the tables print for the test's metric: aggregates, or the slice's."""
        if test.scope == OVERALL:
            return self.baseline.aggregate.get(test.metric), self.report.aggregate.get(test.metric)
        was, is_ = self.baseline.slices.get(test.scope), self.report.slices.get(test.scope)
        return (
            (was.metrics or {}).get(test.metric) if was is not None else None,
            (is_.metrics or {}).get(test.metric) if is_ is not None else None,
        )
