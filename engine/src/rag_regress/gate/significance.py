"""Paired comparison of a report with its baseline: delta, CI and p of every gated metric,
overall and per tag (slice), and the rule each one is judged by.

Three rules (docs/statistics.md says when each applies):
  change           a deterministic metric, overall: a drop beyond the tolerance is a
                   regression whatever its p-value. Same code, same index, same settings give
                   the same ranking and answer, so the drop is a real change on the golden set
                   (no claim about questions outside it);
  non-inferiority  a metric of a part declared stochastic ([gate] stochastic), overall: the
                   one-sided lower bound of the mean delta must be above -tolerance, so a
                   golden set too small to tell fails (closed) and says how many questions it
                   would need;
  significance     a slice (the questions with one tag): a drop beyond the tolerance that is
                   significant, one-sided p adjusted over the slice family, <= alpha. Slices are
                   small and many, so one flipped question is not enough there.

Two families, each corrected on its own by the Westfall-Young max-T step-down over the same
sign flips (stats.max_t_drop_p), which respects the metrics' correlation: the gated metrics
overall (retrieval metrics and answer checks together), and every (tag, metric) of the slices
with at least `min_slice_size` questions. Smaller slices are shown with a warning, not tested.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import fmean
from typing import Any

import numpy as np

from ..answers.settings import ANSWER_CHECKS
from ..errors import EvalInputError
from ..inputs.data import Question
from ..inputs.reports import QuestionResult, Report
from ..settings.config import Config, StatsSettings
from ..settings.lines import dotted
from .stats import (
    ZERO,
    bootstrap_ci,
    design_size,
    holm,
    lower_bound,
    max_t_drop_p,
    min_changed_questions,
    min_detectable_drop,
    sign_flip_p,
    tolerance_in_questions_per_metric,
)

OVERALL = "all questions"
METRICS_FAMILY = "gated metrics"
SLICES_FAMILY = "slices"
CHANGE, NON_INFERIORITY, SIGNIFICANCE = "change", "non-inferiority", "significance"
# What each part of the system, declared stochastic, makes stochastic.
STOCHASTIC_PARTS = {
    "retriever": None,  # everything: the generator reads its hits
    "generator": frozenset(ANSWER_CHECKS),
    "judge": frozenset({"faithfulness"}),
}


def stochastic_metrics(parts: list[str], metrics: list[str]) -> set[str]:
    """The metrics in `metrics` that vary from run to run when `parts` are stochastic: a
    stochastic retriever moves everything (the generator reads its hits); a generator, the
    answer checks; a judge, faithfulness."""
    moved: set[str] = set()
    for part in parts:
        touched = STOCHASTIC_PARTS.get(part)
        moved |= set(metrics) if touched is None else touched & set(metrics)
    return moved


@dataclass(frozen=True)
class PairedTest:
    scope: str  # OVERALL or a tag
    metric: str
    n: int  # questions evaluated in both reports (where the metric applies)
    baseline: float  # mean over those questions
    now: float
    delta: float  # now - baseline
    ci_low: float
    ci_high: float
    p: float  # one-sided sign-flip test of "no drop", before correction
    p_holm: float | None  # Holm-adjusted p in the same family (kept for older readers)
    significant: bool  # p_adjusted <= alpha (a significant drop)
    beyond_tolerance: bool  # the drop is larger than the tolerance
    p_adjusted: float | None = None  # max-T step-down over the family; None: not tested
    family: str = METRICS_FAMILY  # what it is corrected with: METRICS_FAMILY or SLICES_FAMILY
    rule: str = CHANGE  # CHANGE, NON_INFERIORITY or SIGNIFICANCE
    lower_bound: float | None = None  # non-inferiority: one-sided lower bound of the delta
    needed: int | None = None  # non-inferiority: questions the design asks for at this tolerance
    tolerance: float = 0.0  # the drop allowed ([gate] tolerance)

    @property
    def regression(self) -> bool:
        """Whether this test fails the gate, by its rule (module docstring)."""
        if self.rule == NON_INFERIORITY:  # fails closed: no bound, or a bound at or below -tolerance
            return self.lower_bound is None or self.lower_bound <= -self.tolerance + 1e-12
        if self.rule == SIGNIFICANCE:
            return self.delta < 0 and self.significant and self.beyond_tolerance
        return self.delta < 0 and self.beyond_tolerance


@dataclass
class PairedComparison:
    tests: list[PairedTest]
    alpha: float
    tolerance: float
    min_changed: int  # fewest questions that must drop to reach a one-sided p <= alpha
    mde: float | None  # smallest detectable drop overall (0-1 metric), None: too few questions
    warnings: list[str] = field(default_factory=list)
    correction: str = ""  # what is corrected over what, in words
    in_questions: str = ""  # the tolerance in whole questions, in words

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, as stored under "comparison" in the gate's report."""
        return {
            "alpha": self.alpha,
            "tolerance": self.tolerance,
            "tolerance_in_questions": self.in_questions,
            "min_changed_questions": self.min_changed,
            "min_detectable_drop": self.mde,
            "correction": self.correction,
            "warnings": list(self.warnings),
            "tests": [asdict(test) for test in self.tests],
        }


