"""Compare a fresh report with the committed baseline and decide whether quality held.

The gate fails (exit 3) when
  (a) floor:         an aggregate metric is below its absolute floor ([gate.floors]), or a
                     tag's mean is below its slice floor ([gate.slices]);
  (b) regression:    a gated mean, overall or for a tag, dropped more than `tolerance` below
                     the baseline AND the drop is significant: paired sign-flip test on the
                     per-question deltas, Holm-corrected across metrics and slices, p <= alpha
                     (see significance.py). A drop that is not significant is a note;
  (c) must-pass:     a must-pass question retrieves no relevant document in the top k,
                     whatever the baseline says.
It lists, without failing on them alone, newly failing questions: a question that fails a
per-question check ([gate.checks]: passes when its value >= the threshold) it passed in the
baseline. One flipped question is noise until it is part of a significant drop.
It refuses to compare (exit 2) when the baseline lacks a metric the gate needs.
Answer checks (abstention, key_facts, faithfulness) take part by name: floors, and
regressions tested the same way over the questions each check applies to; newly failing
answers are listed like newly failing questions (answer_gate.py). It also refuses (exit 2)
a baseline judged by a different judge, model, revision or threshold.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EvalInputError
from ..settings.config import GateSettings, StatsSettings
from .answer_rules import answer_regressions, newly_failing_answers, require_same_judge
from .significance import OVERALL, Comparison, compare_paired

# Floating-point slack, so that identical numbers computed in another order never fail.
EPSILON = 1e-9


@dataclass(frozen=True)
class Failure:
    kind: str  # "floor", "regression", "newly failing", "must-pass" or both of the last two
    subject: str  # a metric name, or a question id
    message: str
    details: tuple[str, ...] = ()
    blocking: bool = True  # False: listed for review, does not fail the gate on its own


@dataclass
class GateResult:
    summary: list[tuple[str, float | None, float, float | None]]  # metric, baseline, now, floor
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    comparison: Comparison | None = None  # delta, CI and p per metric and slice

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
            "failures": [asdict(failure) for failure in self.failures],
            "notes": list(self.notes),
        }


def _rank(row: dict[str, Any], doc_id: str) -> int | None:
    for rank, (retrieved_id, _) in enumerate(row["retrieved"], start=1):
        if retrieved_id == doc_id:
            return rank
    return None


def _why(row: dict[str, Any], before: dict[str, Any] | None, k: int) -> tuple[str, ...]:
    """Where each relevant document ranks now (and in the baseline), and what came back."""

    def where(rank: int | None) -> str:
        return "not retrieved" if rank is None else f"rank {rank}"

    lines = []
    for doc_id, grade in sorted(row["relevant"].items(), key=lambda item: (-item[1], item[0])):
        now = where(_rank(row, doc_id))
        was = f"{where(_rank(before, doc_id))} -> " if before is not None else ""
        lines.append(f"relevant {doc_id} (grade {grade}): {was}{now}")
    top = [doc_id for doc_id, _ in row["retrieved"][:k]]
    lines.append(f"top {k} now: {' '.join(top) or '(nothing)'}")
    return tuple(lines)


def compare(
    report: dict[str, Any],
    baseline: dict[str, Any],
    gate: GateSettings,
    baseline_path: Path,
    stats: StatsSettings | None = None,
) -> GateResult:
    """Apply the gate's rules to `report` against `baseline` (`stats`: default [stats])."""
    require_same_judge(report, baseline, baseline_path)
    needed = [str(m) for m in gate.metrics if not isinstance(m, str)]  # retrieval: paired per question
    answer_metrics = [m for m in gate.metrics if isinstance(m, str)]  # answer checks: answer_gate.py
    missing = [name for name in [*needed, *answer_metrics] if name not in (baseline.get("aggregate") or {})]
    if missing:
        raise EvalInputError(
            baseline_path,
            f"the baseline has no value for {', '.join(missing)} (it was made with other settings)",
            "remake it with `nox -s baseline` and commit it, so the comparison is like for like",
        )
    now, before = report["aggregate"], baseline["aggregate"]
    floors = {str(m): value for m, value in gate.floors.items()}
    shown = list(dict.fromkeys([*needed, *answer_metrics, *floors]))
    result = GateResult(summary=[(name, before.get(name), now[name], floors.get(name)) for name in shown])

    for name, floor in floors.items():
        if now[name] < floor - EPSILON:
            result.failures.append(
                Failure("floor", name, f"{name} = {now[name]:.3f} is below its floor {floor:.3f}")
            )
    for tag, tag_floors in gate.slice_floors.items():
        piece = report["slices"].get(tag) or {}
        for metric, floor in tag_floors.items():
            value = (piece.get("metrics") or {}).get(str(metric))
            if value is None:
                result.notes.append(f"slice floor for tag {tag!r}: no evaluated question has that tag")
            elif value < floor - EPSILON:
                result.failures.append(
                    Failure(
                        "floor",
                        f"{metric} [{tag}]",
                        f"{metric} = {value:.3f} on tag {tag!r} "
                        f"({piece['evaluated']} questions) is below its slice floor {floor:.3f}",
                    )
                )

    old_rows = {row["id"]: row for row in baseline["questions"] if isinstance(row, dict) and "id" in row}
    for stored in old_rows.values():
        if stored.get("metrics") is not None and any(name not in stored["metrics"] for name in needed):
            raise EvalInputError(
                baseline_path,
                f"question {stored['id']!r} lacks a gated metric in the baseline",
                "remake it with `nox -s baseline` and commit it",
            )
    result.comparison = compare_paired(report, baseline, needed, gate.tolerance, stats or StatsSettings())
    for test in result.comparison.tests:
        where = "" if test.scope == OVERALL else f" on tag {test.scope!r}"
        numbers = (
            f"{test.metric}{where} dropped {test.baseline:.3f} -> {test.now:.3f} "
            f"({test.delta:+.3f}, {_ci(test)}; n={test.n}; p={_p(test.p)}, Holm p={_p(test.p_holm)}; "
            f"tolerance {gate.tolerance:.3f}, alpha {result.comparison.alpha:g})"
        )
        subject = test.metric if test.scope == OVERALL else f"{test.metric} [{test.scope}]"
        if test.regression:
            result.failures.append(Failure("regression", subject, numbers))
        elif test.delta < 0 and -test.delta > gate.tolerance + EPSILON and test.scope == OVERALL:
            result.notes.append(f"not significant, so not a regression: {numbers}")
    k = report["settings"]["k"]
    for row in report["questions"]:
        if row["metrics"] is None:
            continue
        old = old_rows.get(row["id"])
        kinds, reasons = [], []
        if row["must_pass"] and not row["found"]:
            kinds.append("must-pass")
            reasons.append(f"must-pass question found no relevant document in the top {k}")
        if old is not None and old.get("metrics") is not None:
            broken = []
            for metric, threshold in gate.checks.items():
                name = str(metric)
                if name not in old["metrics"]:
                    raise EvalInputError(
                        baseline_path,
                        f"question {row['id']!r} has no {name} in the baseline",
                        "remake it with `nox -s baseline` and commit it",
                    )
                was, value = old["metrics"][name], row["metrics"][name]
                if was >= threshold and value < threshold:
                    broken.append(f"{name} {was:.3f} -> {value:.3f} (passes at >= {threshold:g})")
            if broken:
                kinds.append("newly failing")
                reasons += broken
        if reasons:
            label = f'{row["id"]} "{row["question"]}"'
            message = f"{label}: " + "; ".join(reasons)
            blocking = "must-pass" in kinds
            result.failures.append(Failure(", ".join(kinds), row["id"], message, _why(row, old, k), blocking))

    for subject, numbers, regression in answer_regressions(
        report, baseline, answer_metrics, gate.tolerance, stats or StatsSettings()
    ):
        if regression:
            result.failures.append(Failure("regression", subject, numbers))
        else:
            result.notes.append(f"not significant, so not a regression: {numbers}")
    for qid, message, details in newly_failing_answers(report, baseline, gate.answer_checks):
        result.failures.append(Failure("newly failing answer", qid, message, details, blocking=False))

    added = [row["id"] for row in report["questions"] if row["id"] not in old_rows]
    removed = sorted(set(old_rows) - {row["id"] for row in report["questions"]})
    if added:
        result.notes.append(
            f"{len(added)} question(s) not in the baseline (not checked per question): {', '.join(added)}"
        )
    if removed:
        result.notes.append(
            f"{len(removed)} baseline question(s) no longer in the golden set: {', '.join(removed)}"
        )
    return result


