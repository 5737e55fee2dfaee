"""Compare a fresh report with the committed baseline and decide whether quality held.

The gate fails (exit 3) when
  (a) floor:       an aggregate metric is below its absolute floor ([gate.floors]), or a
                   tag's mean is below its slice floor ([gate.slices]);
  (b) regression:  a gated metric ([gate] metrics: retrieval metrics and answer checks),
                   overall, by its rule (significance.py):
                     deterministic parts (the default): dropped more than `tolerance` below
                     the baseline, whatever its p-value (a change of the system on the
                     golden set, not noise);
                     parts declared stochastic ([gate] stochastic): the one-sided lower
                     bound of the mean delta over per-question means of `repeats` runs is
                     not above -tolerance (non-inferiority, fails closed);
                   or a tag's mean dropped more than `tolerance` and the drop is significant
                   (one-sided, max-T adjusted over the slice family, <= alpha);
  (c) newly failing: a per-question check ([gate.checks]: passes when its value >= threshold)
                   fails by [gate] flip_rule (flips.py): "strict" (the default), more questions
                   newly fail it than [gate.allowed_flips] allows (default 0); "net", its newly
                   failing questions outnumber its newly passing ones by more than
                   allowed_net_loss, or the exact one-sided sign test of its flips is
                   significant (min-P adjusted over the checks). Newly failing questions of a
                   check that holds are listed for review; checks of stochastic parts are
                   listed only;
  (d) must-pass:   a must-pass question retrieves no relevant document in the top k, or newly
                   fails a check (not of a stochastic part), whatever the baseline says, the
                   flip rule and whatever is allowed.
A note, never a failure, names the questions whose top k holds clearly more unjudged documents
than the baseline's (pooling.py: a possible pooling artefact). Newly passing questions are
listed too, and every failing aggregate or slice, (a) or (b), carries the questions behind
it (drops.py): the largest per-question drops of its metric.
It refuses to compare (exit 2) when the baseline lacks a metric the gate needs, was measured
with another [retrieval] k or depth (integrity.py), was judged by a different judge, model,
revision or threshold, or was made with other [gate] stochastic / repeats settings.

Each refusal is one function in refusals.REFUSALS; each rule one class (findings.Rule) in
RULES below, run in that order: their failures and notes, in order, are the verdict.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..answers.trust import advisory_checks
from ..inputs.reports import Report
from ..settings.config import GateSettings, StatsSettings
from .context import GateContext
from .findings import ANSWER, RETRIEVAL, Failure, Rule, merge_questions
from .flipped import CheckFlips
from .flips import NewlyFailing, find_flips
from .floors import Floors
from .judge_trust import JudgeTrust
from .membership import Membership
from .must_pass import MustPass
from .pooling import Pooling, more_unjudged
from .refusals import REFUSALS
from .regression import Regressions, paired_subset, regression_message
from .significance import OVERALL, PairedComparison, PairedTest, compare_paired, stochastic_metrics
from .slice_floors import SliceFloors
from .variation import Variation, flaky_at_baseline

__all__ = ["RULES", "Failure", "GateResult", "compare", "paired_subset", "regression_message"]

# The gate's rules, in the order their failures and notes are listed. A new rule: one class
# (findings.Rule) in its own module, added here.
RULES: list[Rule] = [
    Variation(),
    JudgeTrust(),
    Floors(),
    SliceFloors(),
    Regressions(),
    MustPass(),
    NewlyFailing(),
    Pooling(),
    Membership(),
]


@dataclass
class GateResult:
    summary: list[tuple[str, float | None, float, float | None]]  # metric, baseline, now, floor
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    comparison: PairedComparison | None = None  # delta, CI and p per metric and slice
    answer_tests: list[PairedTest] = field(default_factory=list)  # each gated answer check, overall
    flips: list[CheckFlips] = field(default_factory=list)  # per check, newly failing and passing
    stochastic: list[str] = field(default_factory=list)  # metrics judged by non-inferiority
    pooling: list[str] = field(default_factory=list)  # questions with clearly more unjudged documents

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
            "failures": [failure.to_dict() for failure in self.failures],
            "notes": list(self.notes),
            "stochastic_metrics": list(self.stochastic),
            "pooling": list(self.pooling),
            "flips": [
                {
                    "check": flips.check,
                    "applicable": flips.applicable,
                    "allowed": flips.allowed,
                    "blocking": flips.blocking,
                    "newly_failing": [flip.row.id for flip in flips.failing],
                    "newly_passing": [flip.row.id for flip in flips.passing],
                    "rule": flips.rule,
                    "net_loss": flips.net_loss,
                    "allowed_net_loss": flips.allowed_net_loss,
                    "p": flips.p,
                    "p_adjusted": flips.p_adjusted,
                    "fails": flips.over,
                    "verdict": flips.summary(),
                    "advisory": flips.advisory,
                }
                for flips in self.flips
            ],
        }


def compare(
    report: Report,
    baseline: Report,
    gate: GateSettings,
    baseline_path: Path,
    stats: StatsSettings | None = None,
) -> GateResult:
    """Apply the gate's rules to `report` against `baseline` (`stats`: default [stats])."""
    for refuse in REFUSALS:  # exit 2: nothing to compare like for like
        refuse(report, baseline, gate, baseline_path)
    context = measure(report, baseline, gate, baseline_path, stats or StatsSettings())
    floors = context.floors
    shown = list(dict.fromkeys([*gate.retrieval_metrics, *gate.answer_metrics, *floors]))
    before, now = baseline.aggregate, report.aggregate
    result = GateResult(summary=[(name, before.get(name), now[name], floors.get(name)) for name in shown])
    failures: list[Failure] = []
    for rule in RULES:
        found = rule.findings(context)
        failures += found.failures
        result.notes += found.notes
    # one failure per question and group (retrieval, then answer), in report order
    result.failures = merge_questions(failures, [row.id for row in report.questions], [RETRIEVAL, ANSWER])
    result.comparison = context.comparison
    gated = [*gate.retrieval_metrics, *gate.answer_metrics]
    result.stochastic = [name for name in dict.fromkeys([*gated, *gate.thresholds]) if name in context.moving]
    result.answer_tests = [
        t for t in context.comparison.tests if t.scope == OVERALL and t.metric in gate.answer_metrics
    ]
    result.flips = context.flips
    result.pooling = [qid for qid, _, _ in context.pooled]
    return result


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
