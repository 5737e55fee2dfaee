"""One view of a gate run, built once from the report, the verdict and the baseline.

The console (console.py), the markdown summary (markdown.py) and the HTML page (html.py) lay
out the same `GateView`, so they cannot disagree: every number and sentence they show is
decided here. Text in it is plain data (question text, tags and ids may hold anything); each
renderer escapes it for its own medium with one function, applied where data meets layout:
`inert.inert` (terminal and CI log), `markdown.text` (the step summary), `html.text` (the
page). All three start from `show_controls`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..answers.settings import ANSWER_CHECKS
from ..answers.trust import advisory_checks, corrected_line, trust_line
from ..gate.findings import Failure, Scope
from ..gate.flipped import NET, CheckFlips, Flip
from ..gate.pooling import judged_text
from ..gate.regression import paired_subset
from ..gate.rules import GateResult
from ..gate.significance import OVERALL, PairedTest
from ..gate.stats import format_p as p_text
from ..inputs.reports import Counts, Report


def cut(items: list[str], limit: int) -> list[str]:
    """At most `limit` items; the rest summarised as one '... and N more' item."""
    if len(items) <= limit:
        return list(items)
    return [*items[:limit], f"... and {len(items) - limit} more"]


@dataclass(frozen=True)
class MetricRow:
    """One gated metric or answer check, overall: baseline, now and the paired test."""

    name: str
    kind: str  # "retrieval" or "answer"
    baseline: float | None
    now: float
    delta: float | None
    ci: tuple[float, float] | None
    p: float | None
    p_adjusted: float | None  # max-T step-down over the gated metrics (one family)
    floor: float | None
    failed: str | None  # "floor", "regression" or "floor, regression"; None when it holds
    # The questions its CI and p are over, when their means are not the figures of the row
    # (gate/regression.paired_subset): said under the table, so no metric shows two unexplained figures.
    paired: str | None = None
    advisory: bool = False  # rests on a judge that has not earned the gate (answers/trust.py)
    advised: str | None = None  # its advisory failures: "floor", "regression"; never failing

    @property
    def verdict(self) -> str:
        """The row's verdict in words: FAIL, ok, or an advisory check's (never failing)."""
        if self.failed:
            return "FAIL"
        if self.advised:
            return f"advisory: {self.advised}"
        return "ok (advisory)" if self.advisory else "ok"

    HEADER = ("metric", "baseline", "now", "delta", "CI of delta", "p", "adj. p", "floor")

    @property
    def cells(self) -> tuple[str, ...]:
        """The row's cells under HEADER, as every table prints them ('-': none)."""
        return (
            self.name,
            "-" if self.baseline is None else f"{self.baseline:.3f}",
            f"{self.now:.3f}",
            "" if self.delta is None else f"{self.delta:+.3f}",
            f"[{self.ci[0]:+.3f}, {self.ci[1]:+.3f}]" if self.ci else "",
            p_text(self.p),
            p_text(self.p_adjusted),
            "-" if self.floor is None else f"{self.floor:.3f}",
        )


@dataclass(frozen=True)
class QuestionIssue:
    """Everything that went wrong with one question, listed once."""

    id: str
    question: str
    kinds: list[str]  # "must-pass", "newly failing" (retrieval), "newly failing answer"
    blocking: bool  # fails the gate (must-pass), or only listed for review
    reasons: list[str]  # what failed, e.g. "hit@5 1.000 -> 0.000 (passes at >= 1)"
    details: list[str]  # where the relevant documents rank, unsupported sentences, ...

    @property
    def label(self) -> str:
        return ", ".join(self.kinds)


@dataclass(frozen=True)
class ListedQuestion:
    """One question behind a failing aggregate or slice, as every rendering lists it."""

    id: str
    question: str  # its text on one line, cut to QUESTION_WIDTH characters
    numbers: str  # "1.000 -> 0.000 (-1.000)": baseline -> now (delta)


QUESTION_WIDTH = 80


