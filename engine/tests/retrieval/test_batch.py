"""The batch path (batch.py) returns what the per-question definitions (metrics.py) return."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rag_regress.api import Hit
from rag_regress.retrieval.batch import judge_rankings, judge_run
from rag_regress.retrieval.names import Metric, compute, variants
from rag_regress.retrieval.ranking import trec_order

DOC_IDS = [f"d{i}" for i in range(12)]

rankings = st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=len(DOC_IDS))  # short and empty too
qrels_st = st.dictionaries(st.sampled_from(DOC_IDS), st.integers(min_value=0, max_value=3), max_size=10)
questions = st.lists(st.tuples(rankings, qrels_st), max_size=8)
cutoffs = st.one_of(st.none(), st.integers(min_value=1, max_value=14))
levels = st.integers(min_value=1, max_value=4)  # relevance_level; 4 is above every grade here


def metrics_for(k: int | None) -> list[Metric]:
    """Every metric of the registry, judged-only ones too, at cutoff k (None: without one)
    where the metric allows it."""
    chosen = []
    for _, record, judged_only in variants():
        if record.cutoff == "none":
            chosen.append(Metric(record.name, None, judged_only))
        elif record.cutoff == "required":
            chosen.append(Metric(record.name, k or 3, judged_only))
        else:
            chosen.append(Metric(record.name, k, judged_only))
    return chosen


def assert_equal_to_reference(
    ranked: list[list[str]],
    qrels: list[dict[str, int]],
    values: dict[str, object],
    metrics: list[Metric],
    level: int = 1,
) -> None:
    for metric in metrics:
        got = values[str(metric)]
        assert len(got) == len(ranked)
        for ranking, judged, value in zip(ranked, qrels, got, strict=True):
            expected = metric(ranking, judged, level)
            assert abs(value - expected) <= 1e-9, (str(metric), level, ranking, judged, value, expected)


@given(questions, cutoffs)
def test_batch_equals_per_question_functions(
    batch: list[tuple[list[str], dict[str, int]]], k: int | None
) -> None:
    """Graded relevance, grade 0, no relevant document, short and empty rankings."""
    ranked = [ranking for ranking, _ in batch]
    qrels = [judged for _, judged in batch]
    metrics = metrics_for(k)
    assert_equal_to_reference(ranked, qrels, compute(judge_rankings(ranked, qrels), metrics), metrics)


@given(questions, cutoffs, levels)
def test_batch_equals_per_question_functions_at_every_relevance_level(
    batch: list[tuple[list[str], dict[str, int]]], k: int | None, level: int
) -> None:
    """relevance_level (trec_eval's -l): binary metrics count grades >= level, nDCG every grade."""
    ranked = [ranking for ranking, _ in batch]
    qrels = [judged for _, judged in batch]
    metrics = metrics_for(k)
    values = compute(judge_rankings(ranked, qrels, level), metrics)
    assert_equal_to_reference(ranked, qrels, values, metrics, level)


# Scores with exact ties and near-ties: 1.0 and 1.0 + 1e-9 are one float32, hence tied.
SCORES = [0.5, 1.0, 1.0 + 1e-9, 1.0 - 1e-9, 2.0, 2.0 + 3e-9, 3.5]


@given(
    st.lists(
        st.tuples(
            st.dictionaries(st.sampled_from(DOC_IDS), st.sampled_from(SCORES), max_size=12),
            qrels_st,
        ),
        max_size=6,
    ),
    cutoffs,
    levels,
)
def test_scored_run_ranks_as_trec_eval(
    batch: list[tuple[dict[str, float], dict[str, int]]], k: int | None, level: int
) -> None:
    """A {doc: score} run is ranked by float32 score, ties by document id descending (few
    distinct scores and near-ties 1e-9 apart, so ties are common), then scored like the
    per-question functions at the relevance level."""
    run = {f"q{i}": scores for i, (scores, _) in enumerate(batch)}
    qrels = {f"q{i}": judged for i, (_, judged) in enumerate(batch)}
    metrics = metrics_for(k)
    ranked = [[hit.doc_id for hit in trec_order(Hit(d, s) for d, s in run[q].items())] for q in qrels]
    # Any order in the dict, and best first (the order retrievers write; a faster path).
    in_rank_order = {q: {d: run[q][d] for d in ranking} for q, ranking in zip(qrels, ranked, strict=True)}
    for given_run in (run, in_rank_order):
        ids, judged = judge_run(given_run, qrels, level)
        assert ids == list(qrels)
        values = compute(judged, metrics)
        assert_equal_to_reference(ranked, [qrels[q] for q in ids], values, metrics, level)


def test_question_missing_from_run_retrieved_nothing() -> None:
    ids, judged = judge_run({"q1": {"a": 1.0}}, {"q1": {"a": 1}, "q2": {"a": 1}})
    values = compute(judged, [Metric("recall", 5)])
    assert ids == ["q1", "q2"] and values["recall@5"].tolist() == [1.0, 0.0]
