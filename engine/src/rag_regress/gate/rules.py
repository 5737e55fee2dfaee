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
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..answers.settings import ANSWER_CHECKS
from ..answers.stand_in import abstention_hint
from ..answers.trust import advisory_checks, changed_since
from ..errors import EvalInputError
from ..inputs.reports import QuestionResult, Report
from ..settings.config import GateSettings, StatsSettings
from .acceptance import must_pass_missed, not_lower
from .answer_rules import answer_details, require_same_judge
from .drops import QuestionMove, QuestionMoves, question_moves
from .flips import CheckFlips, find_flips
from .integrity import check_same_measurement
from .pooling import more_unjudged, pooling_note
from .significance import (
    NON_INFERIORITY,
    OVERALL,
    SIGNIFICANCE,
    PairedComparison,
    PairedTest,
    compare_paired,
    stochastic_metrics,
)
from .stats import format_p
from .variation import flaky_at_baseline, most_variable


@dataclass(frozen=True)
class Failure:
    kind: str  # "floor", "regression", "newly failing", "must-pass" or both of the last two
    subject: str  # a metric name, or a question id
    message: str
    details: tuple[str, ...] = ()
    blocking: bool = True  # False: listed for review, does not fail the gate on its own
    question: str = ""  # per-question failures: the question's text
    reasons: tuple[str, ...] = ()  # per-question failures: each check that failed
    # floors and regressions: the questions behind the mean, in the order to list them
    # (largest drop first; drops.py), and what they are or why there are none
    moves: tuple[QuestionMove, ...] = ()
    moves_note: str = ""
    # a check resting on a judge not trusted to gate (answers/trust.py): why; never blocking
    advisory: str = ""


def question_failure(
    kind: str, row: QuestionResult, reasons: list[str], details: tuple[str, ...], blocking: bool
) -> Failure:
    """A failure about one question: its id, text and every check that failed."""
    message = f'{row.id} "{row.question}": ' + "; ".join(reasons)
    return Failure(kind, row.id, message, details, blocking, row.question, tuple(reasons))


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
            "failures": [asdict(failure) for failure in self.failures],
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


def _why(row: QuestionResult, before: QuestionResult | None, k: int) -> tuple[str, ...]:
    """Where each relevant document ranks now (and in the baseline), and what came back."""

    def where(rank: int | None) -> str:
        return "not retrieved" if rank is None else f"rank {rank}"

    lines = []
    for doc_id, grade in sorted(row.relevant.items(), key=lambda item: (-item[1], item[0])):
        now = where(row.rank_of(doc_id))
        was = f"{where(before.rank_of(doc_id))} -> " if before is not None else ""
        lines.append(f"relevant {doc_id} (grade {grade}): {was}{now}")
    top = [doc_id for doc_id, _ in row.retrieved[:k]]
    lines.append(f"top {k} now: {' '.join(top) or '(nothing)'}")
    return tuple(lines)


def paired_subset(test: PairedTest, shown: tuple[float | None, float | None] | None) -> str:
    """'' when the paired means of `test` are the figures a table shows for its metric
    (`shown`: the baseline's and the report's aggregate, as printed to 3 decimals), else the
    subset they are over, named: ' over the 21 questions with a faithfulness value in both
    runs'. A mean over every question of each report and a mean over the questions paired
    (those with a value in both runs) differ when questions were added, removed, or the check
    applies to other questions now (faithfulness: the answered ones); one line must never show
    two figures for one metric without saying which is which."""
    if shown is not None and all(
        figure is not None and f"{figure:.3f}" == f"{mean:.3f}"
        for figure, mean in zip(shown, (test.baseline, test.now), strict=True)
    ):
        return ""
    return f" over the {test.n} questions with a {test.metric} value in both runs"


