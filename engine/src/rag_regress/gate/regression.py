"""Rule (b): a gated metric ([gate] metrics) that regressed, overall or on a tag, by its rule
(significance.py): beyond the tolerance (deterministic parts), not shown non-inferior
(stochastic parts), or, on a tag, beyond the tolerance and significant.

A tag's drop beyond the tolerance that is not significant is a note, never a failure. Each
regression lists the questions behind the mean (drops.py); a check resting on an untrusted
judge is advisory, never blocking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .drops import question_moves
from .findings import Failure, Findings
from .significance import NON_INFERIORITY, OVERALL, SIGNIFICANCE, PairedTest
from .stats import format_p

if TYPE_CHECKING:
    from .context import GateContext


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


class Regressions:
    name = "regressions"

    def findings(self, context: GateContext) -> Findings:
        found = Findings()
        alpha = context.stats.alpha
        n_evaluated = context.report.counts.evaluated
        for test in context.comparison.tests:
            subject = test.metric if test.scope == OVERALL else f"{test.metric} [{test.scope}]"
            if test.regression:
                message = regression_message(test, n_evaluated, alpha, context.figures(test))
                moves = question_moves(context.report, context.baseline, test.metric, test.scope)
                found.failures.append(
                    Failure(
                        "regression", subject, message, **context.behind(moves), **context.held(test.metric)
                    )
                )
            elif (
                test.rule == SIGNIFICANCE
                and test.beyond_tolerance
                and test.delta < 0
                and test.p_adjusted is not None
            ):
                found.notes.append(
                    "slice drop not significant, so not a regression: "
                    + regression_message(test, 0, alpha, context.figures(test))
                )
        return found