def _ci(test: Any) -> str:
    return f"CI [{test.ci_low:+.3f}, {test.ci_high:+.3f}]"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def format_result(result: GateResult, tolerance: float) -> str:
    """What `gate` prints: per-metric delta, CI and p; slices; notes; the verdict and why."""
    comparison = result.comparison
    tests = {(t.scope, t.metric): t for t in comparison.tests} if comparison else {}
    header = (
        f"{'metric':<12} {'baseline':>9} {'now':>7} {'delta':>7} {'CI of delta':>17} {'p':>7} {'Holm p':>7}"
    )
    lines = [f"  {header} {'floor':>6}"]
    failing = {f.subject for f in result.problems if f.kind in ("floor", "regression")}
    for name, was, value, floor in result.summary:
        test = tests.get((OVERALL, name))
        delta = "" if was is None else f"{value - was:+7.3f}"
        ci = f"[{test.ci_low:+.3f}, {test.ci_high:+.3f}]" if test else ""
        p_raw, p_holm = (_p(test.p), _p(test.p_holm)) if test else ("", "")
        was_text = "-" if was is None else f"{was:.3f}"
        floor_text = "-" if floor is None else f"{floor:.3f}"
        mark = "FAIL" if name in failing else "ok"
        lines.append(
            f"  {name:<12} {was_text:>9} {value:7.3f} {delta:>7} {ci:>17} {p_raw:>7} {p_holm:>7} "
            f"{floor_text:>6}  {mark}"
        )
    if comparison:
        tested = sum(1 for t in comparison.tests if t.p_holm is not None)
        lines.append(
            f"  (regression = a drop of more than {tolerance:.3f} that is significant: paired sign-flip "
            f"test, Holm p <= {comparison.alpha:g} across {tested} tests of metrics and slices)"
        )
        lines += _slice_lines(comparison)
        lines += [f"warning: {warning}" for warning in comparison.warnings]
    for note in result.notes:
        lines.append(f"note: {note}")
    listed = [failure for failure in result.failures if not failure.blocking]
    if listed:
        lines.append(f"{len(listed)} newly failing question(s), not a failure on their own:")
        for failure in listed:
            lines.append(f"  [{failure.kind}] {failure.message}")
            lines.extend(f"      {detail}" for detail in failure.details)
    if result.passed:
        lines.append("GATE PASSED")
        return "\n".join(lines)
    lines.append(f"GATE FAILED: {len(result.problems)} problem(s)")
    for failure in result.problems:
        lines.append(f"  [{failure.kind}] {failure.message}")
        lines.extend(f"      {detail}" for detail in failure.details)
    return "\n".join(lines)


def _slice_lines(comparison: Comparison) -> list[str]:
    """Per tag: n and, per gated metric, the delta and its Holm p ('*' = significant)."""
    scopes = list(dict.fromkeys(t.scope for t in comparison.tests if t.scope != OVERALL))
    if not scopes:
        return []
    metrics = list(dict.fromkeys(t.metric for t in comparison.tests))
    tests = {(t.scope, t.metric): t for t in comparison.tests}
    width = max(len(scope) for scope in [*scopes, "tag"])
    lines = [
        "  Slices: delta (Holm p; * significant, - too small to test)",
        f"  {'tag':{width}} {'n':>4}  " + " ".join(f"{m:>18}" for m in metrics),
    ]
    for scope in scopes:
        cells = []
        for metric in metrics:
            test = tests[(scope, metric)]
            star = "*" if test.significant else " "
            cells.append(f"{test.delta:+.3f} ({_p(test.p_holm)}){star}".rjust(18))
        lines.append(f"  {scope:{width}} {tests[(scope, metrics[0])].n:>4}  " + " ".join(cells))
    return lines