@dataclass(frozen=True)
class CheckListing:
    """One per-question check's flips, both ways, as every rendering lists them: its verdict
    (the rule and every number it rests on: gate/flips.py), then the questions that newly fail
    it and those that newly pass it, each list cut to [display] max_listed."""

    check: str
    verdict: str  # CheckFlips.summary(): counts, rule, allowance, p and adjusted p
    fails: bool  # the check's flips fail the gate
    failing: list[ListedQuestion]
    failing_total: int
    passing: list[ListedQuestion]
    passing_total: int

    @property
    def lists(self) -> list[tuple[str, list[ListedQuestion], str | None]]:
        """(heading, questions shown, '... and N more' or None) for newly failing, then newly
        passing; an empty side is left out."""
        sides = []
        for name, shown, total in (
            ("newly failing", self.failing, self.failing_total),
            ("newly passing", self.passing, self.passing_total),
        ):
            if total:
                more = f"... and {total - len(shown)} more" if total > len(shown) else None
                sides.append((f"{name} ({total})", shown, more))
        return sides


@dataclass(frozen=True)
class MetricProblem:
    """A failing aggregate or slice: its floor and regression failures together, then the
    questions behind it (gate/drops.py) once, cut to [display] max_listed."""

    subject: str  # a metric, or "metric [tag]"
    failures: list[Failure]  # "floor" and/or "regression", in the verdict's order
    note: str  # what the questions are, or why none is listed
    questions: list[ListedQuestion]  # at most max_listed
    more: int  # questions the renderings leave out (all are in the JSON report)

    @property
    def more_text(self) -> str | None:
        if not self.more:
            return None
        return f"... and {self.more} more question(s): every one is in the JSON report"


@dataclass(frozen=True)
class SliceCell:
    value: float | None
    delta: float | None
    p_adjusted: float | None  # max-T step-down over the slice family; None: not tested
    significant_drop: bool
    paired: int | None = None  # the questions the delta is over, when not those of the value

    @property
    def text(self) -> str | None:
        """'value now (delta, adjusted p)', as every table shows it; None when not compared. A
        delta over other questions than the value (some joined or left the tag) says so:
        'value now (delta over 4 in both runs, adjusted p)'."""
        if self.delta is None or self.value is None:
            return None
        over = "" if self.paired is None else f" over {self.paired} in both runs"
        return f"{self.value:.3f} ({self.delta:+.3f}{over}, {p_text(self.p_adjusted)})"


@dataclass(frozen=True)
class SliceRow:
    tag: str
    n: int
    cells: list[SliceCell]  # one per slice metric
    bars: list[tuple[float | None, float]]  # (baseline, now) per slice metric, for the plot


@dataclass(frozen=True)
class DeltaSeries:
    """Every question's delta of one metric (now - baseline), sorted, for the plot."""

    metric: str
    deltas: list[tuple[float, str]]  # (delta, question id), ascending

    @property
    def changed(self) -> int:
        return sum(1 for delta, _ in self.deltas if abs(delta) > 1e-12)


