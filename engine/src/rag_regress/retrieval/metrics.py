"""Retrieval metrics: one pure function each, with trec_eval's definitions.

Every function takes
  - `ranking`: document ids, best first, as the retriever returned them (no duplicates);
  - `qrels`: {document id: relevance grade} for one question. A document is *relevant* when
    its grade is at least `relevance_level` (trec_eval's `-l`; 1 by default, the
    `[retrieval] relevance_level` setting); lower grades and documents not in `qrels` are
    not relevant. Binary metrics (all but nDCG) take it as a keyword; nDCG has none: it
    weighs every positive grade by its gain whatever the level, as trec_eval's ndcg does;
  - `k`: a cutoff (at least 1) where the metric has one.

and returns a float in [0, 1]. A question with no relevant document scores 0 on every
metric, as in trec_eval; the evaluator leaves such (unanswerable) questions out of the
averages instead and reports how many it left out.

Each function's docstring is its metric's definition and edge cases: the metric's record in
names.REGISTRY shows it, next to the batch function (batch.py) that computes the same numbers
for many questions and the metric's trec_eval and ranx names (also in docs/metrics.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

Ranking = Sequence[str]
Qrels = Mapping[str, int]


def _relevant(qrels: Qrels, relevance_level: int) -> set[str]:
    return {doc_id for doc_id, grade in qrels.items() if grade >= relevance_level}


def _check_cutoff(k: int | None) -> None:
    if k is not None and k < 1:
        raise ValueError(f"cutoff k must be at least 1, got {k}")


def precision_at_k(ranking: Ranking, qrels: Qrels, k: int, *, relevance_level: int = 1) -> float:
    """Precision@k: relevant documents among the first k, divided by k.

    Divides by k even when fewer than k documents came back (trec_eval's `P_k`). A
    retriever that returns 1 correct document out of k=5 scores 0.2, not 1.0: dividing by
    the number returned instead would reward a retriever for giving up early (a tokenizer
    that drops short words returns fewer documents, and precision would *rise*).
    """
    _check_cutoff(k)
    relevant = _relevant(qrels, relevance_level)
    return sum(1 for doc_id in ranking[:k] if doc_id in relevant) / k


def recall_at_k(ranking: Ranking, qrels: Qrels, k: int, *, relevance_level: int = 1) -> float:
    """Recall@k: relevant documents among the first k, divided by all relevant documents.

    trec_eval's `recall_k`. 0.0 when there is no relevant document. Never decreases as k
    grows. Equals hit@k when there is exactly one relevant document.
    """
    _check_cutoff(k)
    relevant = _relevant(qrels, relevance_level)
    if not relevant:
        return 0.0
    return sum(1 for doc_id in ranking[:k] if doc_id in relevant) / len(relevant)


def hit_at_k(ranking: Ranking, qrels: Qrels, k: int, *, relevance_level: int = 1) -> float:
    """Hit@k: 1.0 when at least one relevant document is among the first k, else 0.0.

    trec_eval's `success_k`; its mean over questions is the "hit rate". 0.0 when there is
    no relevant document.
    """
    _check_cutoff(k)
    relevant = _relevant(qrels, relevance_level)
    return 1.0 if any(doc_id in relevant for doc_id in ranking[:k]) else 0.0


def reciprocal_rank(
    ranking: Ranking, qrels: Qrels, k: int | None = None, *, relevance_level: int = 1
) -> float:
    """Reciprocal rank: 1 / (rank of the first relevant document), ranks counted from 1.

    0.0 when no relevant document was retrieved (or none within the first k, when a cutoff
    is given). Without a cutoff this is trec_eval's `recip_rank`; its mean is MRR.
    """
    _check_cutoff(k)
    relevant = _relevant(qrels, relevance_level)
    for rank, doc_id in enumerate(ranking[:k], start=1):
        if doc_id in relevant:
            return 1.0 / rank
    return 0.0


def _ndcg(ranking: Ranking, qrels: Qrels, k: int | None, gain: Callable[[int], float]) -> float:
    _check_cutoff(k)
    grades = sorted((g for g in qrels.values() if g >= 1), reverse=True)
    ideal = sum(gain(g) / math.log2(rank + 1) for rank, g in enumerate(grades[:k], start=1))
    if ideal == 0.0:
        return 0.0
    dcg = sum(
        gain(qrels[doc_id]) / math.log2(rank + 1)
        for rank, doc_id in enumerate(ranking[:k], start=1)
        if qrels.get(doc_id, 0) >= 1
    )
    return dcg / ideal


def ndcg_at_k(ranking: Ranking, qrels: Qrels, k: int | None = None) -> float:
    """nDCG@k with linear gain, as trec_eval's `ndcg_cut_k` (and `ndcg` without a cutoff).

    DCG@k = sum over the first k ranks r of grade(doc at r) / log2(r + 1); nDCG@k divides it
    by the DCG@k of the ideal ranking (all relevant documents, highest grade first). Gain is
    the grade itself, so a grade-3 document counts three times a grade-1 document. Every
    positive grade counts, whatever `[retrieval] relevance_level` is (trec_eval's ndcg
    ignores `-l` too). 0.0 when there is no document of positive grade.
    """
    return _ndcg(ranking, qrels, k, gain=float)


def ndcg_exp_at_k(ranking: Ranking, qrels: Qrels, k: int | None = None) -> float:
    """nDCG@k with exponential gain 2**grade - 1 (Burges et al.; ranx's `ndcg_burges`).

    Same as `ndcg_at_k` except each document's gain is 2**grade - 1, which rewards putting
    the highest grades first more strongly. Identical to linear gain for binary relevance.
    Like `ndcg_at_k`, it ignores `relevance_level`. 0.0 when there is no document of
    positive grade.
    """
    return _ndcg(ranking, qrels, k, gain=lambda grade: 2.0**grade - 1.0)


def average_precision(
    ranking: Ranking, qrels: Qrels, k: int | None = None, *, relevance_level: int = 1
) -> float:
    """Average precision: the mean, over ALL relevant documents, of precision at the rank
    where each is retrieved; a relevant document never retrieved (or not within k) adds 0.

    trec_eval's `map` per query (`map_cut_k` with a cutoff); its mean is MAP. 1.0 exactly
    when every relevant document is retrieved ahead of every other document. 0.0 when there
    is no relevant document.
    """
    _check_cutoff(k)
    relevant = _relevant(qrels, relevance_level)
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for rank, doc_id in enumerate(ranking[:k], start=1):
        if doc_id in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


def r_precision(ranking: Ranking, qrels: Qrels, *, relevance_level: int = 1) -> float:
    """R-precision: precision at rank R, where R is the number of relevant documents.

    trec_eval's `Rprec`. Divides by R even when fewer than R documents came back. Equals
    recall@R. 0.0 when there is no relevant document.
    """
    relevant = _relevant(qrels, relevance_level)
    if not relevant:
        return 0.0
    return sum(1 for doc_id in ranking[: len(relevant)] if doc_id in relevant) / len(relevant)
