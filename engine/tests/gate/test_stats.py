"""Properties of the gate's paired statistics (stats.py), checked with Hypothesis and against
independent brute-force computations written out here."""

from __future__ import annotations

import math
import sys
from itertools import product

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_regress.gate.stats import (
    bootstrap_ci,
    design_size,
    holm,
    lower_bound,
    max_t_drop_p,
    min_changed_questions,
    min_detectable_drop,
    sign_flip_p,
    tolerance_in_questions,
    tolerance_in_questions_per_metric,
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
    """One-sided (the gate asks about drops): the smallest p with m drops is 1 / 2**m."""
    m = min_changed_questions(alpha)
    assert 1 / 2**m <= alpha < 1 / 2 ** (m - 1)
    assert sign_flip_p([-1.0] * m, seed=0, resamples=100, alternative="less") <= alpha
    two = min_changed_questions(alpha, sided=2)
    assert 2 / 2**two <= alpha < 2 / 2 ** (two - 1)


@pytest.mark.parametrize("m", [1, 2, 5, 6])
def test_one_sided_p_of_m_drops_is_one_over_two_to_the_m_and_of_gains_is_one(m: int) -> None:
    drops = [-1.0] * m + [0.0] * 3
    assert sign_flip_p(drops, seed=0, resamples=100, alternative="less") == pytest.approx(1 / 2**m)
    assert sign_flip_p([-d for d in drops], seed=0, resamples=100, alternative="less") == 1.0


def test_minimum_detectable_drop_for_the_golden_set_size() -> None:
    """One-sided alpha 0.05 needs 5 questions: 5/51 = 0.098 for 51 questions; none with 4."""
    assert min_detectable_drop(51, 0.05) == pytest.approx(5 / 51)
    assert min_detectable_drop(4, 0.05) is None


def brute_force_max_t(deltas: list[list[float]]) -> tuple[list[float], list[float]]:
    """Westfall-Young max-T step-down written out over every sign pattern (questions x metrics)."""
    cleaned = [[x if abs(x) > 1e-12 else 0.0 for x in r] for r in deltas]
    rows = [r for r in cleaned if any(x != 0.0 for x in r)]
    metrics = len(deltas[0])
    scale = [math.sqrt(sum(r[j] ** 2 for r in rows)) or math.inf for j in range(metrics)]
    if not rows:
        return [1.0] * metrics, [1.0] * metrics
    patterns = [
        [-sum(s * r[j] for s, r in zip(signs, rows, strict=True)) / scale[j] for j in range(metrics)]
        for signs in product((1, -1), repeat=len(rows))
    ]
    observed = [-sum(r[j] for r in rows) / scale[j] for j in range(metrics)]
    raw = [sum(1 for t in patterns if t[j] >= observed[j] - 1e-9) / len(patterns) for j in range(metrics)]
    order = sorted(range(metrics), key=lambda j: -observed[j])
    adjusted, running = [0.0] * metrics, 0.0
    for position, j in enumerate(order):
        rest = order[position:]
        share = sum(1 for t in patterns if max(t[k] for k in rest) >= observed[j] - 1e-9) / len(patterns)
        running = max(running, share)
        adjusted[j] = running
    return raw, adjusted


@settings(max_examples=30)
@given(st.lists(st.lists(delta, min_size=3, max_size=3), min_size=1, max_size=8))
def test_max_t_matches_brute_force_and_is_never_below_the_raw_p(deltas: list[list[float]]) -> None:
    raw, adjusted = max_t_drop_p(np.array(deltas), seed=1, resamples=100)
    want_raw, want_adjusted = brute_force_max_t(deltas)
    assert raw == pytest.approx(want_raw, abs=1e-9) and adjusted == pytest.approx(want_adjusted, abs=1e-9)
    assert all(r <= a + 1e-12 for r, a in zip(raw, adjusted, strict=True))


def test_max_t_of_perfectly_correlated_metrics_costs_nothing_while_holm_pays() -> None:
    """Three metrics that move together on the same 6 questions: max-T leaves p = 1/64;
    Holm multiplies it by 3."""
    deltas = np.array([[-1.0, -0.5, -0.25]] * 6 + [[0.0, 0.0, 0.0]] * 20)
    raw, adjusted = max_t_drop_p(deltas, seed=1, resamples=100)
    assert raw == pytest.approx([1 / 64] * 3) and adjusted == pytest.approx([1 / 64] * 3)
    assert holm(raw) == pytest.approx([3 / 64] * 3)


def test_lower_bound_is_the_one_sided_student_t_bound() -> None:
    values = [0.1, -0.2, 0.0, 0.05, -0.1]
    mean, sd = float(np.mean(values)), float(np.std(values, ddof=1))
    want = mean - scipy.stats.t.ppf(0.95, 4) * sd / math.sqrt(5)
    assert lower_bound(values, 0.05) == pytest.approx(want)
    assert lower_bound([0.3], 0.05) == -math.inf  # one question shows nothing: fail closed


def test_design_size_is_the_normal_approximation_rounded_up() -> None:
    """((1.645 + 1.645) * 0.1 / 0.02) ** 2 = 270.6 -> 271 questions at alpha 0.05, power 0.95."""
    assert design_size(0.1, 0.02, 0.05, 0.95) == 271
    assert design_size(0.1, 0.04, 0.05, 0.95) == 68  # twice the tolerance: a quarter of the questions
    assert design_size(0.0, 0.02, 0.05, 0.95) == 2
    assert design_size(0.1, 0.0, 0.05, 0.95) is None


def test_tolerance_in_questions_says_when_one_flip_crosses_it() -> None:
    text = tolerance_in_questions(0.02, 51)
    assert text.startswith("a drop of 0.02 on 51 questions is 1.0 question(s)")
    assert "1 flipped question(s) (0.020) stay within it, 2 (0.039) cross it" in text


def test_tolerance_in_questions_uses_each_metrics_own_denominator() -> None:
    """Faithfulness is a mean over the 48 answered questions, not the 51 evaluated: there 0.02
    is 0.96 question(s), so no flip stays within it (one is 1/48 = 0.021)."""
    text = tolerance_in_questions_per_metric(0.02, {"recall@5": 51, "abstention": 60, "faithfulness": 48})
    assert (
        "1.0 question(s) on the 51 questions of recall@5 (1 flipped question(s) (0.020) stay within" in text
    )
    assert "1.2 question(s) on the 60 questions of abstention (1 flipped question(s) (0.017)" in text
    assert (
        "0.96 question(s) on the 48 questions of faithfulness "
        "(0 flipped question(s) (0.000) stay within it, 1 (0.021) cross it)"
    ) in text
    # One denominator for all: the one sentence, as before.
    same = tolerance_in_questions_per_metric(0.02, {"recall@5": 51, "mrr": 51})
    assert same == tolerance_in_questions(0.02, 51)


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