@dataclass(frozen=True)
class GateView:
    passed: bool
    counts: Counts
    tolerance: float
    alpha: float
    tested: int  # tests with an adjusted p (gated metrics, and slices big enough to test)
    rule: str  # when the gate fails, in one paragraph
    correction: str  # what is corrected over what
    in_questions: str  # the tolerance in whole questions
    flip_checks: list[CheckListing]  # per check with flips: its verdict, newly failing and passing
    metrics: list[MetricRow]  # retrieval metrics and answer checks, one table
    min_detectable_drop: float | None
    min_changed: int | None
    warnings: list[str]
    problems: list[Failure]  # blocking failures that are not about one question, by subject
    metric_problems: list[MetricProblem]  # the same failures grouped by metric (or slice)
    questions: list[QuestionIssue]  # each failing question once, blocking ones first
    notes: list[str]
    judged: str  # judged@k of the baseline and now, against today's judgments (gate/pooling.py)
    slice_metrics: list[str]
    slices: list[SliceRow]  # only tags that have evaluated questions
    deltas: list[DeltaSeries]
    holdout: list[tuple[str, float, float, float]]  # metric, dev, holdout, gap
    holdout_file: str | None
    holdout_evaluated: int
    receipt: list[tuple[str, str]]
    max_listed: int
    # the judge's agreement with people and whether its checks gate (answers/trust.py)
    judge_trust: str = ""
    corrected: str | None = None  # faithfulness corrected by the team's labels, with its interval
    advisory: list[str] = dataclasses.field(default_factory=list)  # advisory floors and regressions

    @property
    def mde_text(self) -> str:
        """The minimum detectable drop in words: below it no drop can be significant."""
        mde = self.min_detectable_drop
        at = "none possible" if mde is None else f"{mde:.3f}"
        return (
            f"minimum detectable drop: {at} (at least {self.min_changed} questions must drop to reach a "
            f"one-sided p <= {self.alpha:g}; a smaller drop can still be a real change of this golden set)"
        )

    @property
    def paired_notes(self) -> list[str]:
        """Under the metric table: the rows whose CI and p are over other questions than their
        figures (the questions with a value in both runs)."""
        return [row.paired for row in self.metrics if row.paired]

    @property
    def failing_checks(self) -> list[CheckListing]:
        """The checks whose flips fail the gate, by their rule."""
        return [listing for listing in self.flip_checks if listing.fails]

    @property
    def blocking_questions(self) -> list[QuestionIssue]:
        return [issue for issue in self.questions if issue.blocking]

    @property
    def listed_questions(self) -> list[QuestionIssue]:
        return [issue for issue in self.questions if not issue.blocking]

    def shown(self, issues: list[QuestionIssue]) -> tuple[list[QuestionIssue], str | None]:
        """The first `max_listed` of `issues`, and a line saying how many more the report holds
        (the markdown summary and the page are cut; the console lists every question)."""
        if len(issues) <= self.max_listed:
            return issues, None
        more = len(issues) - self.max_listed
        return issues[: self.max_listed], f"... and {more} more question(s): every one is in the JSON report"

    @property
    def failure_count(self) -> int:
        return len(self.problems) + len(self.blocking_questions)


def _metric_rows(report: Report, baseline: Report, result: GateResult) -> list[MetricRow]:
    tests = {t.metric: t for t in result.comparison.tests if t.scope == OVERALL} if result.comparison else {}
    failing: dict[str, list[str]] = {}
    advised: dict[str, list[str]] = {}
    for failure in result.failures:
        if failure.scope is Scope.AGGREGATE:
            (advised if failure.advisory else failing if failure.blocking else {}).setdefault(
                failure.subject, []
            ).extend(failure.labels)
    advisory = advisory_checks(report.receipt.get("calibration"))
    rows = []
    for name, was, now, floor in result.summary:
        test: PairedTest | None = tests.get(name)
        kind = "answer" if name in ANSWER_CHECKS else "retrieval"
        p, ci = (test.p, (test.ci_low, test.ci_high)) if test else (None, None)
        subset = paired_subset(test, (was, now)) if test else ""
        paired = (
            f"{name}: its CI and p are{subset}: {test.baseline:.3f} -> {test.now:.3f} ({test.delta:+.3f})"
            if test and subset
            else None
        )
        rows.append(
            MetricRow(
                name=name,
                kind=kind,
                baseline=was,
                now=now,
                delta=None if was is None else now - was,
                ci=ci,
                p=p,
                p_adjusted=test.p_adjusted if test else None,
                floor=floor,
                failed=", ".join(dict.fromkeys(failing.get(name, []))) or None,
                paired=paired,
                advisory=name in advisory,
                advised=", ".join(dict.fromkeys(advised.get(name, []))) or None,
            )
        )
    return rows


