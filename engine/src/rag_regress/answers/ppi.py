"""A prediction-powered estimate of a share: the judge's rate on every item, corrected by its
errors on the items people labelled (Angelopoulos et al., "Prediction-powered inference",
Science 2023; the estimate ARES reports).

With the judge's 0/1 verdicts f on all N items of a run, and on n labelled items both the
judge's verdict f_i and the person's label y_i:

    estimate  = mean(f over the N items) - mean(f_i - y_i over the n labelled ones)
    variance  = var(f over the N) / N + var(f_i - y_i over the n) / n
    interval  = estimate -/+ z * sqrt(variance), z = 1.96 for 95%, clipped to [0, 1]

The correction (the rectifier) removes the judge's bias as measured on the labels; the
interval carries both the run's sampling and the labels' (few labels: a wide interval). It
is valid whatever the judge's quality: a judge near chance gives an honest, wide interval
rather than a confident wrong rate. Edge cases: no labelled item, or fewer than two on
either side, gives None (no estimate without a measured correction); sample variances use
n - 1; a judge that agrees with every label has a rectifier of 0, and the interval then
comes from the run alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import sqrt
from statistics import NormalDist, fmean, variance


@dataclass(frozen=True)
class Estimate:
    raw: float  # the judge's rate on every item
    estimate: float  # corrected by its errors on the labelled items
    low: float
    high: float
    labelled: int  # n
    items: int  # N
    confidence: float


def prediction_powered(
    judged: Sequence[bool], labelled: Sequence[tuple[bool, bool]], confidence: float = 0.95
) -> Estimate | None:
    """The prediction-powered estimate of the share of true items (module doc): `judged` is
    the judge's verdict on every item, `labelled` the (judge, person) pairs on the labelled
    ones. None with fewer than two items on either side."""
    if len(judged) < 2 or len(labelled) < 2:
        return None
    rates = [float(v) for v in judged]
    errors = [float(judge) - float(person) for judge, person in labelled]
    raw = fmean(rates)
    estimate = raw - fmean(errors)
    spread = sqrt(variance(rates) / len(rates) + variance(errors) / len(errors))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    low, high = estimate - z * spread, estimate + z * spread
    return Estimate(raw, _share(estimate), _share(low), _share(high), len(labelled), len(judged), confidence)


def _share(value: float) -> float:
    """`value` within [0, 1]: a share stays a share."""
    return min(1.0, max(0.0, value))
