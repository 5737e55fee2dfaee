"""The winner rule (sweep/choice.py): a field of identical candidates names a winner at most
at the stated rate, a clearly better candidate is named."""

from __future__ import annotations

import math

import numpy as np

from rag_regress.settings.config import StatsSettings
from rag_regress.sweep.choice import choose, tukey_hsd, versus_current

FAST = StatsSettings(resamples=200, exact_limit=10)  # the rule is the same at any resample count


def field_of(rng: np.random.Generator, questions: int, candidates: int) -> np.ndarray:
    """questions x candidates 0-1 values (hit@k-like): every candidate draws each question's
    value from the same question difficulty, so no candidate is better than another."""
    difficulty = rng.uniform(0.1, 0.9, size=(questions, 1))
    return (rng.random((questions, candidates)) < difficulty).astype(float)


def winner_of(values: np.ndarray, settings: StatsSettings = FAST) -> int | None:
    deltas = [values[:, column] - values[:, 0] for column in range(1, values.shape[1])]
    _, holm_p = versus_current(deltas, settings)
    return choose(values, 0, dict(enumerate(holm_p, start=1)), settings).winner


def test_a_field_of_identical_candidates_names_a_winner_at_most_at_alpha() -> None:
    rng = np.random.default_rng(1)
    runs = 200
    named = sum(winner_of(field_of(rng, 40, 6)) is not None for _ in range(runs))
    # The family-wise error is at most alpha; allow three binomial standard errors of sampling.
    alpha = FAST.alpha
    assert named / runs <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs), named


def test_tukey_hsd_alone_rejects_some_pair_of_an_identical_field_at_most_at_alpha() -> None:
    rng = np.random.default_rng(2)
    runs = 200
    rejected = 0
    for _ in range(runs):
        p = tukey_hsd(field_of(rng, 30, 5), seed=runs, resamples=200)
        rejected += bool((p <= FAST.alpha).any())
    assert rejected / runs <= FAST.alpha + 3 * math.sqrt(FAST.alpha * (1 - FAST.alpha) / runs), rejected


def test_a_clearly_better_candidate_is_named() -> None:
    rng = np.random.default_rng(3)
    values = field_of(rng, 40, 5)
    values[:, 3] = 1.0  # finds every question
    assert winner_of(values) == 3


def test_a_best_that_does_not_beat_its_runner_up_is_no_winner() -> None:
    rng = np.random.default_rng(4)
    values = field_of(rng, 40, 4)
    values[:, 2] = values[:, 3] = 1.0  # two equally strong candidates: neither is the winner
    assert winner_of(values) is None


def test_the_current_configuration_at_the_top_is_no_winner() -> None:
    rng = np.random.default_rng(5)
    values = field_of(rng, 40, 4)
    values[:, 0] = 1.0
    assert winner_of(values) is None
