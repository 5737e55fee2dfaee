"""The prediction-powered estimate (answers/ppi.py): its definition on hand-worked numbers and
its properties."""

from __future__ import annotations

import random
from math import sqrt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_regress.answers.ppi import prediction_powered


def test_the_judge_s_bias_on_the_labels_is_taken_off_its_rate() -> None:
    # The judge passes 8 of 10 sentences; on 4 labelled ones it passed 2 that people failed.
    judged = [True] * 8 + [False] * 2
    labelled = [(True, False), (True, False), (True, True), (False, False)]
    found = prediction_powered(judged, labelled)
    assert found is not None
    assert found.raw == 0.8 and found.estimate == pytest.approx(0.8 - 0.5)
    # var(f) = 0.8 * 0.2 * 10 / 9 over N = 10; errors [1, 1, 0, 0]: var 1/3 over n = 4
    spread = sqrt((0.16 * 10 / 9) / 10 + (1 / 3) / 4)
    assert found.low == pytest.approx(max(0.0, 0.3 - 1.959964 * spread), abs=1e-5)
    assert found.high == pytest.approx(0.3 + 1.959964 * spread, abs=1e-5)
    assert (found.labelled, found.items, found.confidence) == (4, 10, 0.95)


def test_too_few_items_or_labels_give_no_estimate() -> None:
    assert prediction_powered([True], [(True, True), (False, False)]) is None
    assert prediction_powered([True, False], [(True, True)]) is None
    assert prediction_powered([True, False], []) is None


@given(st.lists(st.booleans(), min_size=2, max_size=60), st.lists(st.booleans(), min_size=2, max_size=30))
def test_a_judge_that_agrees_with_every_label_keeps_its_rate(judged: list[bool], labels: list[bool]) -> None:
    found = prediction_powered(judged, [(label, label) for label in labels])
    assert found is not None
    assert found.estimate == pytest.approx(sum(judged) / len(judged))
    assert 0.0 <= found.low <= found.estimate <= found.high <= 1.0


def test_the_interval_covers_the_truth_about_as_often_as_it_says() -> None:
    """A biased judge (it passes 30% of the unsupported sentences) on simulated runs: the raw
    rate is off by about 0.09, the corrected 95% interval covers the true share ~95% of runs."""
    rng = random.Random(7)
    covered, raw_off = 0, []
    runs = 400
    for _ in range(runs):
        truth = [rng.random() < 0.7 for _ in range(400)]
        judge = [t or rng.random() < 0.3 for t in truth]
        picked = rng.sample(range(400), 60)
        found = prediction_powered(judge, [(judge[i], truth[i]) for i in picked])
        assert found is not None
        share = sum(truth) / len(truth)
        covered += found.low <= share <= found.high
        raw_off.append(found.raw - share)
    assert sum(raw_off) / runs == pytest.approx(0.09, abs=0.02)
    assert 0.90 <= covered / runs <= 0.99
