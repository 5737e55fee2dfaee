"""Properties every metric must have, checked on generated rankings and relevance grades."""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import assume, given
from hypothesis import strategies as st

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

DOC_IDS = [f"d{i}" for i in range(10)]

rankings = st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=len(DOC_IDS))
qrels_st = st.dictionaries(st.sampled_from(DOC_IDS), st.integers(min_value=0, max_value=3), max_size=8)
cutoffs = st.integers(min_value=1, max_value=12)

# Every metric with a cutoff, as f(ranking, qrels, k).
AT_K: dict[str, Callable[[list[str], dict[str, int], int], float]] = {
    "precision": precision_at_k,
    "recall": recall_at_k,
    "hit": hit_at_k,
    "mrr": reciprocal_rank,
    "ndcg": ndcg_at_k,
    "ndcg_exp": ndcg_exp_at_k,
    "map": average_precision,
}
# Every metric without a cutoff, as f(ranking, qrels).
WHOLE: dict[str, Callable[[list[str], dict[str, int]], float]] = {
    "mrr": reciprocal_rank,
    "ndcg": ndcg_at_k,
    "ndcg_exp": ndcg_exp_at_k,
    "map": average_precision,
    "rprec": r_precision,
}


def relevant_ids(qrels: dict[str, int]) -> set[str]:
    return {doc_id for doc_id, grade in qrels.items() if grade >= 1}


def perfect_ranking(qrels: dict[str, int], others: list[str]) -> list[str]:
    """Relevant documents by grade, highest first, then everything else."""
    best = sorted(relevant_ids(qrels), key=lambda doc_id: (-qrels[doc_id], doc_id))
    return best + [doc_id for doc_id in others if doc_id not in best]


@given(rankings, qrels_st, cutoffs)
def test_every_value_is_between_zero_and_one(ranking: list[str], qrels: dict[str, int], k: int) -> None:
    """All metrics return a number in [0, 1], with and without a cutoff."""
    values = {f"{name}@{k}": f(ranking, qrels, k) for name, f in AT_K.items()}
    values |= {name: f(ranking, qrels) for name, f in WHOLE.items()}
    for name, value in values.items():
        assert 0.0 <= value <= 1.0, (name, value)


@given(qrels_st, rankings, cutoffs)
def test_perfect_ranking_scores_one(qrels: dict[str, int], others: list[str], k: int) -> None:
    """Relevant documents first, by grade: 1.0 on hit, mrr, nDCG (both gains), map and rprec
    at any cutoff, and on recall@k once k >= R."""
    relevant = relevant_ids(qrels)
    assume(relevant)
    ranking = perfect_ranking(qrels, others)
    assert math.isclose(hit_at_k(ranking, qrels, k), 1.0)
    assert math.isclose(reciprocal_rank(ranking, qrels), 1.0)
    assert math.isclose(r_precision(ranking, qrels), 1.0)
    assert math.isclose(average_precision(ranking, qrels), 1.0)
    for ndcg in (ndcg_at_k, ndcg_exp_at_k):
        assert math.isclose(ndcg(ranking, qrels), 1.0)
        assert math.isclose(ndcg(ranking, qrels, k), 1.0)
    assert math.isclose(recall_at_k(ranking, qrels, max(k, len(relevant))), 1.0)


@given(rankings, qrels_st)
def test_recall_and_hit_never_decrease_as_k_grows(ranking: list[str], qrels: dict[str, int]) -> None:
    """Looking deeper can only find more: recall@k and hit@k are non-decreasing in k."""
    for f in (recall_at_k, hit_at_k):
        values = [f(ranking, qrels, k) for k in range(1, len(DOC_IDS) + 2)]
        assert values == sorted(values), (f.__name__, values)


