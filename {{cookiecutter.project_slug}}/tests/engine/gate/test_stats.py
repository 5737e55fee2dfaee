"""Properties of the gate's paired statistics (stats.py), checked with Hypothesis and against
independent brute-force computations written out here."""

from __future__ import annotations

import math
import sys
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from {{ cookiecutter.package_name }}.gate.stats import (
    bootstrap_ci,
    holm,
    min_changed_questions,
    min_detectable_drop,
    sign_flip_p,
)

# Per-question deltas of metrics in [0, 1] lie in [-1, 1]; many are exactly zero or +-1.
delta = st.one_of(st.sampled_from([0.0, 1.0, -1.0, 0.5, -0.5]), st.floats(-1, 1, allow_nan=False))
few = st.lists(delta, max_size=10)
pvalues = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=12)


def brute_force_p(deltas: list[float]) -> float:
    """Two-sided sign-flip p by enumerating every sign pattern of the non-zero deltas."""
    values = [d for d in deltas if abs(d) > 1e-12]
    if len(values) < 2:
        return 1.0
    observed = sum(values)
    sums = [
        sum(s * v for s, v in zip(signs, values, strict=True))
        for signs in product((1, -1), repeat=len(values))
    ]
    slack = 100 * sys.float_info.epsilon * abs(observed)  # equal in theory, not in float arithmetic
    greater = sum(1 for total in sums if total >= observed - slack) / len(sums)
    less = sum(1 for total in sums if total <= observed + slack) / len(sums)
    return min(1.0, 2 * min(greater, less))


@given(few)
def test_exact_p_matches_brute_force_enumeration(deltas: list[float]) -> None:
    assert sign_flip_p(deltas, seed=1, resamples=1000) == pytest.approx(brute_force_p(deltas), abs=1e-12)


@settings(max_examples=60)
@given(st.lists(delta, max_size=30), st.integers(0, 2**32 - 1))
def test_p_is_a_probability_and_symmetric_under_sign_flip(deltas: list[float], seed: int) -> None:
    """In (0, 1], for exact and Monte Carlo alike; flipping every sign changes nothing."""
    for exact_limit in (16, 4):  # 4: most lists go through the Monte Carlo branch
        p = sign_flip_p(deltas, seed=seed, resamples=500, exact_limit=exact_limit)
        flipped = sign_flip_p([-d for d in deltas], seed=seed, resamples=500, exact_limit=exact_limit)
        assert 0 < p <= 1
        assert p == pytest.approx(flipped, abs=1e-12)


@given(few, st.integers(0, 5))
def test_unchanged_questions_do_not_change_p(deltas: list[float], zeros: int) -> None:
    """Questions with delta 0 are identical under every flip: adding them leaves p alone."""
    assert sign_flip_p(deltas + [0.0] * zeros, seed=3, resamples=1000) == sign_flip_p(
        deltas, seed=3, resamples=1000
    )


@settings(max_examples=25)
@given(st.lists(delta.filter(lambda d: abs(d) > 1e-6), min_size=2, max_size=12), st.integers(0, 1000))
def test_exact_and_monte_carlo_agree(deltas: list[float], seed: int) -> None:
    """20000 random patterns estimate the exact p within 5 standard errors (+1/20001)."""
    exact = sign_flip_p(deltas, seed=seed, resamples=20000, exact_limit=16)
    sampled = sign_flip_p(deltas, seed=seed, resamples=20000, exact_limit=0)
    error = 5 * math.sqrt(exact * (1 - exact) / 20000) + 1 / 20001 + 1e-9
    assert abs(sampled - exact) <= 2 * error  # two-sided doubles the error of one tail


def test_monte_carlo_is_deterministic_for_a_seed() -> None:
    deltas = [-1.0] * 12 + [1.0] * 6 + [-0.5] * 5
    first = sign_flip_p(deltas, seed=7, resamples=3000, exact_limit=4)
    assert first == sign_flip_p(deltas, seed=7, resamples=3000, exact_limit=4)
    assert 0 < first < 1


@pytest.mark.parametrize("m", [1, 2, 5, 6, 10])
def test_m_drops_in_the_same_direction_give_p_two_over_two_to_the_m(m: int) -> None:
    """The smallest p with m changed questions; min_changed_questions inverts it."""
    assert sign_flip_p([-1.0] * m + [0.0] * 7, seed=0, resamples=100) == pytest.approx(min(1.0, 2 / 2**m))


@pytest.mark.parametrize("alpha", [0.2, 0.1, 0.05, 0.01, 0.001])
def test_min_changed_questions_is_the_fewest_that_can_reach_alpha(alpha: float) -> None:
    m = min_changed_questions(alpha)
    assert 2 / 2**m <= alpha < 2 / 2 ** (m - 1)
    assert sign_flip_p([-1.0] * m, seed=0, resamples=100) <= alpha


def test_minimum_detectable_drop_for_the_golden_set_size() -> None:
    """alpha 0.05 needs 6 questions: 6/51 = 0.118 for 51 questions; none with 5 questions."""
    assert min_detectable_drop(51, 0.05) == pytest.approx(6 / 51)
    assert min_detectable_drop(5, 0.05) is None


@settings(max_examples=40)
@given(st.lists(delta, min_size=1, max_size=25), st.integers(0, 1000))
def test_bootstrap_interval_brackets_the_mean_and_shifts_with_it(deltas: list[float], seed: int) -> None:
    low, high = bootstrap_ci(deltas, seed=seed, resamples=400)
    assert min(deltas) - 1e-9 <= low <= high <= max(deltas) + 1e-9
    assert bootstrap_ci(deltas, seed=seed, resamples=400) == (low, high)  # deterministic
    shifted = bootstrap_ci([d + 0.25 for d in deltas], seed=seed, resamples=400)
    assert shifted == pytest.approx((low + 0.25, high + 0.25), abs=1e-9)


def test_bootstrap_of_identical_deltas_is_a_point() -> None:
    assert bootstrap_ci([-0.5] * 4, seed=1, resamples=500) == (-0.5, -0.5)
    assert bootstrap_ci([], seed=1, resamples=500) == (0.0, 0.0)


def test_holm_on_a_worked_example() -> None:
    """p = 0.01, 0.04, 0.03, 0.005 -> sorted 0.005*4, 0.01*3, 0.03*2, 0.04*1 = .02 .03 .06 .06."""
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


@given(pvalues)
def test_holm_is_monotone_bounded_and_never_below_the_raw_p(raw: list[float]) -> None:
    adjusted = holm(raw)
    for i, p in enumerate(raw):
        assert p <= adjusted[i] <= 1
        assert adjusted[i] <= min(1.0, len(raw) * p) + 1e-12  # never worse than Bonferroni
        for j, q in enumerate(raw):
            if p <= q:
                assert adjusted[i] <= adjusted[j]
