"""Successive halving: the rule docs/sweep.md states, on candidates whose means are known."""

from __future__ import annotations

import math

from rag_regress.sweep.halving import MIN_QUESTIONS, halve, question_order


def test_a_small_field_is_one_rung_on_every_question() -> None:
    assert halve(list(range(1, 5)), 40, 8, lambda c, n: 0.0) == [(0, 40, [1, 2, 3, 4])]


def test_a_large_field_halves_while_the_questions_double() -> None:
    strength = {c: c / 100 for c in range(1, 21)}  # 20 candidates, the last one the best
    asked: list[tuple[int, int]] = []

    def mean_on(candidate: int, n: int) -> float:
        asked.append((candidate, n))
        return strength[candidate]

    rungs = halve(list(strength), 80, 4, mean_on)
    assert [(rung, size, len(field)) for rung, size, field in rungs] == [
        (0, 10, 20),  # R = ceil(log2(20 / 4)) = 3 rungs of halving: n0 = 80 / 2**3
        (1, 20, 10),
        (2, 40, 5),
        (3, 80, 3),  # at most 4 left: the last rung, on every question
    ]
    assert rungs[-1][2] == [18, 19, 20], "the better half stays each time"
    assert all(n < 80 for _, n in asked), "the last rung is the caller's: it evaluates the survivors"


def test_the_first_rung_has_at_least_the_minimum_of_questions() -> None:
    rungs = halve(list(range(64)), 30, 2, lambda c, n: 0.0)
    assert [(size, len(field)) for _, size, field in rungs] == [(MIN_QUESTIONS, 64), (20, 32), (30, 16)]
    assert math.ceil(64 / 2) == 32, "the better half, rounded up; the last rung has every question"


def test_ties_keep_grid_order() -> None:
    rungs = halve([5, 3, 9, 1], 40, 2, lambda c, n: 0.5)
    assert rungs[-1][2] == [5, 3]


def test_the_question_order_is_seeded() -> None:
    assert question_order(50, 7) == question_order(50, 7) != question_order(50, 8)
    assert sorted(question_order(50, 7)) == list(range(50))
