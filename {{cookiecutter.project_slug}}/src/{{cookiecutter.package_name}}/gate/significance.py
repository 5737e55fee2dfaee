"""Paired comparison of a report with its baseline: delta, CI and p for every gated metric,
overall and per tag (slice), Holm-corrected as one family.

A change is a *significant drop* when its mean delta is negative and its Holm-adjusted p is
<= alpha; the gate calls it a regression only when the drop is also beyond the tolerance.
Slices smaller than `min_slice_size` are shown with a warning but not tested: they could
never reach significance and would only dilute the correction for the others.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import fmean
from typing import Any

from ..errors import EvalInputError
from ..inputs.data import Question
from ..inputs.reports import QuestionResult, Report
from ..settings.config import Config, StatsSettings
from ..settings.lines import dotted
from .stats import bootstrap_ci, holm, min_changed_questions, min_detectable_drop, sign_flip_p

OVERALL = "all questions"


@dataclass(frozen=True)
class PairedTest:
    scope: str  # OVERALL or a tag
    metric: str
    n: int  # questions evaluated in both reports
    baseline: float  # mean over those questions
    now: float
    delta: float  # now - baseline
    ci_low: float
    ci_high: float
    p: float  # sign-flip test, before correction
    p_holm: float | None  # None: not tested (slice below min_slice_size)
    significant: bool  # p_holm <= alpha
    beyond_tolerance: bool  # the drop is larger than the tolerance

    @property
    def regression(self) -> bool:
        return self.delta < 0 and self.significant and self.beyond_tolerance


@dataclass
class PairedComparison:
    tests: list[PairedTest]
    alpha: float
    tolerance: float
    min_changed: int  # fewest questions that must change to reach p <= alpha
    mde: float | None  # smallest detectable drop overall (0-1 metric), None: too few questions
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, as stored under "comparison" in the gate's report."""
        return {
            "alpha": self.alpha,
            "tolerance": self.tolerance,
            "min_changed_questions": self.min_changed,
            "min_detectable_drop": self.mde,
            "warnings": list(self.warnings),
            "tests": [asdict(test) for test in self.tests],
        }


Pair = tuple[QuestionResult, QuestionResult]


def _pairs(report: Report, baseline: Report, tag: str | None) -> list[Pair]:
    """(baseline row, current row) of each question evaluated in both, optionally with `tag`."""
    old = {row.id: row for row in baseline.questions if row.metrics}
    return [
        (old[row.id], row)
        for row in report.questions
        if row.metrics is not None and row.id in old and (tag is None or tag in row.tags)
    ]


def _test(scope: str, metric: str, pairs: list[Pair], settings: StatsSettings) -> dict[str, Any]:
    before = [_value(old, metric) for old, _ in pairs]
    after = [_value(new, metric) for _, new in pairs]
    deltas = [a - b for a, b in zip(after, before, strict=True)]
    low, high = bootstrap_ci(
        deltas, seed=settings.seed, resamples=settings.resamples, confidence=settings.confidence
    )
    return {
        "scope": scope,
        "metric": metric,
        "n": len(pairs),
        "baseline": fmean(before) if before else 0.0,
        "now": fmean(after) if after else 0.0,
        "delta": fmean(deltas) if deltas else 0.0,
        "ci_low": low,
        "ci_high": high,
        "p": sign_flip_p(
            deltas, seed=settings.seed, resamples=settings.resamples, exact_limit=settings.exact_limit
        ),
    }


def _value(row: QuestionResult, metric: str) -> float:
    """The row's value of `metric`: a retrieval metric, else an answer check."""
    if row.metrics is not None and metric in row.metrics:
        return row.metrics[metric]
    value = row.answer.check(metric) if row.answer is not None else None
    if value is None:
        raise KeyError(metric)
    return value


def compare_paired(
    report: Report,
    baseline: Report,
    metrics: list[str],
    tolerance: float,
    settings: StatsSettings,
) -> PairedComparison:
    """Paired tests of every metric in `metrics`, overall and for every tag of `report`.

    Metrics missing from a baseline row are the caller's problem (gate.compare checks first).
    """
    raw = [_test(OVERALL, metric, _pairs(report, baseline, None), settings) for metric in metrics]
    warnings = []
    tags = sorted({tag for row in report.questions if row.metrics is not None for tag in row.tags})
    untested = []
    for tag in tags:
        pairs = _pairs(report, baseline, tag)
        rows = [_test(tag, metric, pairs, settings) for metric in metrics]
        if len(pairs) < settings.min_slice_size:
            warnings.append(
                f"slice {tag!r} has {len(pairs)} evaluated question(s), fewer than "
                f"min_slice_size = {settings.min_slice_size}: shown, not tested"
            )
            untested += rows
        else:
            raw += rows
    adjusted = holm([test["p"] for test in raw])
    tests = [
        PairedTest(
            **test,
            p_holm=p_holm,
            significant=p_holm <= settings.alpha,
            beyond_tolerance=-test["delta"] > tolerance + 1e-9,
        )
        for test, p_holm in zip(raw, adjusted, strict=True)
    ]
    tests += [PairedTest(**test, p_holm=None, significant=False, beyond_tolerance=False) for test in untested]
    n = raw[0]["n"] if raw else 0
    mde = min_detectable_drop(n, settings.alpha)
    needed = min_changed_questions(settings.alpha)
    if mde is None or mde > tolerance:
        can = "no drop" if mde is None else f"only a drop of {mde:.3f} or more"
        warnings.insert(
            0,
            f"too few questions to detect the tolerance: with {n} questions {can} can be significant "
            f"at alpha = {settings.alpha:g} (at least {needed} questions must change the same way, "
            f"each by a whole point on a 0-1 metric such as hit@k), so drops between the tolerance "
            f"{tolerance:g} and that pass unless a floor or must-pass check catches them; add questions",
        )
    return PairedComparison(tests, settings.alpha, tolerance, needed, mde, warnings)


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
