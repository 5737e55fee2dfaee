"""YOUR TESTS: properties of the metrics eval.toml reports, on rankings Hypothesis generates.

Each metric is the engine's own function (definitions: the rag-regress docs, metrics.md);
these pin what the gate's numbers mean to you: a score in [0, 1], 1 for a perfect ranking
wherever a relevant document fits in the cutoff, 0 when nothing relevant is retrieved, and
no score that falls when a relevant document moves up.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rag_regress.retrieval.names import parse_metric

settings.register_profile("ci", deadline=None, max_examples=150, derandomize=True, database=None)
settings.load_profile("ci")

EVAL_TOML = tomllib.loads((Path(__file__).parents[1] / "eval.toml").read_text(encoding="utf-8"))
METRICS = [parse_metric(name) for name in EVAL_TOML["retrieval"]["metrics"]]
IDS = [f"d{i}" for i in range(8)]
rankings = st.lists(st.sampled_from(IDS), unique=True, max_size=len(IDS))
grades = st.dictionaries(st.sampled_from(IDS), st.integers(min_value=1, max_value=3), min_size=1, max_size=5)


@pytest.mark.parametrize("metric", METRICS, ids=str)
@given(ranking=rankings, qrels=grades)
def test_score_is_between_zero_and_one(metric, ranking, qrels) -> None:
    assert 0.0 <= metric(ranking, qrels) <= 1.0


@pytest.mark.parametrize("metric", METRICS, ids=str)
@given(qrels=grades)
def test_a_perfect_ranking_scores_one(metric, qrels) -> None:
    best = sorted(qrels, key=lambda d: (-qrels[d], d))
    if str(metric).startswith("precision@") and metric.k is not None and metric.k > len(best):
        return  # precision@k counts the empty places below the last relevant document
    assert metric(best + [d for d in IDS if d not in qrels], qrels) == pytest.approx(1.0)


@pytest.mark.parametrize("metric", METRICS, ids=str)
@given(ranking=rankings, qrels=grades)
def test_nothing_relevant_retrieved_scores_zero(metric, ranking, qrels) -> None:
    assert metric([d for d in ranking if d not in qrels], qrels) == 0.0


@pytest.mark.parametrize("metric", METRICS, ids=str)
@given(ranking=rankings, qrels=grades, data=st.data())
def test_moving_a_relevant_document_up_never_lowers_the_score(metric, ranking, qrels, data) -> None:
    placed = [i for i, d in enumerate(ranking) if d in qrels and i > 0]
    if not placed:
        return
    i = data.draw(st.sampled_from(placed))
    swapped = list(ranking)
    if swapped[i - 1] in qrels and qrels[swapped[i - 1]] >= qrels[swapped[i]]:
        return  # swapping two relevant documents can trade a higher grade for a lower one
    swapped[i - 1], swapped[i] = swapped[i], swapped[i - 1]
    assert metric(swapped, qrels) >= metric(ranking, qrels) - 1e-12
