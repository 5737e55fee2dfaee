"""The stochastic rule, simulated: does non-inferiority over per-question means of repeats
keep its promises? Every trial draws a fresh baseline and a fresh candidate from a stochastic
stand-in, then applies the gate's own bound (stats.lower_bounds) and design size
(stats.design_size), vectorised over the trials.

The stand-in: a generator whose answer to question i passes a check with probability p_i
(p_i spread evenly over 0.3-0.9, the golden set fixed), run `REPEATS` times per question;
the unit is the share of passing runs. Its noise, the standard deviation of the delta of
two such means when nothing changed, is sqrt(mean_i 2 p_i (1 - p_i) / R): 0.29 with 5 runs.
At tolerance 0.02, alpha 0.05 and power 0.95 the design asks for 2,273 questions (the
number docs/statistics.md gives), 569 at tolerance 0.04.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rag_regress.gate.stats import design_size, lower_bounds

ALPHA, POWER, REPEATS, TRIALS = 0.05, 0.95, 5, 2000


def stand_in(n: int) -> np.ndarray:
    """The fixed golden set: each question's chance that one run passes the check."""
    return np.linspace(0.3, 0.9, n)


def noise(chances: np.ndarray) -> float:
    return math.sqrt(float(np.mean(2 * chances * (1 - chances) / REPEATS)))


def gate_fails(chances: np.ndarray, drop: float, tolerance: float, seed: int) -> np.ndarray:
    """TRIALS gate runs: a fresh baseline and a fresh candidate (worse by `drop` per question)
    each; True where the non-inferiority bound is not above -tolerance (the gate fails)."""
    rng = np.random.default_rng(seed)
    shape = (TRIALS, len(chances))
    baseline = rng.binomial(REPEATS, np.broadcast_to(chances, shape)) / REPEATS
    candidate = rng.binomial(REPEATS, np.broadcast_to(chances - drop, shape)) / REPEATS
    fails: np.ndarray = lower_bounds(candidate - baseline, ALPHA) <= -tolerance
    return fails


def within(rate: float, target: float) -> bool:
    """`rate` at most `target` plus three standard errors of a rate over TRIALS trials."""
    return rate <= target + 3 * math.sqrt(target * (1 - target) / TRIALS)


@pytest.mark.parametrize("tolerance", [0.02, 0.04])
def test_the_documented_size_and_its_error_rates(tolerance: float) -> None:
    """At the design size: an unchanged system fails at most 1 - power (= alpha) of the time
    (false alarms), a system worse by exactly the tolerance passes at most alpha of the time,
    and one worse by twice the tolerance is caught."""
    n = design_size(noise(stand_in(2000)), tolerance, ALPHA, POWER)
    assert n == {0.02: 2273, 0.04: 569}[tolerance]  # as docs/statistics.md says
    chances = stand_in(n)
    assert abs(noise(chances) - 0.29) < 0.01

    false_alarms = float(np.mean(gate_fails(chances, 0.0, tolerance, seed=1)))
    assert within(false_alarms, 1 - POWER), false_alarms

    passed_at_the_margin = 1 - float(np.mean(gate_fails(chances, tolerance, tolerance, seed=2)))
    assert within(passed_at_the_margin, ALPHA), passed_at_the_margin

    caught = float(np.mean(gate_fails(chances, 2 * tolerance, tolerance, seed=3)))
    assert caught >= 0.99, caught


def test_a_golden_set_too_small_to_tell_fails_closed() -> None:
    """51 questions (the demo's) cannot show non-inferiority at tolerance 0.02 with this noise:
    an unchanged system fails nearly nine times in ten instead of passing silently."""
    fails = float(np.mean(gate_fails(stand_in(51), 0.0, 0.02, seed=4)))
    assert fails >= 0.8, fails
