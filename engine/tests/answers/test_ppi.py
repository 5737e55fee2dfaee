"""The corrected estimate (answers/ppi.py): its definition on hand-worked numbers and its
properties, with labels sampled by verdict as `grade --answers` samples them."""

from __future__ import annotations

import random
from math import sqrt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_regress.answers.ppi import prediction_powered


def even(verdicts: list[bool]) -> list[tuple[bool, float]]:
    return [(verdict, 1 / len(verdicts)) for verdict in verdicts]


def test_each_verdict_is_corrected_by_how_often_people_agreed_with_it() -> None:
    # The judge passes 8 of 10 sentences. People agreed with 2 of the 4 it passed that they
    # read, and called 1 of the 2 it failed supported.
    run = even([True] * 8 + [False] * 2)
    labelled = [(True, False), (True, False), (True, True), (True, True), (False, False), (False, True)]
    found = prediction_powered(run, labelled)
    assert found is not None
    assert found.raw == pytest.approx(0.8)
    assert found.estimate == pytest.approx(0.8 * 0.5 + 0.2 * 0.5)
    # Agresti-Coull centres (2 + 2) / (4 + 4) and (1 + 2) / (2 + 4), both 0.5
    spread = 1.959964 * sqrt(0.8**2 * 0.25 / 4 + 0.2**2 * 0.25 / 2)
    assert (found.low, found.high) == (
        pytest.approx(0.5 - spread, abs=1e-5),
        pytest.approx(0.5 + spread, abs=1e-5),
    )
    assert (found.labelled, found.items, found.confidence) == (6, 10, 0.95)


def test_the_weights_make_it_a_mean_over_questions() -> None:
    # One question of one sentence (supported), one of three (all unsupported): faithfulness
    # 1.0 and 0.0, mean 0.5, though a quarter of the sentences are supported.
    run = [(True, 0.5), (False, 1 / 6), (False, 1 / 6), (False, 1 / 6)]
    found = prediction_powered(run, [(True, True), (False, False)])
    assert found is not None and found.raw == pytest.approx(0.5) and found.estimate == pytest.approx(0.5)


def test_a_verdict_with_no_label_gives_no_estimate() -> None:
    run = even([True, True, False])
    assert prediction_powered(run, [(True, True), (True, False)]) is None
    assert prediction_powered(run, []) is None
    assert prediction_powered([], [(True, True)]) is None
    # a verdict the run does not hold needs no label
    assert prediction_powered(even([True, True]), [(True, True)]) is not None


@given(
    st.lists(st.booleans(), min_size=1, max_size=60),
    st.lists(st.booleans(), min_size=1, max_size=30),
    st.lists(st.booleans(), min_size=1, max_size=30),
)
def test_a_judge_that_agrees_with_every_label_keeps_its_figure_inside_an_honest_interval(
    verdicts: list[bool], passed: list[bool], failed: list[bool]
) -> None:
    labelled = [(True, True) for _ in passed] + [(False, False) for _ in failed]
    found = prediction_powered(even(verdicts), labelled)
    assert found is not None
    assert found.estimate == pytest.approx(sum(verdicts) / len(verdicts))
    assert 0.0 <= found.low <= found.estimate <= found.high <= 1.0
    assert found.low < found.high or found.estimate in (0.0, 1.0)  # agreement never proves the rest


def test_the_interval_covers_the_truth_about_as_often_as_it_says() -> None:
    """A biased judge (it passes 30% of the unsupported sentences) on simulated runs, with 30
    labels drawn from each of its verdicts: the raw figure is off by about 0.09, the corrected
    95% interval covers the true share in about 95% of the runs."""
    rng = random.Random(7)
    covered, raw_off = 0, []
    runs = 400
    for _ in range(runs):
        truth = [rng.random() < 0.7 for _ in range(400)]
        judge = [t or rng.random() < 0.3 for t in truth]
        picked = [
            i
            for verdict in (True, False)
            for i in rng.sample([i for i in range(400) if judge[i] is verdict], 30)
        ]
        found = prediction_powered(even(judge), [(judge[i], truth[i]) for i in picked])
        assert found is not None
        share = sum(truth) / len(truth)
        covered += found.low <= share <= found.high
        raw_off.append(found.raw - share)
    assert sum(raw_off) / runs == pytest.approx(0.09, abs=0.02)
    assert 0.90 <= covered / runs <= 0.995