def regression_message(
    test: PairedTest,
    n_questions: int,
    alpha: float | None = None,
    shown: tuple[float | None, float | None] | None = None,
) -> str:
    """How a gated metric's drop is described, by its rule, with every number behind it. A
    slice's drop (the significance rule) says whether it is significant, at `alpha` when given.
    `shown`: the baseline's and the report's figures for the metric (or slice) the tables
    print; when the paired means differ from them, the message names the questions it is over
    (paired_subset). None: the message names them always."""
    where = "" if test.scope == OVERALL else f" on tag {test.scope!r}"
    stats = (
        f"CI [{test.ci_low:+.3f}, {test.ci_high:+.3f}]; n={test.n}; one-sided p={format_p(test.p)}, "
        f"adjusted p={format_p(test.p_adjusted)}"
    )
    subset = paired_subset(test, shown)
    moved = f"{test.metric}{where} {test.baseline:.3f} -> {test.now:.3f}{subset} ({test.delta:+.3f}"
    if test.rule == NON_INFERIORITY:
        bound = "none" if test.lower_bound is None else f"{test.lower_bound:+.3f}"
        need = f"; about {test.needed} questions would show it" if test.needed else ""
        return (
            f"{moved}): cannot show it is no worse than the baseline by more than {test.tolerance:g} "
            f"(lower bound {bound} of the delta <= -{test.tolerance:g}; {stats}{need})"
        )
    if test.rule == SIGNIFICANCE:
        at = "" if alpha is None else f" at alpha {alpha:g}"
        verdict = "and significant" if test.significant else "but not significant"
        return f"{moved}, beyond the tolerance {test.tolerance:g} {verdict}{at}; {stats})"
    worth = -test.delta * max(test.n, n_questions if test.n == 0 else test.n)
    return f"{moved}, beyond the tolerance {test.tolerance:g}: about {worth:.1f} question(s)' worth; {stats})"


def _stochastic_settings(report: Report, baseline: Report, baseline_path: Path) -> None:
    """Refuse (exit 2) a baseline made with other stochastic parts or repeats."""
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


