"""Successive halving: with many candidates, spend questions on the promising ones.

The rule (docs/sweep.md): with C candidates and more than `limit` of them, the dev questions
are put in a seeded random order. Rung r evaluates the candidates still in the field on the
first n_r questions of that order, where n_0 = ceil(N / 2**R), R = ceil(log2(C / limit)) and
n_r doubles each rung (at least MIN_QUESTIONS, at most N); after each rung the better half
(rounded up) by mean stays in the field. When at most `limit` candidates remain, the last rung
evaluates them on all N questions. The current configuration is the reference: it is always
evaluated and never counted or eliminated. Subsets are nested, so each rung only searches the
questions it adds. At most `limit` candidates: one rung, all N questions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

MIN_QUESTIONS = 10  # a first rung of fewer questions ranks candidates mostly by chance


def question_order(n: int, seed: int) -> list[int]:
    """Positions 0..n-1 in the seeded order the rungs take questions from."""
    return [int(i) for i in np.random.default_rng(seed).permutation(n)]


def first_size(candidates: int, questions: int, limit: int) -> int:
    """n_0: questions of the first rung (all of them when no halving is needed)."""
    if candidates <= limit:
        return questions
    rungs = math.ceil(math.log2(candidates / limit))
    return min(questions, max(MIN_QUESTIONS, math.ceil(questions / (1 << rungs))))


def halve(
    field: list[int], questions: int, limit: int, mean_on: Callable[[int, int], float]
) -> list[tuple[int, int, list[int]]]:
    """Run the halving over candidate ids `field` (grid order); `mean_on(candidate, n)` is a
    candidate's mean on the first n questions of the order. Returns each rung as (rung,
    questions used, candidates evaluated). The last rung's candidates are the survivors,
    evaluated on all `questions`. Ties keep grid order (the earlier candidate stays)."""
    rungs = []
    alive = list(field)
    size = first_size(len(alive), questions, limit)
    rung = 0
    while len(alive) > limit and size < questions:
        rungs.append((rung, size, list(alive)))
        means = {candidate: mean_on(candidate, size) for candidate in alive}
        ranked = sorted(alive, key=lambda c: -means[c])  # stable: ties keep grid order
        kept = set(ranked[: math.ceil(len(alive) / 2)])
        alive = [candidate for candidate in alive if candidate in kept]
        size, rung = min(questions, size * 2), rung + 1
    rungs.append((rung, questions, list(alive)))
    return rungs
