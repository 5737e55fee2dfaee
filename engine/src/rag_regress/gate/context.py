"""What the gate's rules read: the two reports, the settings, and what was measured once for
all of them (the paired tests, the flips, the questions with more unjudged documents).

Built by `compare` (rules.py) after the refusals passed, so every metric the gate needs is in
the baseline. The rules only decide: each reads the context and returns its findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..answers.trust import advisory_checks
from ..inputs.reports import QuestionResult, Report
from ..settings.config import GateSettings, StatsSettings
from .drops import QuestionMoves
from .flips import CheckFlips, find_flips
from .pooling import more_unjudged
from .significance import OVERALL, PairedComparison, PairedTest, compare_paired, stochastic_metrics
from .variation import flaky_at_baseline


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


def measure(
    report: Report, baseline: Report, gate: GateSettings, baseline_path: Path, stats: StatsSettings
) -> GateContext:
    """The context of the rules: the questions compared, the paired tests and the flips."""
    flaky = flaky_at_baseline(baseline.settings.get("stochastic"), gate.max_variation)
    paired_report, paired_baseline = report, baseline
    if flaky:
        paired_report = replace(report, questions=[r for r in report.questions if r.id not in flaky])
        paired_baseline = replace(baseline, questions=[r for r in baseline.questions if r.id not in flaky])
    gated = [*gate.retrieval_metrics, *gate.answer_metrics]
    checks = gate.thresholds
    moving = stochastic_metrics(list(gate.stochastic), list(dict.fromkeys([*gated, *checks])))
    noise = (baseline.settings.get("stochastic") or {}).get("noise")
    comparison = compare_paired(
        paired_report,
        paired_baseline,
        gated,
        gate.tolerance,
        stats,
        moving,
        noise if isinstance(noise, dict) else None,
        gate.power,
    )
    advisory = advisory_checks(report.receipt.get("calibration"))  # checks the judge has not earned
    flips = find_flips(
        paired_report,
        paired_baseline,
        checks,
        {str(k): v for k, v in gate.allowed_flips.items()},
        moving,
        gate.flip_rule,
        gate.allowed_net_loss,
        stats,
        advisory,
    )
    return GateContext(
        report,
        baseline,
        gate,
        stats,
        baseline_path,
        flaky,
        paired_report,
        paired_baseline,
        comparison,
        moving,
        flips,
        more_unjudged(report, baseline),
        advisory,
    )