def compare(
    report: Report,
    baseline: Report,
    gate: GateSettings,
    baseline_path: Path,
    stats: StatsSettings | None = None,
) -> GateResult:
    """Apply the gate's rules to `report` against `baseline` (`stats`: default [stats])."""
    stats = stats or StatsSettings()
    check_same_measurement(report.settings, baseline, baseline_path)  # same k and depth
    require_same_judge(report, baseline, baseline_path)
    _stochastic_settings(report, baseline, baseline_path)
    needed = [str(m) for m in gate.metrics if not isinstance(m, str)]  # retrieval metrics
    answer_metrics = [m for m in gate.metrics if isinstance(m, str)]  # answer checks
    missing = [name for name in [*needed, *answer_metrics] if name not in baseline.aggregate]
    if missing:
        raise EvalInputError(
            baseline_path,
            f"the baseline has no value for {', '.join(missing)} (it was made with other settings)",
            "remake it with `nox -s baseline` and commit it, so the comparison is like for like",
        )
    now, before = report.aggregate, baseline.aggregate
    floors = {str(m): value for m, value in gate.floors.items()}
    shown = list(dict.fromkeys([*needed, *answer_metrics, *floors]))
    result = GateResult(summary=[(name, before.get(name), now[name], floors.get(name)) for name in shown])
    # Questions too flaky at the baseline to compare one by one ([gate] max_variation): left out
    # of the per-question checks and the paired tests, named; floors still read every question.
    flaky = flaky_at_baseline(baseline.settings.get("stochastic"), gate.max_variation)
    paired_report, paired_baseline = report, baseline
    if flaky:
        paired_report = replace(report, questions=[r for r in report.questions if r.id not in flaky])
        paired_baseline = replace(baseline, questions=[r for r in baseline.questions if r.id not in flaky])
        result.notes.append(
            f"{len(flaky)} question(s) left out of the per-question checks and paired tests, too variable "
            f"at the baseline ([gate] max_variation {gate.max_variation:g}): "
            + "; ".join(f"{qid} ({why})" for qid, why in flaky.items())
        )
    if varied := most_variable(report.settings.get("stochastic"), 3):
        result.notes.append("most variable questions this run: " + "; ".join(varied))

    def behind(moves: QuestionMoves) -> dict[str, Any]:
        return {"moves": moves.moves, "moves_note": moves.note}

    calibration = report.receipt.get("calibration")
    advisory = advisory_checks(calibration)  # judge-based checks the judge has not earned

    def held(name: str) -> dict[str, Any]:
        """A failure of `name`'s: advisory (never blocking) when it rests on an untrusted judge."""
        why = advisory.get(name.split(" [", 1)[0], "")
        return {"blocking": not why, "advisory": why}

    if moved := changed_since(calibration, baseline.receipt.get("calibration")):
        result.notes.append(moved)
    corrected = (calibration or {}).get("faithfulness")
    for name, floor in floors.items():
        # faithfulness corrected by the team's labels is held by its interval's lower end
        by = corrected if name == "faithfulness" and isinstance(corrected, dict) else None
        if not_lower(floor, by["low"] if by is not None else now[name]):
            continue
        message = (
            f"faithfulness corrected by {by['labelled']} labels of your answers is {by['estimate']:.3f} "
            f"(95% {by['low']:.3f} to {by['high']:.3f}; the judge alone {now[name]:.3f}): its lower "
            f"end is below the floor {floor:.3f}"
            if by is not None
            else f"{name} = {now[name]:.3f} is below its floor {floor:.3f}"
        )
        moves = question_moves(report, baseline, name, OVERALL, floor)
        result.failures.append(Failure("floor", name, message, **behind(moves), **held(name)))
    for tag, tag_floors in gate.slice_floors.items():
        piece = report.slices.get(tag)
        for metric, floor in tag_floors.items():
            value = (piece.metrics or {}).get(str(metric)) if piece is not None else None
            if value is None:
                result.notes.append(f"slice floor for tag {tag!r}: no evaluated question has that tag")
            elif not not_lower(floor, value):
                result.failures.append(
                    Failure(
                        "floor",
                        f"{metric} [{tag}]",
                        f"{metric} = {value:.3f} on tag {tag!r} "
                        f"({piece.evaluated if piece else 0} questions) is below its slice floor {floor:.3f}",
                        **behind(question_moves(report, baseline, str(metric), tag, floor)),
                        **held(str(metric)),
                    )
                )

    old_rows = {row.id: row for row in baseline.questions}
    checks = {str(metric): value for metric, value in gate.all_checks.items()}
    for stored in old_rows.values():
        wanted = [*needed, *(str(metric) for metric in gate.checks)]  # retrieval, read per question
        if stored.metrics is not None and any(name not in stored.metrics for name in wanted):
            raise EvalInputError(
                baseline_path,
                f"question {stored.id!r} lacks a gated metric in the baseline",
                "remake it with `nox -s baseline` and commit it",
            )
    gated = [*needed, *answer_metrics]
    moving = stochastic_metrics(list(gate.stochastic), list(dict.fromkeys([*gated, *checks])))
    result.stochastic = [name for name in dict.fromkeys([*gated, *checks]) if name in moving]
    noise = (baseline.settings.get("stochastic") or {}).get("noise")
    result.comparison = compare_paired(
        paired_report,
        paired_baseline,
        gated,
        gate.tolerance,
        stats,
        moving,
        noise if isinstance(noise, dict) else None,
        gate.power,
    )
    n_evaluated = report.counts.evaluated

    def figures(test: PairedTest) -> tuple[float | None, float | None]:
        """The figures the tables print for the test's metric: aggregates, or the slice's."""
        if test.scope == OVERALL:
            return before.get(test.metric), now.get(test.metric)
        was, is_ = baseline.slices.get(test.scope), report.slices.get(test.scope)
        return (
            (was.metrics or {}).get(test.metric) if was is not None else None,
            (is_.metrics or {}).get(test.metric) if is_ is not None else None,
        )

    for test in result.comparison.tests:
        subject = test.metric if test.scope == OVERALL else f"{test.metric} [{test.scope}]"
        if test.regression:
            message = regression_message(test, n_evaluated, stats.alpha, figures(test))
            moves = question_moves(report, baseline, test.metric, test.scope)
            result.failures.append(
                Failure("regression", subject, message, **behind(moves), **held(test.metric))
            )
        elif (
            test.rule == SIGNIFICANCE
            and test.beyond_tolerance
            and test.delta < 0
            and test.p_adjusted is not None
        ):
            result.notes.append(
                "slice drop not significant, so not a regression: "
                + regression_message(test, 0, stats.alpha, figures(test))
            )
    result.answer_tests = [
        t for t in result.comparison.tests if t.scope == OVERALL and t.metric in answer_metrics
    ]

    result.flips = find_flips(
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
    k = report.k
    # The same must-pass rule as `compare`: no relevant document in the top k.
    found = {r.id: r.found for r in report.questions}
    missed = set(must_pass_missed([r.id for r in report.questions if r.must_pass], found))
    per_question: dict[str, dict[str, Any]] = {}
    for flips in result.flips:
        for flip in flips.failing:
            answer = flips.check in ANSWER_CHECKS
            entry = per_question.setdefault(
                flip.row.id, {"row": flip.row, "before": flip.before, "kinds": {}}
            )
            kind = "newly failing answer" if answer else "newly failing"
            # A must-pass question is never traded for others, whatever the rule or allowance.
            must = flip.row.must_pass and flips.blocking
            reason = flip.reason
            if must and not flips.over:
                reason += "; must-pass: fails whatever the flip rule allows"
            entry["kinds"].setdefault(kind, []).append((reason, flips.over or must))
    for row in report.questions:
        if row.id in missed and row.metrics is not None:
            entry = per_question.setdefault(row.id, {"row": row, "before": old_rows.get(row.id), "kinds": {}})
            reason = f"must-pass question found no relevant document in the top {k}"
            entry["kinds"] = {"must-pass": [(reason, True)], **entry["kinds"]}
    hint = abstention_hint(report)  # the setting behind abstentions, if the stand-in made them
    for row in report.questions:  # in report order
        if row.id not in per_question:
            continue
        before_row: QuestionResult | None = per_question[row.id]["before"]
        kinds: dict[str, list[tuple[str, bool]]] = per_question[row.id]["kinds"]
        retrieval = [reason for reason, _ in kinds.get("newly failing", [])]
        answers = [reason for reason, _ in kinds.get("newly failing answer", [])]
        if "must-pass" in kinds or retrieval:
            label = ", ".join(kind for kind in ("must-pass", "newly failing") if kind in kinds)
            reasons = [reason for reason, _ in kinds.get("must-pass", [])] + retrieval
            blocking = any(over for kind in ("must-pass", "newly failing") for _, over in kinds.get(kind, []))
            result.failures.append(question_failure(label, row, reasons, _why(row, before_row, k), blocking))
        if answers and row.answer is not None:
            blocking = any(over for _, over in kinds["newly failing answer"])
            details = answer_details(row.answer, before_row.answer if before_row else None, checks, hint)
            result.failures.append(question_failure("newly failing answer", row, answers, details, blocking))
    if pooled := more_unjudged(report, baseline):
        result.notes.append(pooling_note(pooled, report.k))
        result.pooling = [qid for qid, _, _ in pooled]
    added = [row.id for row in report.questions if row.id not in old_rows]
    removed = sorted(set(old_rows) - {row.id for row in report.questions})
    if added:
        result.notes.append(
            f"{len(added)} question(s) not in the baseline (not checked per question): {', '.join(added)}"
        )
    if removed:
        result.notes.append(
            f"{len(removed)} baseline question(s) no longer in the golden set: {', '.join(removed)}"
        )
    return result
