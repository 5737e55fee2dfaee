"""The gate's rules for answers: same judge as the baseline, and no newly failing answer check.

Called by gate.compare. A question fails an answer check ([gate.checks]: abstention,
key_facts, faithfulness) when its value is below the threshold; it breaks the gate when it
passed that check in the baseline. Checks that do not apply to a question (key facts of an
unanswerable one, faithfulness of an abstention) are null and never fail.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..errors import EvalInputError
from ..inputs.reports import QuestionResult, Report
from ..settings.config import StatsSettings
from .significance import OVERALL, PairedTest, compare_paired

REMAKE = "remake the baseline with `nox -s baseline` (review its diff) and commit it"


def require_same_judge(report: Report, baseline: Report, baseline_path: Path) -> None:
    """Refuse (EvalInputError, exit 2) to compare verdicts of different judges."""
    now = report.settings.get("judge")
    before = baseline.settings.get("judge")
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


def _check_rows(report: Report, check: str) -> Report:
    """`report` with one row per question where answer check `check` applies, holding only
    that check as its metric, so one paired test per check compares like with like."""
    rows = [
        replace(row, tags=[], metrics={check: value})
        for row in report.questions
        if row.answer is not None and (value := row.answer.check(check)) is not None
    ]
    return replace(report, questions=rows)


def answer_tests(
    report: Report,
    baseline: Report,
    checks: list[str],
    tolerance: float,
    stats: StatsSettings,
) -> list[PairedTest]:
    """The paired test of each gated answer check, overall: the same sign-flip test as the
    retrieval metrics, over the questions where the check applies in both reports
    (abstention: all; key facts: answerable; faithfulness: answered in both). Each check is
    tested on its own, like a floor, so its p is not Holm-corrected (p_holm is its own p)."""
    found = []
    for check in checks:
        now, before = _check_rows(report, check), _check_rows(baseline, check)
        tests = compare_paired(now, before, [check], tolerance, stats).tests
        found += [test for test in tests if test.scope == OVERALL]
    return found


def answer_message(test: PairedTest, tolerance: float, alpha: float) -> str:
    """How a drop of an answer check is described (as a regression or as a note)."""
    return (
        f"{test.metric} dropped {test.baseline:.3f} -> {test.now:.3f} ({test.delta:+.3f}, "
        f"CI [{test.ci_low:+.3f}, {test.ci_high:+.3f}]; n={test.n}; p={test.p:.4f}; "
        f"tolerance {tolerance:.3f}, alpha {alpha:g})"
    )


def newly_failing_answers(
    report: Report, baseline: Report, checks: dict[str, float]
) -> list[tuple[QuestionResult, list[str], tuple[str, ...]]]:
    """(question, what broke, details) for each question with an answer check that passed
    in the baseline and fails now."""
    old = {row.id: row.answer for row in baseline.questions}
    found = []
    for row in report.questions:
        answer, before = row.answer, old.get(row.id)
        if answer is None or before is None:
            continue
        broken = []
        for name, threshold in checks.items():
            was, value = before.check(name), answer.check(name)
            if was is not None and value is not None and was >= threshold > value:
                broken.append(f"{name} {was:.3f} -> {value:.3f} (passes at >= {threshold:g})")
        if broken:
            details = []
            if answer.abstained != before.abstained:
                details.append("abstained now" if answer.abstained else "answered now, abstained before")
            if answer.missing_facts and "key_facts" in checks:
                details.append("missing key facts: " + "; ".join(repr(f) for f in answer.missing_facts))
            details += [f"unsupported: {u.claim!r} ({u.why})" for u in answer.unsupported]
            details.append(f"contexts now: {' '.join(answer.contexts) or '(none)'}")
            found.append((row, broken, tuple(details)))
    return found
