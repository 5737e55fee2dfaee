"""Paired statistics for the gate: is a change in a mean real, or the noise of a small golden set?

Every function here is pure and deterministic for a given seed. They work on per-question
deltas, `now - baseline` for the same question, because each question is its own control:
pairing removes the (large) differences between easy and hard questions.

  sign_flip_p         paired sign-flip randomisation test of "mean delta = 0" (two-sided)
  bootstrap_ci        paired bootstrap percentile interval of the mean delta
  holm                Holm's step-down correction of a family of p-values
  min_detectable_drop the smallest drop a test of n questions can ever call significant
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.stats

# Deltas closer to zero than this count as "no change" (metric values are sums of fractions,
# so an unchanged question can differ from its baseline by rounding noise).
ZERO = 1e-12


def _total(values: np.ndarray, axis: int = -1) -> np.ndarray:
    total: np.ndarray = np.sum(values, axis=axis)
    return total


def sign_flip_p(deltas: Sequence[float], *, seed: int, resamples: int, exact_limit: int = 16) -> float:
    """Two-sided p-value of the paired sign-flip test of "the change does nothing".

    Under that null hypothesis each question's delta is as likely to be +d as -d, so the
    p-value is the share of the 2**m sign patterns (m = non-zero deltas; zeros are unchanged
    by a flip) whose sum is at least as extreme as the observed sum (scipy's two-sided rule:
    twice the smaller tail, capped at 1).

    - m <= exact_limit: every pattern is enumerated; the p-value is exact.
    - m > exact_limit: `resamples` random patterns from numpy's generator seeded with `seed`;
      p = (1 + hits) / (1 + resamples), which is never 0.
    - Fewer than two non-zero deltas: p = 1 (one change alone is never evidence).

    Symmetric: p(deltas) == p([-d for d in deltas]). Always in (0, 1].
    """
    values = np.array([d for d in deltas if abs(d) > ZERO], dtype=float)
    if len(values) < 2:  # +d and -d are equally extreme: p = 1 (and scipy needs two values)
        return 1.0
    exact = len(values) <= exact_limit
    result = scipy.stats.permutation_test(
        (values,),
        _total,
        permutation_type="samples",  # one sample: permuting pairs = flipping signs
        vectorized=True,
        n_resamples=2 ** len(values) if exact else resamples,  # every pattern: scipy enumerates them
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(min(1.0, result.pvalue))


def bootstrap_ci(
    deltas: Sequence[float], *, seed: int, resamples: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Paired bootstrap percentile interval of the mean delta.

    Resample the questions with replacement `resamples` times (numpy's generator seeded with
    `seed`), take each resample's mean delta, and return its (1 - confidence) / 2 and
    (1 + confidence) / 2 percentiles (scipy.stats.bootstrap, percentile method). All deltas
    equal gives (d, d); no deltas gives (0, 0). With few questions a percentile interval is
    too narrow: read it next to the p-value, not instead of it.
    """
    values = np.asarray(deltas, dtype=float)
    if len(values) == 0:
        return (0.0, 0.0)
    if np.ptp(values) <= ZERO:  # nothing to resample: every resample has the same mean
        return (float(values[0]), float(values[0]))
    result = scipy.stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return (float(interval.low), float(interval.high))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order (Holm 1979, step-down).

    Sort ascending; the i-th smallest (i from 0) becomes max over j <= i of
    min(1, (n - j) * p_(j)). Rejecting where the adjusted p <= alpha controls the chance of
    any false alarm across the whole family at alpha, without assuming independence.
    Each adjusted p is >= its raw p; the order of the raw p-values is kept.
    """
    n = len(pvalues)
    order = sorted(range(n), key=lambda i: pvalues[i])
    adjusted = [0.0] * n
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (n - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


def min_changed_questions(alpha: float) -> int:
    """The fewest non-zero deltas with which the sign-flip test can reach p <= alpha.

    With m non-zero deltas the smallest two-sided p is 2 / 2**m (all of them the same sign),
    so m must be at least log2(2 / alpha): 6 questions at alpha = 0.05, 8 at 0.01.
    """
    return max(1, math.ceil(math.log2(2 / alpha) - 1e-12))


def min_detectable_drop(n: int, alpha: float) -> float | None:
    """Minimum detectable effect: the smallest drop in a mean over `n` questions that the test
    can ever call significant at `alpha`, for a 0-1 metric such as hit@k (a question moves by
    a whole point or not at all): min_changed_questions(alpha) / n.

    A drop smaller than this, for example one or two flipped questions, is never significant,
    whatever the tolerance says. None when n is below the number of questions needed.
    """
    needed = min_changed_questions(alpha)
    return None if n < needed else needed / n


def format_p(value: float | None) -> str:
    """A p-value as every output prints it: '-' when not tested, '<0.0001' when tiny."""
    if value is None:
        return "-"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"