def _one_line(text: str, width: int = QUESTION_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _listed(flips: list[Flip], max_listed: int) -> list[ListedQuestion]:
    return [ListedQuestion(f.row.id, _one_line(f.row.question), f.numbers) for f in flips[:max_listed]]


def _check_listings(checks: list[CheckFlips], max_listed: int) -> list[CheckListing]:
    """Each check with flips: its verdict and both lists, in the order of [gate.checks]."""
    return [
        CheckListing(
            flips.check,
            flips.summary(),
            flips.over,
            _listed(flips.failing, max_listed),
            len(flips.failing),
            _listed(flips.passing, max_listed),
            len(flips.passing),
        )
        for flips in checks
        if flips.failing or flips.passing
    ]


def _metric_problems(result: GateResult, max_listed: int) -> list[MetricProblem]:
    """The blocking floors and regressions grouped by subject (first appearance first), each
    group with the questions behind it: the first of its failures that lists any (a floor
    missed with nothing dropped lists the lowest-scoring questions, its regression none)."""
    groups: dict[str, list[Failure]] = {}
    for failure in result.problems:
        if failure.scope is Scope.AGGREGATE:
            groups.setdefault(failure.subject, []).append(failure)
    problems = []
    for subject, failures in groups.items():
        source = next((f for f in failures if f.moves), failures[0])
        listed = [
            ListedQuestion(move.id, _one_line(move.question), move.numbers)
            for move in source.moves[:max_listed]
        ]
        more = max(len(source.moves) - max_listed, 0)
        problems.append(MetricProblem(subject, failures, source.moves_note, listed, more))
    return problems


def _question_issues(result: GateResult) -> list[QuestionIssue]:
    """Merge the per-question failures (retrieval and answer) into one entry per question."""
    merged: dict[str, QuestionIssue] = {}
    for failure in result.failures:
        if failure.scope is not Scope.QUESTION:
            continue
        fresh = QuestionIssue(failure.subject, failure.question, [], False, [], [])
        issue = merged.setdefault(failure.subject, fresh)
        issue.kinds.extend(k for k in failure.labels if k not in issue.kinds)
        issue.reasons.extend(failure.reasons)
        issue.details.extend(failure.details)
        if failure.blocking and not issue.blocking:
            merged[failure.subject] = QuestionIssue(
                issue.id, issue.question, issue.kinds, True, issue.reasons, issue.details
            )
    return sorted(merged.values(), key=lambda issue: not issue.blocking)  # stable: report order within


def _slices(report: Report, baseline: Report, result: GateResult, metrics: list[str]) -> list[SliceRow]:
    tests = {(t.scope, t.metric): t for t in result.comparison.tests} if result.comparison else {}
    rows = []
    for tag, piece in report.slices.items():
        if not piece.metrics:
            continue  # no evaluated question has this tag: nothing to show
        before = baseline.slices.get(tag)
        cells, bars = [], []
        for metric in metrics:
            test = tests.get((tag, metric))
            value = piece.metrics.get(metric)
            was = (before.metrics or {}).get(metric) if before is not None else None
            cells.append(
                SliceCell(
                    value=value,
                    delta=test.delta if test else None,
                    p_adjusted=test.p_adjusted if test else None,
                    significant_drop=bool(test and test.significant and test.delta < 0),
                    paired=test.n if test and paired_subset(test, (was, value)) else None,
                )
            )
            if value is not None:
                bars.append((was, value))
        rows.append(SliceRow(tag, piece.evaluated, cells, bars))
    return rows


def _deltas(report: Report, baseline: Report, metric: str) -> DeltaSeries:
    old = {row.id: row.metrics for row in baseline.questions if row.metrics}
    deltas = sorted(
        (row.metrics[metric] - old[row.id][metric], row.id)
        for row in report.questions
        if row.metrics is not None and row.id in old and metric in row.metrics and metric in old[row.id]
    )
    return DeltaSeries(metric, deltas)


def _receipt(receipt: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [(f"sha256 {name}", str(digest)) for name, digest in (receipt.get("sha256") or {}).items()]
    judge = receipt.get("judge") or {}
    rows.append(("git commit", str(receipt.get("git_commit") or "not a git checkout")))
    identity = " / ".join(str(judge.get(k)) for k in ("name", "model", "revision"))
    rows.append(("judge / model / revision", identity))
    rows.append(("versions", ", ".join(f"{k} {v}" for k, v in (receipt.get("versions") or {}).items())))
    rows.append(("seed, k", f"{receipt.get('seed')}, {receipt.get('k')}"))
    return rows


def _rule(result: GateResult) -> str:
    """When this gate fails, in words, from the rules the verdict applied."""
    comparison = result.comparison
    tolerance = comparison.tolerance if comparison else 0.0
    alpha = comparison.alpha if comparison else 0.0
    stochastic = set(result.stochastic)
    deterministic = [row[0] for row in result.summary if row[0] not in stochastic]
    parts = []
    if deterministic:
        parts.append(
            f"a deterministic gated metric dropping more than {tolerance:g} below the baseline fails "
            "whatever its p (a real change on this golden set; no claim beyond it)"
        )
    if stochastic:
        parts.append(
            f"a stochastic one ({', '.join(sorted(stochastic))}) fails unless the one-sided "
            f"{1 - alpha:.0%} lower bound of its delta is above -{tolerance:g} (non-inferiority)"
        )
    parts.append(f"a slice fails when it drops more than {tolerance:g} with adjusted p <= {alpha:g}")
    if any(flips.rule == NET for flips in result.flips):
        parts.append(
            "a per-question check fails on a net loss (net rule): more questions newly failing it than "
            "newly passing it beyond allowed_net_loss, or a one-sided exact sign test of its flips with "
            f"adjusted p <= {alpha:g}; otherwise its newly failing questions are listed for review"
        )
    else:
        parts.append(
            "a question newly failing a check fails beyond [gate.allowed_flips] (default 0; strict rule)"
        )
    parts.append("floors and must-pass questions always")
    return "regression rules: " + "; ".join(parts)


def gate_view(report: Report, result: GateResult, baseline: Report, max_listed: int = 10) -> GateView:
    """The view of one gate run that every rendering lays out."""
    comparison = result.comparison
    sliced = [t for t in comparison.tests if t.scope != OVERALL] if comparison else []
    slice_metrics = list(dict.fromkeys(t.metric for t in sliced))
    holdout = report.holdout
    grouped = _metric_problems(result, max_listed)
    return GateView(
        passed=result.passed,
        counts=report.counts,
        tolerance=comparison.tolerance if comparison else 0.0,
        alpha=comparison.alpha if comparison else 0.0,
        tested=sum(1 for t in comparison.tests if t.p_adjusted is not None) if comparison else 0,
        rule=_rule(result),
        correction=comparison.correction if comparison else "",
        in_questions=comparison.in_questions if comparison else "",
        flip_checks=_check_listings(result.flips, max_listed),
        metrics=_metric_rows(report, baseline, result),
        min_detectable_drop=comparison.mde if comparison else None,
        min_changed=comparison.min_changed if comparison else None,
        warnings=list(comparison.warnings) if comparison else [],
        problems=[failure for group in grouped for failure in group.failures],
        metric_problems=grouped,
        questions=_question_issues(result),
        notes=list(result.notes),
        judged=judged_text(report, baseline, len(result.pooling)),
        slice_metrics=slice_metrics,
        slices=_slices(report, baseline, result, slice_metrics),
        deltas=[_deltas(report, baseline, metric) for metric in slice_metrics],
        holdout=[
            (name, report.aggregate[name], holdout.aggregate[name], gap) for name, gap in holdout.gap.items()
        ]
        if holdout
        else [],
        holdout_file=holdout.file if holdout else None,
        holdout_evaluated=holdout.counts.evaluated if holdout else 0,
        receipt=_receipt(report.receipt),
        max_listed=max_listed,
        judge_trust=trust_line(report.receipt.get("calibration"), report.settings.get("judge")),
        corrected=corrected_line(report.receipt.get("calibration")),
        advisory=[f"{f.message} (advisory; the judge: {f.advisory})" for f in result.failures if f.advisory],
    )