@given(
    rankings,
    st.sampled_from(DOC_IDS),
    st.integers(min_value=1, max_value=3),
    st.lists(st.sampled_from(DOC_IDS), unique=True),
    cutoffs,
)
def test_recall_equals_hit_with_exactly_one_relevant_document(
    ranking: list[str], relevant: str, grade: int, zero_graded: list[str], k: int
) -> None:
    """With one relevant document (grade-0 judgements do not count), recall@k == hit@k."""
    qrels = {doc_id: 0 for doc_id in zero_graded if doc_id != relevant} | {relevant: grade}
    assert recall_at_k(ranking, qrels, k) == hit_at_k(ranking, qrels, k)


@given(rankings, qrels_st, cutoffs)
def test_documents_after_position_k_change_nothing_at_k(
    ranking: list[str], qrels: dict[str, int], k: int
) -> None:
    """Every @k metric depends on the first k documents only."""
    for name, f in AT_K.items():
        assert f(ranking[:k], qrels, k) == f(ranking, qrels, k), name


@given(rankings, qrels_st)
def test_average_precision_is_one_exactly_when_relevant_documents_lead(
    ranking: list[str], qrels: dict[str, int]
) -> None:
    """AP == 1 if and only if the first R documents are exactly the R relevant ones."""
    relevant = relevant_ids(qrels)
    assume(relevant)
    leads = set(ranking[: len(relevant)]) == relevant
    assert (average_precision(ranking, qrels) == 1.0) is leads


@given(rankings, qrels_st, st.none() | cutoffs)
def test_reciprocal_rank_is_one_over_the_first_relevant_rank(
    ranking: list[str], qrels: dict[str, int], k: int | None
) -> None:
    """RR = 1 / (1-based rank of the first relevant document within k), else 0."""
    relevant = relevant_ids(qrels)
    ranks = [rank for rank, doc_id in enumerate(ranking, start=1) if doc_id in relevant]
    ranks = [rank for rank in ranks if k is None or rank <= k]
    expected = 1 / ranks[0] if ranks else 0.0
    assert reciprocal_rank(ranking, qrels, k) == expected


@given(rankings, qrels_st)
def test_r_precision_equals_recall_at_r(ranking: list[str], qrels: dict[str, int]) -> None:
    """rprec is recall at cutoff R = number of relevant documents."""
    r = len(relevant_ids(qrels))
    assume(r >= 1)
    assert r_precision(ranking, qrels) == recall_at_k(ranking, qrels, r)


@given(rankings, qrels_st, cutoffs)
def test_precision_and_recall_count_the_same_documents(
    ranking: list[str], qrels: dict[str, int], k: int
) -> None:
    """precision@k * k == recall@k * R: both are the number of relevant documents in the top k."""
    relevant = relevant_ids(qrels)
    assume(relevant)
    found = sum(1 for doc_id in ranking[:k] if doc_id in relevant)
    assert math.isclose(precision_at_k(ranking, qrels, k) * k, found)
    assert math.isclose(recall_at_k(ranking, qrels, k) * len(relevant), found)


@given(
    rankings,
    st.dictionaries(st.sampled_from(DOC_IDS), st.integers(min_value=0, max_value=1), max_size=8),
    st.none() | cutoffs,
)
def test_exponential_and_linear_ndcg_agree_on_binary_grades(
    ranking: list[str], qrels: dict[str, int], k: int | None
) -> None:
    """With grades 0 and 1 only, 2^g - 1 == g, so both nDCG variants are identical."""
    assert ndcg_exp_at_k(ranking, qrels, k) == ndcg_at_k(ranking, qrels, k)


@given(rankings, qrels_st, st.none() | cutoffs)
def test_ndcg_ignores_the_names_of_non_relevant_documents(
    ranking: list[str], qrels: dict[str, int], k: int | None
) -> None:
    """Renaming non-relevant documents (unjudged or grade 0) leaves nDCG unchanged."""
    relevant = relevant_ids(qrels)
    renamed = [doc_id if doc_id in relevant else f"other-{doc_id}" for doc_id in ranking]
    for ndcg in (ndcg_at_k, ndcg_exp_at_k):
        assert ndcg(renamed, qrels, k) == ndcg(ranking, qrels, k)
