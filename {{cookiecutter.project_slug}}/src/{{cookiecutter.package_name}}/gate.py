"""Compare a fresh report with the committed baseline and decide whether quality held.

The gate fails (exit 3) when
  (a) floor:         an aggregate metric is below its absolute floor ([gate.floors]);
  (b) regression:    a gated aggregate dropped more than `tolerance` below the baseline;
  (c) newly failing: a question fails a per-question check ([gate.checks]: passes when its
                     value >= the threshold) that it passed in the baseline;
  (d) must-pass:     a must-pass question retrieves no relevant document in the top k,
                     whatever the baseline says.
Answer checks (abstention, key_facts, faithfulness) take part in (a)-(c) by name; their
per-question rule lives in answer_gate.py.
It refuses to compare (exit 2) when the baseline lacks a metric the gate needs, or was
judged by a different judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .answer_gate import newly_failing_answers, require_same_judge
from .config import GateSettings
from .errors import EvalInputError

# Floating-point slack, so that identical numbers computed in another order never fail.
EPSILON = 1e-9


@dataclass(frozen=True)
class Failure:
    kind: str  # "floor", "regression", "newly failing", "must-pass" or both of the last two
    subject: str  # a metric name, or a question id
    message: str
    details: tuple[str, ...] = ()


@dataclass
class GateResult:
    summary: list[tuple[str, float | None, float, float | None]]  # metric, baseline, now, floor
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


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
    report: dict[str, Any], baseline: dict[str, Any], gate: GateSettings, baseline_path: Path
) -> GateResult:
    """Apply the gate's four rules to `report` against `baseline`."""
    require_same_judge(report, baseline, baseline_path)
    needed = [str(m) for m in gate.metrics]
    missing = [name for name in needed if name not in (baseline.get("aggregate") or {})]
    if missing:
        raise EvalInputError(
            baseline_path,
            f"the baseline has no value for {', '.join(missing)} (it was made with other settings)",
            "remake it with `nox -s baseline` and commit it, so the comparison is like for like",
        )
    now, before = report["aggregate"], baseline["aggregate"]
    floors = {str(m): value for m, value in gate.floors.items()}
    shown = list(dict.fromkeys([*needed, *floors]))
    result = GateResult(summary=[(name, before.get(name), now[name], floors.get(name)) for name in shown])

    for name, floor in floors.items():
        if now[name] < floor - EPSILON:
            result.failures.append(
                Failure("floor", name, f"{name} = {now[name]:.3f} is below its floor {floor:.3f}")
            )
    for name in needed:
        drop = before[name] - now[name]
        if drop > gate.tolerance + EPSILON:
            result.failures.append(
                Failure(
                    "regression",
                    name,
                    f"{name} dropped {before[name]:.3f} -> {now[name]:.3f} "
                    f"(-{drop:.3f}; tolerance {gate.tolerance:.3f})",
                )
            )

    old_rows = {row["id"]: row for row in baseline["questions"] if isinstance(row, dict) and "id" in row}
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
            result.failures.append(
                Failure(", ".join(kinds), row["id"], f"{label}: " + "; ".join(reasons), _why(row, old, k))
            )

    for qid, message, details in newly_failing_answers(report, baseline, gate.answer_checks):
        result.failures.append(Failure("newly failing answer", qid, message, details))

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


def format_result(result: GateResult, tolerance: float) -> str:
    lines = [f"  {'metric':<12} {'baseline':>9} {'now':>7} {'delta':>7} {'floor':>6}"]
    failing = {f.subject for f in result.failures if f.kind in ("floor", "regression")}
    for name, was, value, floor in result.summary:
        delta = "" if was is None else f"{value - was:+7.3f}"
        was_text = "-" if was is None else f"{was:.3f}"
        floor_text = "-" if floor is None else f"{floor:.3f}"
        mark = "FAIL" if name in failing else "ok"
        lines.append(f"  {name:<12} {was_text:>9} {value:7.3f} {delta:>7} {floor_text:>6}  {mark}")
    lines.append(f"  (an aggregate may drop at most {tolerance:.3f} below the baseline)")
    for note in result.notes:
        lines.append(f"note: {note}")
    if result.passed:
        lines.append("GATE PASSED")
        return "\n".join(lines)
    lines.append(f"GATE FAILED: {len(result.failures)} problem(s)")
    for failure in result.failures:
        lines.append(f"  [{failure.kind}] {failure.message}")
        lines.extend(f"      {detail}" for detail in failure.details)
    return "\n".join(lines)
