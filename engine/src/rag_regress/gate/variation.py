"""How much each question varies over the repeats of a stochastic run ([gate] stochastic and
repeats): the measured flakiness a team needs to see before it trusts a per-question verdict.

For question q, run R times:
  passes[c]   for each per-question check c of [gate.checks] (passes when value >= threshold):
              the share of the runs with a value in which q passes c
  spread[m]   for each metric and answer check with a value in every run: the sample standard
              deviation of q's values over the runs (0 for a question that never moves)
  score       max over the checks of 2 x min(passes, 1 - passes): 0 when every run gives the
              same verdict, 1 when half the runs pass; 0 without a check
A question is recorded only when it varies (score > 0 or a spread > 0), so a steady run adds
nothing to its report. `[gate] max_variation` leaves out of the per-question checks and the
paired tests the questions whose score at the baseline exceeds it (gate/rules.py), naming them.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .findings import Findings

if TYPE_CHECKING:
    from .context import GateContext

PASSES, SPREAD, SCORE = "passes", "spread", "score"


def question_variation(
    values: Mapping[str, Sequence[float | None]], checks: Mapping[str, float]
) -> dict[str, Any] | None:
    """One question's variation (module doc) from its values per metric over the runs (None
    where a run gave none); None when it does not vary."""
    passes = {}
    for check, threshold in checks.items():
        seen = [value for value in values.get(check, ()) if value is not None]
        if seen:
            passes[check] = sum(value >= threshold for value in seen) / len(seen)
    spread = {}
    for name, series in values.items():
        if len(series) > 1 and all(value is not None for value in series):
            sd = statistics.stdev([float(value) for value in series if value is not None])
            if sd > 0:
                spread[name] = sd
    score = max((2 * min(share, 1 - share) for share in passes.values()), default=0.0)
    if score == 0 and not spread:
        return None
    return {SCORE: score, PASSES: {k: v for k, v in passes.items() if 0 < v < 1}, SPREAD: spread}


def describe(entry: Mapping[str, Any], repeats: int) -> str:
    """'faithfulness passes in 2 of 5 runs; recall@5 sd 0.210': what varies, most first."""
    parts = [
        f"{check} passes in {round(share * repeats)} of {repeats} runs"
        for check, share in sorted(entry.get(PASSES, {}).items(), key=lambda item: abs(item[1] - 0.5))
    ]
    parts += [
        f"{name} sd {sd:.3f}" for name, sd in sorted(entry.get(SPREAD, {}).items(), key=lambda item: -item[1])
    ]
    return "; ".join(parts[:4]) + ("; ..." if len(parts) > 4 else "")


def most_variable(stochastic: Mapping[str, Any] | None, limit: int) -> list[str]:
    """The `limit` most variable questions of a report's stochastic section, one line each,
    highest score first (then the largest spread, then the id)."""
    recorded = (stochastic or {}).get("variation") or {}
    repeats = int((stochastic or {}).get("repeats") or 0)

    def order(item: tuple[str, Mapping[str, Any]]) -> tuple[float, float, str]:
        qid, entry = item
        return (-float(entry.get(SCORE, 0)), -max(entry.get(SPREAD, {}).values(), default=0.0), qid)

    return [
        f"{qid} (variation {entry.get(SCORE, 0):.2f}): {describe(entry, repeats)}"
        for qid, entry in sorted(recorded.items(), key=order)[:limit]
    ]


def flaky_at_baseline(stochastic: Mapping[str, Any] | None, limit: float | None) -> dict[str, str]:
    """The questions whose variation score at the baseline exceeds `limit`, each with what
    varied; none without a limit or a recorded variation."""
    if limit is None:
        return {}
    recorded = (stochastic or {}).get("variation") or {}
    repeats = int((stochastic or {}).get("repeats") or 0)
    return {
        qid: describe(entry, repeats)
        for qid, entry in sorted(recorded.items())
        if float(entry.get(SCORE, 0)) > limit
    }


class Variation:
    """Notes: the questions left out of the per-question checks and paired tests as too
    variable at the baseline ([gate] max_variation; context.flaky), and this run's most
    variable questions."""

    name = "variation"

    def findings(self, context: GateContext) -> Findings:
        notes = []
        if flaky := context.flaky:
            notes.append(
                f"{len(flaky)} question(s) left out of the per-question checks and paired tests, "
                f"too variable at the baseline ([gate] max_variation {context.gate.max_variation:g}): "
                + "; ".join(f"{qid} ({why})" for qid, why in flaky.items())
            )
        if varied := most_variable(context.report.settings.get("stochastic"), 3):
            notes.append("most variable questions this run: " + "; ".join(varied))
        return Findings(notes=notes)
