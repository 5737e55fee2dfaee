"""Paired statistics for the gate: is a change in a mean real, or the noise of a small golden set?

Every function here is pure and deterministic for a given seed. They work on per-question
deltas, `now - baseline` for the same question, because each question is its own control:
pairing removes the (large) differences between easy and hard questions.

  sign_flip_p         paired sign-flip randomisation test of "mean delta = 0" (two-sided, or
                      one-sided "less": the gate asks about drops)
  max_t_drop_p        Westfall-Young max-T step-down over several metrics' sign flips, drawn
                      together so the correction respects their correlation
  flip_p              exact one-sided sign (McNemar) test of a check's flips: b newly failing
                      against c newly passing
  min_p_flips         the flips of several checks, adjusted by the Westfall-Young min-P
                      step-down over the same sign flips (the net flip rule's family)
  bootstrap_ci        paired bootstrap percentile interval of the mean delta
  holm                Holm's step-down correction of a family of p-values
  lower_bound(s)      one-sided Student-t lower bound of a mean delta (non-inferiority)
  design_size         questions a non-inferiority test needs (topic-set-size design)
  min_detectable_drop the smallest drop a test of n questions can ever call significant
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

# scipy.stats is imported where it is used: importing it takes over a second, and most runs
# (eval, baseline, a gate where nothing changed) never need it.

# Deltas closer to zero than this count as "no change" (metric values are sums of fractions,
# so an unchanged question can differ from its baseline by rounding noise).
ZERO = 1e-12


def _total(values: np.ndarray, axis: int = -1) -> np.ndarray:
    total: np.ndarray = np.sum(values, axis=axis)
    return total


def sign_flip_p(
    deltas: Sequence[float],
    *,
    seed: int,
    resamples: int,
    exact_limit: int = 16,
    alternative: Literal["two-sided", "less"] = "two-sided",
) -> float:
    """Two-sided (alternative="less": one-sided, "is it a drop?") p-value of the paired
    sign-flip test of "the change does nothing".

    Under that null hypothesis each question's delta is as likely to be +d as -d, so the
    p-value is the share of the 2**m sign patterns (m = non-zero deltas; zeros are unchanged
    by a flip) whose sum is at least as extreme as the observed sum (scipy's two-sided rule:
    twice the smaller tail, capped at 1).

    - m <= exact_limit: every pattern is enumerated; the p-value is exact.
    - m > exact_limit: `resamples` random patterns from numpy's generator seeded with `seed`;
      p = (1 + hits) / (1 + resamples), which is never 0.
    - Fewer than two non-zero deltas: p = 1 two-sided (one change alone is never evidence);
      one-sided, 1/2 for one drop and 1 otherwise.

    Two-sided is symmetric: p(deltas) == p([-d for d in deltas]). One-sided ("less") is the
    share of patterns whose sum is at most the observed one: 1 / 2**m when all m changed
    questions dropped. Always in (0, 1].
    """
    values = np.array([d for d in deltas if abs(d) > ZERO], dtype=float)
    if len(values) < 2:  # +d and -d are equally extreme: p = 1 (and scipy needs two values)
        if alternative == "less" and len(values) == 1:  # one change: p = 1/2 if a drop, else 1
            return 0.5 if values[0] < 0 else 1.0
        return 1.0
    exact = len(values) <= exact_limit
    import scipy.stats

    result = scipy.stats.permutation_test(
        (values,),
        _total,
        permutation_type="samples",  # one sample: permuting pairs = flipping signs
        vectorized=True,
        n_resamples=2 ** len(values) if exact else resamples,  # every pattern: scipy enumerates them
        alternative=alternative,
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
    import scipy.stats

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


def min_changed_questions(alpha: float, *, sided: int = 1) -> int:
    """The fewest non-zero deltas with which the sign-flip test can reach p <= alpha.

    With m non-zero deltas the smallest one-sided p is 1 / 2**m (all of them drops), so m
    must be at least log2(1 / alpha): 5 questions at alpha = 0.05, 7 at 0.01. Two-sided
    (sided=2) the smallest p is 2 / 2**m: 6 at 0.05.
    """
    return max(1, math.ceil(math.log2(sided / alpha) - 1e-12))


def _sign_patterns(m: int, *, seed: int, resamples: int, exact_limit: int) -> tuple[np.ndarray, bool]:
    """Sign patterns (rows of +-1) for m questions: every one of the 2**m when m <= exact_limit
    (the observed, all +1, among them), else the observed pattern and `resamples` random ones."""
    if m <= exact_limit:
        codes = np.arange(2**m, dtype=np.int64)[:, None] >> np.arange(m, dtype=np.int64)[None, :]
        return 1.0 - 2.0 * (codes & 1), True
    rng = np.random.default_rng(seed)
    random = rng.choice(np.array([-1.0, 1.0]), size=(resamples, m))
    return np.vstack([np.ones((1, m)), random]), False


def max_t_drop_p(
    deltas: np.ndarray, *, seed: int, resamples: int, exact_limit: int = 16
) -> tuple[list[float], list[float]]:
    """One-sided p-values of "no drop" for several metrics measured on the same questions:
    raw, and adjusted by the Westfall-Young max-T step-down (Westfall & Young 1993, alg. 2.8).

    `deltas` is questions x metrics. Each metric's statistic is the studentised drop
    T = -sum(d) / sqrt(sum(d**2)) (0 when nothing changed), invariant to sign flips in its
    denominator, so metrics on different scales compete fairly. One sign pattern flips a
    question in every metric at once, so the null distribution of max T keeps the metrics'
    correlation (recall@k, hit@k and nDCG@k move together): the correction is far milder than
    Holm's or Bonferroni's for correlated metrics, and still controls the chance of any false
    alarm in the family at alpha. Questions unchanged in every metric are left out (a flip
    changes nothing); with at most `exact_limit` others every pattern is enumerated (exact),
    else `resamples` random patterns seeded with `seed` plus the observed one, p never 0.

    Step-down: sort the metrics by observed T, largest first; the j-th gets the share of
    patterns whose max T over the metrics from j on is at least its T, made monotone.
    """
    values = np.array(deltas, dtype=float)
    if values.ndim != 2 or values.shape[1] == 0:
        return [], []
    values[np.abs(values) <= ZERO] = 0.0  # rounding noise is no change
    changed = np.any(np.abs(values) > ZERO, axis=1)
    values = values[changed]
    metrics = values.shape[1]
    if len(values) == 0:
        return [1.0] * metrics, [1.0] * metrics
    signs, _ = _sign_patterns(len(values), seed=seed, resamples=resamples, exact_limit=exact_limit)
    scale = np.sqrt(np.sum(values**2, axis=0))
    scale[scale <= ZERO] = np.inf  # an unchanged metric: T = 0 in every pattern
    flipped = -(signs @ values) / scale  # patterns x metrics; row 0 is the observed pattern
    observed = flipped[0]
    slack = 1e-9  # equal statistics computed in another order must count as "at least"
    raw = np.mean(flipped >= observed - slack, axis=0)
    order = np.argsort(-observed, kind="stable")
    adjusted = np.zeros(metrics)
    running = 0.0
    for position, metric in enumerate(order):
        rest = order[position:]
        share = float(np.mean(np.max(flipped[:, rest], axis=1) >= observed[metric] - slack))
        running = max(running, share)
        adjusted[metric] = running
    return [float(p) for p in raw], [float(p) for p in adjusted]


def flip_p(failing: int, passing: int) -> float:
    """One-sided exact p of "the change does not lose more questions than it wins" for one
    per-question check: the sign test (McNemar's exact test) on its discordant pairs.

    Of the b + c questions whose check changed, b newly fail and c newly pass. Under the null
    hypothesis (the baseline's run and this one are exchangeable for each question) each of
    them was as likely to go either way, so b ~ Binomial(b + c, 1/2) and
    p = P(X >= b) = binom.sf(b - 1, b + c, 1/2). Questions whose check did not change carry
    no information about the direction and are left out, as McNemar's test leaves out the
    concordant pairs. No change at all (b = c = 0), or no newly failing question: p = 1.
    """
    if failing <= 0:
        return 1.0
    import scipy.stats

    return float(scipy.stats.binom.sf(failing - 1, failing + passing, 0.5))


def min_p_flips(
    changes: np.ndarray, *, seed: int, resamples: int, exact_limit: int = 16
) -> tuple[list[float], list[float]]:
    """flip_p of several checks on the same questions, raw and adjusted by the Westfall-Young
    min-P step-down (Westfall & Young 1993, alg. 2.8 with p-values for statistics).

    `changes` is questions x checks: -1 where the question newly fails the check, +1 where it
    newly passes, 0 where the check did not change or does not apply. One sign pattern swaps
    the baseline's run and this one for a question in every check at once (the exchange the
    null hypothesis allows), turning each of its flips the other way: b' = (m - s @ E) / 2 for
    a check with m = b + c flips. Each check's statistic is its own exact p of b' (flip_p), so
    checks with few flips and checks with many compete on one scale, as the discrete tests'
    p-values, not their counts, are what is compared (a max-T on (b - c) / sqrt(b + c) would
    favour the checks with many flips). The joint distribution keeps the checks' correlation:
    a question that drops its key fact often fails correctness too, and pays once.

    Patterns as significance.py draws them (`_sign_patterns`): every one of the 2**m when the
    m questions that changed in some check are at most `exact_limit` (exact), else the observed
    pattern and `resamples` random ones seeded with `seed`. Step-down: sort the checks by raw
    p, smallest first; the j-th gets the share of patterns whose smallest p over the checks
    from j on is at most its raw p, made monotone, and never below its raw p (the exact
    adjusted p never is; a random sample could say otherwise). One check: adjusted = raw.
    """
    values = np.sign(np.array(changes, dtype=float))
    if values.ndim != 2 or values.shape[1] == 0:
        return [], []
    counts = np.abs(values).sum(axis=0).astype(int)  # m = b + c per check: a flip keeps it
    failing = (values < 0).sum(axis=0).astype(int)
    raw = [flip_p(int(b), int(m - b)) for b, m in zip(failing, counts, strict=True)]
    values = values[np.any(values != 0, axis=1)]
    if len(values) == 0:
        return raw, list(raw)
    signs, _ = _sign_patterns(len(values), seed=seed, resamples=resamples, exact_limit=exact_limit)
    flipped_failing = np.rint((counts[None, :] - signs @ values) / 2).astype(int)  # patterns x checks
    # Each check's exact p of every b' it can take, looked up: p_j(b') = P(X >= b'), X ~ Bin(m_j, 1/2).
    import scipy.stats

    pvalues = np.ones(flipped_failing.shape)
    for j, m in enumerate(counts):
        table = scipy.stats.binom.sf(np.arange(int(m) + 1) - 1, int(m), 0.5)  # flip_p(b', m - b')
        pvalues[:, j] = table[flipped_failing[:, j]]
    slack = 1e-12  # equal p computed alike must count as "at most"
    order = np.argsort(np.array(raw), kind="stable")
    adjusted = [1.0] * len(raw)
    running = 0.0
    for position, check in enumerate(order):
        rest = order[position:]
        share = float(np.mean(np.min(pvalues[:, rest], axis=1) <= raw[check] + slack))
        running = max(running, share, raw[check])
        adjusted[check] = min(1.0, running)
    return raw, adjusted


def lower_bounds(deltas: np.ndarray, alpha: float) -> np.ndarray:
    """One-sided (1 - alpha) Student-t lower confidence bound of the mean delta, along the last
    axis (one bound per row: vectorised, so a simulation of many gate runs is one call).

    mean - t(1 - alpha, n - 1) * sd / sqrt(n). Non-inferiority passes when this bound is above
    -tolerance: the chance of passing a change that truly costs the tolerance is at most alpha
    (for means of roughly normal per-question deltas; per-question means over repeats are).
    -inf with fewer than two questions (nothing can be shown: the gate fails closed).
    """
    values = np.asarray(deltas, dtype=float)
    n = values.shape[-1]
    if n < 2:
        return np.full(values.shape[:-1], -math.inf)
    spread = np.std(values, axis=-1, ddof=1)
    import scipy.stats

    bound: np.ndarray = np.mean(values, axis=-1) - scipy.stats.t.ppf(1 - alpha, n - 1) * spread / math.sqrt(n)
    return bound


def lower_bound(deltas: Sequence[float] | np.ndarray, alpha: float) -> float:
    """lower_bounds of one list of per-question deltas."""
    return float(lower_bounds(np.asarray(deltas, dtype=float), alpha))


def design_size(spread: float, tolerance: float, alpha: float, power: float) -> int | None:
    """Questions a non-inferiority test needs (topic-set-size design, normal approximation):
    n = ((z(1 - alpha) + z(power)) * spread / tolerance) ** 2, rounded up, at least 2.

    `spread` is the standard deviation of the per-question deltas when nothing changed. With
    that many questions an unchanged system passes with probability `power`, and a system
    worse by the tolerance passes with probability at most alpha. None when the tolerance is 0
    (no number of questions can show "no worse at all").
    """
    if tolerance <= 0:
        return None
    if spread <= ZERO:
        return 2
    import scipy.stats

    z = float(scipy.stats.norm.ppf(1 - alpha) + scipy.stats.norm.ppf(power))
    return max(2, math.ceil((z * spread / tolerance) ** 2 - 1e-9))


def tolerance_in_questions(tolerance: float, n: int) -> str:
    """The tolerance as whole questions of a 0-1 metric on n questions, in words, e.g.
    "a drop of 0.02 on 51 questions is 1.0 question: 1 flipped question (0.020) stays
    within it, 2 (0.039) cross it"."""
    if n <= 0:
        return f"tolerance {tolerance:g}: no question to compare"
    worth, flips = _flips_within(tolerance, n)
    return f"a drop of {tolerance:g} on {n} questions is {worth} question(s) of a 0-1 metric: {flips}"


def _flips_within(tolerance: float, n: int) -> tuple[str, str]:
    """The tolerance on n questions (n > 0) as a count of questions, '1.0', and what that
    means, '1 flipped question(s) (0.020) stay within it, 2 (0.039) cross it'. The count has
    two decimals where one would round it onto the next whole question (0.96 is not 1.0: no
    flip stays within it)."""
    worth = tolerance * n
    within = math.floor(worth + 1e-9)
    shown = f"{worth:.1f}" if math.floor(round(worth, 1) + 1e-9) == within else f"{worth:.2f}"
    flips = (
        f"{within} flipped question(s) ({within / n:.3f}) stay within it, "
        f"{within + 1} ({(within + 1) / n:.3f}) cross it"
    )
    return shown, flips


def tolerance_in_questions_per_metric(tolerance: float, counts: dict[str, int]) -> str:
    """The tolerance in whole questions of each metric's own denominator (`counts`: metric ->
    the questions it is a mean over in both reports): `tolerance_in_questions` when every
    metric has the same count, else one clause per count naming its metrics. Faithfulness is
    a mean over answered questions only: on 48 of them 0.02 is 0.96 question(s) and one
    flipped question crosses it, while on the 51 of the retrieval metrics one stays within."""
    groups: dict[int, list[str]] = {}
    for metric, n in counts.items():
        groups.setdefault(n, []).append(metric)
    if len(groups) <= 1:
        return tolerance_in_questions(tolerance, next(iter(groups), 0))
    clauses = []
    for n, metrics in groups.items():
        if n <= 0:
            clauses.append(f"nothing for {', '.join(metrics)} (no question to compare)")
            continue
        worth, flips = _flips_within(tolerance, n)
        clauses.append(f"{worth} question(s) on the {n} questions of {', '.join(metrics)} ({flips})")
    return f"a drop of {tolerance:g} of a 0-1 metric is " + "; ".join(clauses)


def min_detectable_drop(n: int, alpha: float) -> float | None:
    """Minimum detectable effect: the smallest drop in a mean over `n` questions that the
    one-sided test can ever call significant at `alpha`, for a 0-1 metric such as hit@k (a
    question moves by a whole point or not at all): min_changed_questions(alpha) / n.

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
