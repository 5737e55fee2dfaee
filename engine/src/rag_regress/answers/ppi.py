"""A corrected estimate of a share the judge measures: the judge's verdict on every item of a
run, corrected by how often people agreed with each of its verdicts on the items they
labelled. This is prediction-powered inference (Angelopoulos et al., "Prediction-powered
inference", Science 2023; the estimate ARES reports) with the rectifier taken per verdict,
because `grade --answers` samples the labelled sentences stratified by the judge's verdict.

Each item i of the run has the judge's verdict f_i (1 supported, 0 not) and a weight w_i >= 0,
the weights summing to 1 (faithfulness: 1 / (the answer's judged sentences x the answered
questions), so the estimate is of the same per-question mean the report's aggregate is).
Of the n labelled items, n_v were given verdict v by the judge and a_v of those were labelled
supported by a person. With W_v the run's weight of verdict v and p_v = a_v / n_v:

    raw       = W_1                                   (the judge's own figure)
    estimate  = W_1 * p_1 + W_0 * p_0                 (what people would say, per verdict)
    variance  = sum over v of W_v^2 * q_v * (1 - q_v) / n_v,  q_v = (a_v + 2) / (n_v + 4)
    interval  = estimate -/+ z * sqrt(variance), z = 1.96 for 95%, clipped to [0, 1]

q_v is the Agresti-Coull centre: labels that all agree with the judge still leave an interval
(ten agreeing labels do not prove the next thousand agree). The run's items are the whole
population described (this run's answers), so only the labels' sampling is in the variance.
Valid whatever the judge's quality: a judge near chance gets a large correction and an honest
interval instead of a confident wrong rate. It assumes that, within a verdict, the labelled
items are like the run's (sampled from the same kind of answers). Edge cases: a verdict the run
holds (W_v > 0) with no labelled item of that verdict gives None (its correction is unknown),
as does a run with no weight; a verdict the run does not hold needs no label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import sqrt
from statistics import NormalDist


@dataclass(frozen=True)
class Estimate:
    raw: float  # the judge's figure: the weight of the items it found supported
    estimate: float  # corrected by people's agreement with each verdict on the labelled items
    low: float
    high: float
    labelled: int  # n
    items: int  # the run's items
    confidence: float


def prediction_powered(
    run: Sequence[tuple[bool, float]], labelled: Sequence[tuple[bool, bool]], confidence: float = 0.95
) -> Estimate | None:
    """The corrected share (module doc): `run` holds each item's (judge verdict, weight), the
    weights summing to 1; `labelled` the (judge verdict, person's label) pairs. None when a
    verdict the run holds has no labelled item, or the run has no weight."""
    total = sum(weight for _, weight in run)
    if total <= 0:
        return None
    estimate = variance = 0.0
    for verdict in (True, False):
        share = sum(weight for said, weight in run if said is verdict) / total
        labels = [person for said, person in labelled if said is verdict]
        if share == 0:
            continue
        if not labels:
            return None
        agreed = sum(labels)
        estimate += share * agreed / len(labels)
        centre = (agreed + 2) / (len(labels) + 4)
        variance += share**2 * centre * (1 - centre) / len(labels)
    raw = sum(weight for said, weight in run if said) / total
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    spread = z * sqrt(variance)
    return Estimate(
        raw,
        _share(estimate),
        _share(estimate - spread),
        _share(estimate + spread),
        len(labelled),
        len(run),
        confidence,
    )


def _share(value: float) -> float:
    """`value` within [0, 1]: a share stays a share."""
    return min(1.0, max(0.0, value))
