"""The gate's rules for answers: same judge as the baseline, and how a newly failing answer
is described.

Called by gate.compare. A question fails an answer check ([gate.checks]: abstention,
key_facts, faithfulness, correctness ...: answers/settings.ANSWER_CHECKS) when its value is
below the threshold; a check it passed in the baseline and fails now is a flip (flips.py),
which fails the gate by [gate] flip_rule: beyond the check's [gate.allowed_flips] ("strict"),
or on a net loss of questions ("net", for a model that rewords). Checks that do not apply to a
question (key facts of an unanswerable one, faithfulness of an abstention) are null and
never fail.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import EvalInputError
from ..inputs.reports import AnswerResult, Report

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
    if before.get("version") is None and now.get("version") is not None:
        raise EvalInputError(
            baseline_path,
            f"the baseline records no judge version (judged before rag-regress 1.0.0); this run's "
            f"{now.get('name')} judge is version {now.get('version')}",
            REMAKE,
        )
    keys = [*now, *(key for key in before if key not in now)]  # a setting one side lacks differs too
    changed = [
        f"{key} {before.get(key)!r} -> {now.get(key)!r}" for key in keys if before.get(key) != now.get(key)
    ]
    if changed:
        raise EvalInputError(
            baseline_path,
            "the baseline was judged by a different judge (" + "; ".join(changed) + "): "
            "faithfulness scores of two judges are not comparable",
            REMAKE,
        )


def answer_details(
    answer: AnswerResult, before: AnswerResult | None, checks: dict[str, float], why_abstained: str = ""
) -> tuple[str, ...]:
    """What changed in an answer that newly fails a check: abstention (with `why_abstained`,
    the setting behind it), missing key facts, each unsupported sentence and why, and the
    contexts it was judged against."""
    details = []
    if before is not None and answer.abstained != before.abstained:
        abstained = f"abstained now ({why_abstained})" if why_abstained else "abstained now"
        details.append(abstained if answer.abstained else "answered now, abstained before")
    if answer.missing_facts and "key_facts" in checks:
        details.append("missing key facts: " + "; ".join(repr(f) for f in answer.missing_facts))
    details += [f"unsupported: {u.claim!r} ({u.why})" for u in answer.unsupported]
    details += answer.wrong()
    details.append(f"contexts now: {' '.join(answer.contexts) or '(none)'}")
    return tuple(details)
