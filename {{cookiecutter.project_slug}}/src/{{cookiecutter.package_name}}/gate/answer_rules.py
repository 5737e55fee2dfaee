"""The gate's rules for answers: same judge as the baseline, and no newly failing answer check.

Called by gate.compare. A question fails an answer check ([gate.checks]: abstention,
key_facts, faithfulness) when its value is below the threshold; it breaks the gate when it
passed that check in the baseline. Checks that do not apply to a question (key facts of an
unanswerable one, faithfulness of an abstention) are null and never fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import EvalInputError
from ..settings.config import StatsSettings
from .significance import compare_paired

REMAKE = "remake the baseline with `nox -s baseline` (review its diff) and commit it"


def require_same_judge(report: dict[str, Any], baseline: dict[str, Any], baseline_path: Path) -> None:
    """Refuse (EvalInputError, exit 2) to compare verdicts of different judges."""
    now = report["settings"].get("judge")
    before = baseline.get("settings", {}).get("judge")
    if now is None:  # a report without answers (made by hand): nothing to compare
        return
    if before is None:
        raise EvalInputError(
            baseline_path, "the baseline records no judge (it predates answer checks)", REMAKE
        )
    changed = [
        f"{key} {before.get(key)!r} -> {now.get(key)!r}" for key in now if before.get(key) != now.get(key)
    ]
    if changed:
        raise EvalInputError(
            baseline_path,
            "the baseline was judged by a different judge (" + "; ".join(changed) + "): "
            "faithfulness scores of two judges are not comparable",
            REMAKE,
        )


def answer_regressions(
    report: dict[str, Any],
    baseline: dict[str, Any],
    checks: list[str],
    tolerance: float,
    stats: StatsSettings,
) -> list[tuple[str, str, bool]]:
    """(check, message, is a regression) for each gated answer check that dropped more than
    the tolerance: the same paired sign-flip test as retrieval metrics, over the questions
    where the check applies in both reports (abstention: all; key facts: answerable;
    faithfulness: answered in both). Each check is tested on its own, like a floor."""
    if not checks:
        return []

    def rows(source: dict[str, Any]) -> list[dict[str, Any]]:
        # One metrics dict per question holding only checks that apply, so one paired test
        # per check compares like with like.
        return [
            {"id": row["id"], "tags": [], "metrics": {c: row["answer"][c] for c in checks}}
            for row in source["questions"]
            if isinstance(row, dict) and isinstance(row.get("answer"), dict)
        ]

    found = []
    for check in checks:
        now = [r for r in rows(report) if r["metrics"][check] is not None]
        before = [r for r in rows(baseline) if r["metrics"].get(check) is not None]
        comparison = compare_paired({"questions": now}, {"questions": before}, [check], tolerance, stats)
        for test in comparison.tests:
            if test.delta < 0 and test.beyond_tolerance:
                message = (
                    f"{check} dropped {test.baseline:.3f} -> {test.now:.3f} ({test.delta:+.3f}, "
                    f"CI [{test.ci_low:+.3f}, {test.ci_high:+.3f}]; n={test.n}; p={test.p:.4f}; "
                    f"tolerance {tolerance:.3f}, alpha {comparison.alpha:g})"
                )
                found.append((check, message, test.regression))
    return found


def newly_failing_answers(
    report: dict[str, Any], baseline: dict[str, Any], checks: dict[str, float]
) -> list[tuple[str, str, tuple[str, ...]]]:
    """(question id, message, details) for each question with an answer check that passed
    in the baseline and fails now."""
    old = {row.get("id"): row.get("answer") for row in baseline["questions"] if isinstance(row, dict)}
    found = []
    for row in report["questions"]:
        answer, before = row.get("answer"), old.get(row["id"])
        if not answer or not before:
            continue
        broken = []
        for name, threshold in checks.items():
            was, value = before.get(name), answer[name]
            if was is not None and value is not None and was >= threshold > value:
                broken.append(f"{name} {was:.3f} -> {value:.3f} (passes at >= {threshold:g})")
        if broken:
            details = []
            if answer["abstained"] != before.get("abstained"):
                details.append("abstained now" if answer["abstained"] else "answered now, abstained before")
            if answer["missing_facts"] and "key_facts" in checks:
                details.append("missing key facts: " + "; ".join(repr(f) for f in answer["missing_facts"]))
            details += [f"unsupported: {u['claim']!r} ({u['why']})" for u in answer["unsupported"]]
            details.append(f"contexts now: {' '.join(answer['contexts']) or '(none)'}")
            found.append(
                (row["id"], f'{row["id"]} "{row["question"]}": ' + "; ".join(broken), tuple(details))
            )
    return found
