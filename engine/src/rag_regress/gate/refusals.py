"""The gate's refusals: the checks that stop a comparison before any rule runs (exit 2).

Each raises EvalInputError naming the baseline when the two reports cannot be compared like
for like; `compare` (rules.py) runs them in the order REFUSALS lists them, the first to fail
is the one reported. A new refusal is one function added to REFUSALS.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import EvalInputError
from ..inputs.reports import Report
from ..settings.config import GateSettings
from .answer_rules import require_same_judge
from .integrity import check_same_measurement

Refusal = Callable[[Report, Report, GateSettings, Path], None]


def same_measurement(report: Report, baseline: Report, gate: GateSettings, baseline_path: Path) -> None:
    """Refuse a baseline measured with another [retrieval] k or depth (integrity.py)."""
    check_same_measurement(report.settings, baseline, baseline_path)


def same_judge(report: Report, baseline: Report, gate: GateSettings, baseline_path: Path) -> None:
    """Refuse a baseline judged by another judge, model, revision or threshold (answer_rules.py)."""
    require_same_judge(report, baseline, baseline_path)


def same_stochastic_settings(
    report: Report, baseline: Report, gate: GateSettings, baseline_path: Path
) -> None:
    """Refuse a baseline made with other stochastic parts or repeats."""
    now = (report.settings.get("stochastic") or {}).copy()
    before = (baseline.settings.get("stochastic") or {}).copy()
    for measured in ("noise", "variation"):  # measured by the run, not settings
        now.pop(measured, None), before.pop(measured, None)
    if now != before:
        raise EvalInputError(
            baseline_path,
            f"the baseline was made with [gate] stochastic/repeats {before or 'not set'}, "
            f"this run with {now or 'not set'}: per-question means over different repeats do not compare",
            "remake the baseline with `nox -s baseline` (review its diff) and commit it",
        )


def gated_aggregates(report: Report, baseline: Report, gate: GateSettings, baseline_path: Path) -> None:
    """Refuse a baseline without an aggregate value of a gated metric or answer check."""
    gated = [*gate.retrieval_metrics, *gate.answer_metrics]
    missing = [name for name in gated if name not in baseline.aggregate]
    if missing:
        raise EvalInputError(
            baseline_path,
            f"the baseline has no value for {', '.join(missing)} (it was made with other settings)",
            "remake it with `nox -s baseline` and commit it, so the comparison is like for like",
        )


def gated_question_metrics(report: Report, baseline: Report, gate: GateSettings, baseline_path: Path) -> None:
    """Refuse a baseline question without a gated retrieval metric or check read per question."""
    wanted = [*gate.retrieval_metrics, *(str(metric) for metric in gate.checks)]  # read per question
    for stored in {row.id: row for row in baseline.questions}.values():
        if stored.metrics is not None and any(name not in stored.metrics for name in wanted):
            raise EvalInputError(
                baseline_path,
                f"question {stored.id!r} lacks a gated metric in the baseline",
                "remake it with `nox -s baseline` and commit it",
            )


REFUSALS: tuple[Refusal, ...] = (
    same_measurement,
    same_judge,
    same_stochastic_settings,
    gated_aggregates,
    gated_question_metrics,
)