Pair = tuple[QuestionResult, QuestionResult]


def question_pairs(report: Report, baseline: Report, tag: str | None) -> list[Pair]:
    """(baseline row, current row) of each question in both reports, optionally with `tag`
    (a tag: evaluated questions only, as slices are means over evaluated questions)."""
    old = {row.id: row for row in baseline.questions}
    return [
        (old[row.id], row)
        for row in report.questions
        if row.id in old and (tag is None or (tag in row.tags and row.metrics is not None))
    ]


def question_value(row: QuestionResult, metric: str) -> float | None:
    """The row's value of `metric`: a retrieval metric, else an answer check; None: not applicable."""
    if row.metrics is not None and metric in row.metrics:
        return row.metrics[metric]
    if metric in ANSWER_CHECKS:
        return row.answer.check(metric) if row.answer is not None else None
    return None


def _deltas(pairs: list[Pair], metrics: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """questions x metrics arrays of baseline values, current values and applicability."""
    shape = (len(pairs), len(metrics))
    before, after, used = np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool)
    for i, (old, new) in enumerate(pairs):
        for j, metric in enumerate(metrics):
            was, now = question_value(old, metric), question_value(new, metric)
            if was is not None and now is not None:
                before[i, j], after[i, j], used[i, j] = was, now, True
    return before, after, used


def _family(
    scope_of: list[tuple[str, str, list[Pair]]], settings: StatsSettings, tolerance: float
) -> list[dict[str, Any]]:
    """The tests of one family: (scope, metric, pairs) each; p raw and max-T adjusted together."""
    rows, columns = [], []
    for scope, metric, pairs in scope_of:
        before, after, used = _deltas(pairs, [metric])
        mask = used[:, 0]
        b, a = before[mask, 0], after[mask, 0]
        d = a - b
        low, high = bootstrap_ci(
            list(d), seed=settings.seed, resamples=settings.resamples, confidence=settings.confidence
        )
        rows.append(
            {
                "scope": scope,
                "metric": metric,
                "n": int(mask.sum()),
                "baseline": float(fmean(b)) if len(b) else 0.0,
                "now": float(fmean(a)) if len(a) else 0.0,
                "delta": float(fmean(d)) if len(d) else 0.0,
                "ci_low": low,
                "ci_high": high,
                "p": sign_flip_p(
                    list(d),
                    seed=settings.seed,
                    resamples=settings.resamples,
                    exact_limit=settings.exact_limit,
                    alternative="less",
                ),
                "deltas": d,
            }
        )
        # One column per test, one row per question: a sign flip flips a question in every
        # test it takes part in (0 where it does not), which keeps the tests' correlation.
        ids = [new.id for (_, new), applies in zip(pairs, mask, strict=True) if applies]
        columns.append(dict(zip(ids, (float(x) for x in d), strict=True)))
    keys = sorted({key for column in columns for key in column})
    matrix = np.array([[column.get(key, 0.0) for column in columns] for key in keys], dtype=float)
    matrix = matrix.reshape(len(keys), len(columns))
    _, adjusted = max_t_drop_p(
        matrix, seed=settings.seed, resamples=settings.resamples, exact_limit=settings.exact_limit
    )
    holm_p = holm([row["p"] for row in rows])
    for row, p_adjusted, p_holm in zip(rows, adjusted, holm_p, strict=True):
        row["p_adjusted"], row["p_holm"] = p_adjusted, p_holm
    return rows


