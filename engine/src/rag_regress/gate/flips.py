"""Flips: questions whose per-question check ([gate.checks]) changed between the baseline and
now, both ways, and the rule that decides whether a check's flips fail the gate.

A check passes when the question's value is >= its threshold: a retrieval metric (hit@k,
recall@k) or an answer check (abstention, key_facts, faithfulness). Questions the check does
not apply to (unanswerable ones for retrieval metrics, abstentions for faithfulness), in one
report only, or without a value in both are not flips. Of a check's flips, b newly fail and
c newly pass; both are always listed, so a reviewer sees what a change traded.

Two rules ([gate] flip_rule), for every check:
  strict  (the default) the check fails when b is above its allowance ([gate.allowed_flips],
          default 0), whatever c is. For a deterministic system (the stand-in, a fixed
          retriever), whose answers should not move: every newly failing question is a real
          change of that question.
  net     for a system whose answers change broadly (an LLM that rewords). The check fails
          when the change is a net loss:
            b - c > [gate] allowed_net_loss (a count, or a share of the questions the check
                    applies to, rounded down; default 0), or
            the exact one-sided sign test of the flips (flip_p: p = P(X >= b), X ~
                    Binomial(b + c, 1/2)), adjusted over the checks judged by the net rule by
                    the min-P step-down (stats.min_p_flips), is <= [stats] alpha.
          Otherwise it passes and its newly failing questions are listed for review (the
          gate's non-blocking failures).
Whatever the rule: a check of a part declared stochastic never fails here (its rule is
non-inferiority: listed only), nor does a check resting on a judge that has not earned its
place (answers/trust.py: advisory, listed only); a must-pass question that newly fails a
check always fails the gate (rules.py), as do floors.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..answers.settings import ANSWER_CHECKS
from ..answers.stand_in import abstention_hint
from ..inputs.reports import QuestionResult, Report
from ..settings.config import StatsSettings
from .answer_rules import answer_details
from .findings import ANSWER, RETRIEVAL, Failure, Findings, question_failure, question_where
from .flipped import NET, STRICT, CheckFlips, Flip
from .stats import min_p_flips

if TYPE_CHECKING:
    from .context import GateContext


def check_value(row: QuestionResult, check: str) -> float | None:
    """The row's value for `check`; None where the check does not apply."""
    if check in ANSWER_CHECKS:
        return row.answer.check(check) if row.answer is not None else None
    return None if row.metrics is None else row.metrics.get(check)


def _count(limit: int | float, applicable: int) -> int:
    """An allowance as a count: an int as it is, a share of `applicable` rounded down."""
    return limit if isinstance(limit, int) else int(limit * applicable + 1e-9)


def find_flips(
    report: Report,
    baseline: Report,
    checks: dict[str, float],
    allowed: dict[str, int | float],
    stochastic: set[str],
    rule: str = STRICT,
    allowed_net_loss: int | float = 0,
    stats: StatsSettings | None = None,
    advisory: dict[str, str] | None = None,
) -> list[CheckFlips]:
    """Every check's flips both ways, judged by `rule` (module docstring). `allowed` maps a
    check to a count (int) or a share of its applicable questions (float, rounded down), as
    does `allowed_net_loss` for every check under the net rule; `stochastic` checks never
    block, nor do `advisory` ones (check -> why: its judge has not earned it); `stats` gives
    the net rule's alpha and patterns (default [stats])."""
    advisory = advisory or {}
    old = {row.id: row for row in baseline.questions}
    found = []
    for check, threshold in checks.items():
        failing, passing, applicable = [], [], 0
        for row in report.questions:
            before = old.get(row.id)
            was = check_value(before, check) if before is not None else None
            now = check_value(row, check)
            if before is None or was is None or now is None:
                continue
            applicable += 1
            if was >= threshold > now:
                failing.append(Flip(check, row, before, was, now, threshold))
            elif now >= threshold > was:
                passing.append(Flip(check, row, before, was, now, threshold))
        count = _count(allowed.get(check, 0), applicable)
        why = advisory.get(check, "")
        blocking = check not in stochastic and not why
        found.append(CheckFlips(check, applicable, count, failing, passing, blocking, advisory=why))
    if rule != NET:
        return found
    return net_tested(found, allowed_net_loss, stats or StatsSettings())


def net_tested(
    found: list[CheckFlips], allowed_net_loss: int | float, stats: StatsSettings
) -> list[CheckFlips]:
    """`found` judged by the net rule: each check's allowance, and its exact p adjusted over
    the family of the checks that can fail (the stochastic ones are listed, not tested)."""
    family = [flips for flips in found if flips.blocking]
    ids = list(dict.fromkeys(flip.row.id for flips in family for flip in [*flips.failing, *flips.passing]))
    where = {qid: i for i, qid in enumerate(ids)}
    changes = np.zeros((len(ids), len(family)))
    for j, flips in enumerate(family):
        for flip in flips.failing:
            changes[where[flip.row.id], j] = -1.0
        for flip in flips.passing:
            changes[where[flip.row.id], j] = 1.0
    raw, adjusted = min_p_flips(
        changes, seed=stats.seed, resamples=stats.resamples, exact_limit=stats.exact_limit
    )
    tested = {flips.check: (p, q) for flips, p, q in zip(family, raw, adjusted, strict=True)}
    return [
        replace(
            flips,
            rule=NET,
            allowed_net_loss=_count(allowed_net_loss, flips.applicable),
            p=tested.get(flips.check, (None, None))[0],
            p_adjusted=tested.get(flips.check, (None, None))[1],
            alpha=stats.alpha,
        )
        for flips in found
    ]


class NewlyFailing:
    """Rule (c), and (d) for checks: each question newly failing a check, blocking when the
    check's flips fail by its rule (CheckFlips.over) or the question is must-pass (a check not
    of a stochastic part, nor advisory); otherwise listed for review. A retrieval check's
    failure shows where the relevant documents rank, an answer check's what changed in the
    answer."""

    name = "flips"

    def findings(self, context: GateContext) -> Findings:
        failures: list[Failure] = []
        hint = abstention_hint(context.report)  # the setting behind abstentions, if the stand-in made them
        checks, k = context.gate.thresholds, context.report.k
        for flips in context.flips:
            for flip in flips.failing:
                row = flip.row
                # A must-pass question is never traded for others, whatever the rule or allowance.
                must = row.must_pass and flips.blocking
                reason = flip.reason
                if must and not flips.over:
                    reason += "; must-pass: fails whatever the flip rule allows"
                blocking = flips.over or must
                if flips.check not in ANSWER_CHECKS:
                    details = question_where(row, flip.before, k)
                    failure = question_failure("newly failing", row, [reason], details, blocking, RETRIEVAL)
                    failures.append(failure)
                elif row.answer is not None:
                    details = answer_details(row.answer, flip.before.answer, checks, hint)
                    failures.append(
                        question_failure("newly failing answer", row, [reason], details, blocking, ANSWER)
                    )
        return Findings(failures)
