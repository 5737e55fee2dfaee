"""Hand-computed values for every metric in metrics.py (trec_eval's definitions).

Each expected number is worked out in the comment next to it; none is copied from a run.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from rag_regress.retrieval.metrics import (
    average_precision,
    hit_at_k,
    ndcg_at_k,
    ndcg_exp_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
)

LOG2_3 = math.log2(3)  # discount at rank 2 is log2(2 + 1) = 1.58496...


# -- precision@k ------------------------------------------------------------------------


def test_precision_divides_by_k_even_when_fewer_documents_come_back() -> None:
    """The classic pitfall: 1 relevant of 2 returned at k=5 is 1/5 = 0.2, not 1/2 = 0.5."""
    assert precision_at_k(["a", "x"], {"a": 1}, 5) == pytest.approx(0.2)


def test_precision_counts_only_the_first_k() -> None:
    """Ranking a, x, b with a and b relevant: top 2 holds a only -> 1/2 = 0.5."""
    assert precision_at_k(["a", "x", "b"], {"a": 1, "b": 2}, 2) == pytest.approx(0.5)


def test_precision_of_an_empty_ranking_is_zero() -> None:
    """Nothing returned: 0 relevant / k = 0.0."""
    assert precision_at_k([], {"a": 3}, 5) == 0.0


# -- recall@k and hit@k -----------------------------------------------------------------


def test_recall_divides_by_all_relevant_documents() -> None:
    """Ranking x, a, y, b; relevant a, b, c. Top 3 holds a -> 1 of 3 relevant = 1/3."""
    assert recall_at_k(["x", "a", "y", "b"], {"a": 2, "b": 1, "c": 3}, 3) == pytest.approx(1 / 3)


def test_recall_grows_with_k() -> None:
    """Same ranking at k=4: a and b found -> 2/3."""
    assert recall_at_k(["x", "a", "y", "b"], {"a": 2, "b": 1, "c": 3}, 4) == pytest.approx(2 / 3)


def test_hit_is_one_when_any_relevant_document_is_in_the_top_k() -> None:
    """Relevant a at rank 3: hit@3 = 1, hit@2 = 0."""
    ranking, qrels = ["x", "y", "a"], {"a": 1}
    assert hit_at_k(ranking, qrels, 3) == 1.0
    assert hit_at_k(ranking, qrels, 2) == 0.0


# -- reciprocal rank ----------------------------------------------------------------------


def test_reciprocal_rank_without_cutoff() -> None:
    """First relevant document at rank 3 -> 1/3; a later relevant one does not matter."""
    assert reciprocal_rank(["x", "y", "a", "b"], {"a": 1, "b": 3}) == pytest.approx(1 / 3)


def test_reciprocal_rank_with_cutoff() -> None:
    """First relevant at rank 3: within k=3 -> 1/3; beyond k=2 -> 0.0."""
    ranking, qrels = ["x", "y", "a"], {"a": 1}
    assert reciprocal_rank(ranking, qrels, 3) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranking, qrels, 2) == 0.0


def test_reciprocal_rank_when_nothing_relevant_is_retrieved() -> None:
    """No relevant document anywhere in the ranking -> 0.0."""
    assert reciprocal_rank(["x", "y"], {"a": 1}) == 0.0


# -- nDCG -----------------------------------------------------------------------------------


def test_ndcg_linear_gain_with_swapped_grades() -> None:
    """Grades a=3, b=2, ranked b, a.

    DCG  = 2/log2(2) + 3/log2(3) = 2 + 1.89279 = 3.89279
    IDCG = 3/log2(2) + 2/log2(3) = 3 + 1.26186 = 4.26186
    nDCG = 3.89279 / 4.26186 = 0.91340
    """
    expected = (2 + 3 / LOG2_3) / (3 + 2 / LOG2_3)
    assert expected == pytest.approx(0.91340, abs=1e-5)
    assert ndcg_at_k(["b", "a"], {"a": 3, "b": 2}, 2) == pytest.approx(expected)
    assert ndcg_at_k(["b", "a"], {"a": 3, "b": 2}) == pytest.approx(expected)  # no cutoff


def test_ndcg_at_1_compares_with_the_best_single_document() -> None:
    """Ranked b (grade 2) first; the ideal first document has grade 3 -> 2/3."""
    assert ndcg_at_k(["b", "a"], {"a": 3, "b": 2}, 1) == pytest.approx(2 / 3)


def test_ndcg_ideal_uses_all_relevant_documents_not_just_retrieved_ones() -> None:
    """Grades a=3, b=2; only a retrieved, at rank 1.

    DCG = 3; IDCG@2 = 3 + 2/log2(3) = 4.26186 -> 3 / 4.26186 = 0.70392.
    """
    assert ndcg_at_k(["a"], {"a": 3, "b": 2}, 2) == pytest.approx(3 / (3 + 2 / LOG2_3))


def test_ndcg_exp_uses_gain_two_to_the_grade_minus_one() -> None:
    """Grades a=3, b=2 -> gains 2^3-1 = 7 and 2^2-1 = 3; ranked b, a.

    DCG  = 3/1 + 7/log2(3) = 3 + 4.41651 = 7.41651
    IDCG = 7/1 + 3/log2(3) = 7 + 1.89279 = 8.89279
    nDCG = 0.83399 (linear gain gives 0.91340: exponential gain punishes the swap more)
    """
    expected = (3 + 7 / LOG2_3) / (7 + 3 / LOG2_3)
    assert expected == pytest.approx(0.83399, abs=1e-5)
    assert ndcg_exp_at_k(["b", "a"], {"a": 3, "b": 2}, 2) == pytest.approx(expected)
    assert ndcg_exp_at_k(["b", "a"], {"a": 3, "b": 2}) < ndcg_at_k(["b", "a"], {"a": 3, "b": 2})


def test_ndcg_skips_grade_zero_documents() -> None:
    """a has grade 0 (not relevant) at rank 1, b grade 1 at rank 2.

    DCG = 1/log2(3) = 0.63093; IDCG = 1/log2(2) = 1 -> 0.63093.
    """
    assert ndcg_at_k(["a", "b"], {"a": 0, "b": 1}, 5) == pytest.approx(1 / LOG2_3)


# -- average precision and R-precision --------------------------------------------------


def test_average_precision_divides_by_all_relevant_documents() -> None:
    """Ranking a, x, b, y; relevant a, b, c (c never retrieved).

    Precision at a (rank 1) = 1/1, at b (rank 3) = 2/3, c adds 0.
    AP = (1 + 2/3 + 0) / 3 = 0.55556 (not (1 + 2/3) / 2 = 0.83333).
    """
    qrels = {"a": 1, "b": 2, "c": 3}
    assert average_precision(["a", "x", "b", "y"], qrels) == pytest.approx((1 + 2 / 3) / 3)


def test_average_precision_with_cutoff() -> None:
    """Same ranking cut at k=2: only a (1/1) counts -> 1/3; at k=3 both count -> 0.55556."""
    qrels = {"a": 1, "b": 2, "c": 3}
    assert average_precision(["a", "x", "b", "y"], qrels, 2) == pytest.approx(1 / 3)
    assert average_precision(["a", "x", "b", "y"], qrels, 3) == pytest.approx((1 + 2 / 3) / 3)


def test_r_precision() -> None:
    """R = 3 relevant (a, b, c); ranking a, x, b, c: top 3 holds a and b -> 2/3."""
    assert r_precision(["a", "x", "b", "c"], {"a": 1, "b": 1, "c": 2}) == pytest.approx(2 / 3)


def test_r_precision_divides_by_r_even_when_fewer_come_back() -> None:
    """R = 3, only a returned -> 1/3, not 1/1."""
    assert r_precision(["a"], {"a": 1, "b": 1, "c": 2}) == pytest.approx(1 / 3)


# -- no relevant document, grade 0, bad cutoffs -------------------------------------------

ALL_METRICS: dict[str, Callable[[list[str], dict[str, int]], float]] = {
    "precision@3": lambda r, q: precision_at_k(r, q, 3),
    "recall@3": lambda r, q: recall_at_k(r, q, 3),
    "hit@3": lambda r, q: hit_at_k(r, q, 3),
    "mrr": reciprocal_rank,
    "mrr@3": lambda r, q: reciprocal_rank(r, q, 3),
    "ndcg": ndcg_at_k,
    "ndcg@3": lambda r, q: ndcg_at_k(r, q, 3),
    "ndcg_exp": ndcg_exp_at_k,
    "map": average_precision,
    "map@3": lambda r, q: average_precision(r, q, 3),
    "rprec": r_precision,
}


@pytest.mark.parametrize("name", sorted(ALL_METRICS))
@pytest.mark.parametrize("qrels", [{}, {"a": 0, "b": 0}], ids=["no-qrels", "only-grade-0"])
def test_no_relevant_document_scores_zero(name: str, qrels: dict[str, int]) -> None:
    """A question with no relevant document scores 0.0 on every metric (as trec_eval)."""
    assert ALL_METRICS[name](["a", "b", "c"], qrels) == 0.0


@pytest.mark.parametrize("name", sorted(ALL_METRICS))
def test_grade_zero_documents_are_not_relevant(name: str) -> None:
    """z has grade 0 and is the only document retrieved: it earns nothing."""
    assert ALL_METRICS[name](["z"], {"z": 0, "a": 1}) == 0.0


CUTOFF_FUNCTIONS = [
    precision_at_k,
    recall_at_k,
    hit_at_k,
    reciprocal_rank,
    ndcg_at_k,
    ndcg_exp_at_k,
    average_precision,
]


@pytest.mark.parametrize("function", CUTOFF_FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("k", [0, -1])
def test_cutoff_below_one_raises(function: Callable[..., float], k: int) -> None:
    """k < 1 is a mistake, not a silent 0.0: ValueError naming the cutoff."""
    with pytest.raises(ValueError, match="at least 1"):
        function(["a"], {"a": 1}, k)