def compare_paired(
    report: Report,
    baseline: Report,
    metrics: list[str],
    tolerance: float,
    settings: StatsSettings,
    stochastic: set[str] | frozenset[str] = frozenset(),
    noise: dict[str, float] | None = None,
    power: float = 0.95,
) -> PairedComparison:
    """Paired tests of every metric in `metrics` (retrieval metrics and answer checks), overall
    and for every tag of `report`, each judged by its rule (module docstring). `stochastic`
    names the metrics judged by non-inferiority; `noise` their standard deviation of a
    no-change delta measured over repeats (the baseline's) and `power` the chance an unchanged
    system should pass, for the design size.

    Metrics missing from a baseline row are the caller's problem (gate.compare checks first).
    """
    everyone = question_pairs(report, baseline, None)
    overall = _family([(OVERALL, metric, everyone) for metric in metrics], settings, tolerance)
    warnings: list[str] = []
    tags = sorted({tag for row in report.questions if row.metrics is not None for tag in row.tags})
    sliced, untested = [], []
    slice_metrics = [metric for metric in metrics if metric not in ANSWER_CHECKS]
    for tag in tags:
        pairs = question_pairs(report, baseline, tag)
        if len(pairs) < settings.min_slice_size:
            warnings.append(
                f"slice {tag!r} has {len(pairs)} evaluated question(s), fewer than "
                f"min_slice_size = {settings.min_slice_size}: shown, not tested"
            )
            untested += [(tag, metric, pairs) for metric in slice_metrics]
        else:
            sliced += [(tag, metric, pairs) for metric in slice_metrics]
    slice_rows = _family(sliced, settings, tolerance) if sliced else []
    tests = []
    for row in overall:
        deltas = row.pop("deltas")
        rule = NON_INFERIORITY if row["metric"] in stochastic else CHANGE
        bound = needed = None
        if rule == NON_INFERIORITY:
            bound = lower_bound(deltas, settings.alpha)
            spread = (noise or {}).get(row["metric"])
            if spread is None:
                spread = float(np.std(deltas, ddof=1)) if len(deltas) > 1 else 0.0
            needed = design_size(spread, tolerance, settings.alpha, power)
        tests.append(_made(row, rule, METRICS_FAMILY, tolerance, settings.alpha, bound, needed))
    for row in slice_rows:
        row.pop("deltas")
        tests.append(_made(row, SIGNIFICANCE, SLICES_FAMILY, tolerance, settings.alpha, None, None))
    for tag, metric, pairs in untested:
        (row,) = _family([(tag, metric, pairs)], settings, tolerance)
        row.pop("deltas")
        row["p_adjusted"] = row["p_holm"] = None
        tests.append(_made(row, SIGNIFICANCE, SLICES_FAMILY, tolerance, settings.alpha, None, None))
    n = sum(1 for old, new in everyone if new.metrics is not None and old.metrics is not None)
    mde = min_detectable_drop(n, settings.alpha)
    needed_changes = min_changed_questions(settings.alpha)
    gated = ", ".join(metrics)
    correction = (
        f"p is one-sided (a drop). Adjusted p: Westfall-Young max-T step-down over the same sign flips, "
        f"within each family: the {len(overall)} gated metrics overall ({gated}), and the "
        f"{len(slice_rows)} tests of slices with at least {settings.min_slice_size} questions"
    )
    return PairedComparison(
        tests,
        settings.alpha,
        tolerance,
        needed_changes,
        mde,
        warnings,
        correction,
        tolerance_in_questions_per_metric(tolerance, {t.metric: t.n for t in tests if t.scope == OVERALL}),
    )


def _made(
    row: dict[str, Any],
    rule: str,
    family: str,
    tolerance: float,
    alpha: float,
    bound: float | None,
    needed: int | None,
) -> PairedTest:
    p_adjusted = row.get("p_adjusted")
    return PairedTest(
        **{key: value for key, value in row.items() if key != "p_adjusted"},
        significant=p_adjusted is not None and p_adjusted <= alpha and row["delta"] < -ZERO,
        beyond_tolerance=-row["delta"] > tolerance + 1e-9,
        p_adjusted=p_adjusted,
        family=family,
        rule=rule,
        lower_bound=bound,
        needed=needed,
        tolerance=tolerance,
    )


def check_slice_tags(config: Config, questions: list[Question]) -> None:
    """A [gate.slices.<tag>] floor for a tag no answerable question carries is a typo, not a
    pass: raise EvalInputError at that table's line, listing the tags that exist."""
    tags = sorted({tag for question in questions if question.answerable for tag in question.tags})
    for tag in config.gate.slice_floors:
        if tag not in tags:
            header = f"[{dotted(('gate', 'slices', tag))}]"
            raise EvalInputError(
                config.path,
                f"{header}: no answerable question in {config.golden.name} has the tag {tag!r}",
                f"use one of: {', '.join(tags) or '(no tags)'}",
                config.line_of("gate", "slices", tag),
            )


def design_lines(report: Report, tolerance: float, settings: StatsSettings, power: float) -> list[str]:
    """What `baseline` prints for a system with stochastic parts: for each metric they move,
    the noise of a no-change delta measured over the repeats and the questions a
    non-inferiority test at this tolerance needs (topic-set-size design). Empty otherwise."""
    recorded = report.settings.get("stochastic") or {}
    noise = recorded.get("noise") or {}
    parts = [str(part) for part in recorded.get("parts") or []]
    moved = stochastic_metrics(parts, list(noise))
    if not moved:
        return []
    n = report.counts.evaluated
    lines = [
        f"stochastic parts {', '.join(parts)} ({recorded.get('repeats')} runs per question): questions a "
        f"non-inferiority test needs at tolerance {tolerance:g}, alpha {settings.alpha:g}, power {power:g}:"
    ]
    for metric in sorted(moved):
        needed = design_size(float(noise[metric]), tolerance, settings.alpha, power)
        verdict = "enough" if needed is not None and needed <= n else "too few: add questions or repeats"
        lines.append(
            f"  {metric}: noise {float(noise[metric]):.3f}, needs {needed} questions ({n} now: {verdict})"
        )
    return lines
