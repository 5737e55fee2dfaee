"""Which candidate, if any, wins: the statistics of the sweep (docs/sweep.md says why).

versus_current   each candidate against the current configuration on the same questions:
                 the gate's paired sign-flip test, one-sided ("is it better?"), p adjusted
                 by Holm over every candidate of the grid
tukey_hsd        randomised Tukey HSD over the final field: within each question the
                 candidates' values are shuffled among them; the statistic is the range of
                 the means (best minus worst), so one null distribution covers every pair,
                 the pair picked after looking (the best and the runner-up) included
choose           the rule: a winner is the best of the final field, when it beats the current
                 configuration (Holm-adjusted p <= alpha) and the runner-up (HSD p <= alpha);
                 otherwise the field is indistinguishable
confirm          the winner against the current configuration on the holdout: one paired
                 one-sided test, no correction (one question asked, of fresh questions)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..gate.stats import ZERO, holm, sign_flip_p
from ..settings.config import StatsSettings

CELLS = 2_000_000  # values shuffled at once (resamples x questions x candidates): about 50 MB


def better_p(deltas: np.ndarray, settings: StatsSettings) -> float:
    """One-sided p of "the candidate is no better" from its per-question deltas (candidate -
    current): the gate's sign-flip test of a drop, asked of the negated deltas."""
    return sign_flip_p(
        [-float(d) for d in deltas],
        seed=settings.seed,
        resamples=settings.resamples,
        exact_limit=settings.exact_limit,
        alternative="less",
    )


def versus_current(deltas: list[np.ndarray], settings: StatsSettings) -> tuple[list[float], list[float]]:
    """Raw and Holm-adjusted one-sided p of each candidate's deltas against the current."""
    raw = [better_p(d, settings) for d in deltas]
    return raw, holm(raw)


def tukey_hsd(values: np.ndarray, seed: int, resamples: int) -> np.ndarray:
    """Randomised Tukey HSD: `values` is questions x candidates; returns the candidates x
    candidates matrix of adjusted two-sided p-values, (1 + hits) / (1 + resamples) where a hit
    is a shuffle whose range of means reaches the observed |mean_i - mean_j| (diagonal 1).

    Under the null hypothesis that the candidates are interchangeable on every question, each
    shuffle is as likely as the observed arrangement, so rejecting every pair whose p <= alpha
    wrongly rejects any pair with probability at most alpha (the family-wise error)."""
    questions, count = values.shape
    means = values.mean(axis=0)
    gaps = np.abs(means[:, None] - means[None, :])
    if questions == 0 or count < 2:
        return np.ones((count, count))
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, CELLS // (questions * count)))
    ranges = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        order = np.argsort(rng.random((size, questions, count)), axis=2)
        shuffled = np.take_along_axis(np.broadcast_to(values, (size, questions, count)), order, axis=2)
        shuffled_means = shuffled.mean(axis=1)
        ranges.append(shuffled_means.max(axis=1) - shuffled_means.min(axis=1))
    null = np.sort(np.concatenate(ranges))
    hits = resamples - np.searchsorted(null, gaps - 1e-12, side="left")  # ranges >= each gap
    p: np.ndarray = (1 + hits) / (1 + resamples)
    np.fill_diagonal(p, 1.0)
    return p


@dataclass(frozen=True)
class Choice:
    best: int  # column of the final field with the highest mean
    runner_up: int | None  # the next highest; None: a field of one
    p_vs_best: list[float]  # each column's HSD-adjusted p against the best (the best: 1)
    beats_current: bool
    beats_runner_up: bool

    @property
    def winner(self) -> int | None:
        return self.best if self.beats_current and self.beats_runner_up else None

    @property
    def p_runner_up(self) -> float | None:
        return None if self.runner_up is None else self.p_vs_best[self.runner_up]


def choose(
    values: np.ndarray, current: int, p_current_holm: dict[int, float], settings: StatsSettings
) -> Choice:
    """The rule, on the final field: `values` is questions x candidates (column `current` the
    current configuration), `p_current_holm` each other column's Holm-adjusted p against it.
    Ties of means keep the lower column (grid order; the current configuration is column 0)."""
    means = values.mean(axis=0)
    order = sorted(range(values.shape[1]), key=lambda column: (-means[column], column))
    best = order[0]
    runner_up = order[1] if len(order) > 1 else None
    hsd = tukey_hsd(values, settings.seed, settings.resamples)
    p_vs_best = [float(p) for p in hsd[best]]
    beats_current = best != current and p_current_holm.get(best, 1.0) <= settings.alpha
    beats_runner_up = (
        runner_up is not None
        and p_vs_best[runner_up] <= settings.alpha
        and means[best] - means[runner_up] > ZERO
    )
    return Choice(best, runner_up, p_vs_best, beats_current, beats_runner_up)


def confirm(winner: np.ndarray, current: np.ndarray, settings: StatsSettings) -> tuple[float, float]:
    """(mean delta, one-sided p) of the winner over the current configuration on the holdout."""
    deltas = winner - current
    return float(deltas.mean()) if len(deltas) else 0.0, better_p(deltas, settings)
