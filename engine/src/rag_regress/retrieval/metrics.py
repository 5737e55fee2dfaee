"""Retrieval metrics: one pure function each, with trec_eval's definitions.

Every function takes
  - `ranking`: document ids, best first, as the retriever returned them (no duplicates);
  - `qrels`: {document id: relevance grade} for one question. A document is *relevant* when
    its grade is at least `relevance_level` (trec_eval's `-l`; 1 by default, the
    `[retrieval] relevance_level` setting); lower grades and documents not in `qrels` are
    not relevant. Binary metrics take it as a keyword; nDCG has none: it weighs every
    positive grade by its gain whatever the level, as trec_eval's ndcg does; neither has
    judged@k, which asks only whether a document was judged;
  - `k`: a cutoff (at least 1) where the metric has one.

and returns a float in [0, 1]. A question with no relevant document scores 0 on every
metric (but judged@k), as in trec_eval; the evaluator leaves such (unanswerable) questions
out of the averages instead and reports how many it left out.

Judged and unjudged, as trec_eval reads qrels: a document is *judged* when `qrels` grades it
0 or more, so grade 0 means judged non-relevant; a document absent from `qrels` is unjudged,
and so is one with a negative grade (trec_eval's "in the pool but unjudged"). Most metrics
treat unjudged documents as non-relevant; bpref skips them, judged@k measures how many there
are, and a metric's judged-only variant (named `<metric>_j`) is the metric of the ranking
with them removed (`condensed`, trec_eval's `-J`): the same function, given the condensed
ranking (names.Metric does it).

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


def is_judged(grade: int | None) -> bool:
    """Whether a document of this grade (None: not in the qrels) is judged: graded 0 or more,
    as trec_eval reads qrels (a negative grade is its "in the pool but unjudged")."""
    return grade is not None and grade >= 0


def condensed(ranking: Ranking, qrels: Qrels) -> list[str]:
    """The ranking without its unjudged documents, in its order: the condensed list that
    trec_eval's `-J` (judged_docs_only) evaluates. Documents keep their order; their ranks
    close up.

    Every metric but judged@k has a judged-only variant, `<name>_j` (`ndcg_j@10`, `map_j`,
    `P_j@5`): the metric's function applied to this list, so unjudged documents neither count
    against the retriever nor take a place in the top k (a cutoff counts the first k judged
    documents). Denominators stay the plain metric's: k, R, the ideal DCG; edge cases too (0.0
    when there is no relevant document). So recall_j@k is never below recall@k and equals it
    at any k beyond the ranking; map_j is "condensed-list AP" (Sakai, 2007); bpref_j equals
    bpref, which already skips unjudged documents. Each is trec_eval's measure of the plain
    metric run with `-J`; ndcg_exp_j, which trec_eval lacks, is ranx's `ndcg_burges` of this
    list. judged@k has none: every document of this list is judged.
    """
    return [doc_id for doc_id in ranking if is_judged(qrels.get(doc_id))]


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


def bpref(ranking: Ranking, qrels: Qrels, *, relevance_level: int = 1) -> float:
    """Bpref: each relevant document retrieved adds 1 - min(n, R) / min(R, N), n being the
    judged non-relevant documents ranked above it (1 when n is 0); the sum is divided by R.

    R is the number of relevant documents, N the number judged non-relevant (graded 0 up to
    relevance_level - 1; at relevance_level 2 a grade-1 document is one). trec_eval's `bpref`
    (Buckley and Voorhees, 2004): the share of (relevant, judged non-relevant) preferences
    the ranking keeps, counting at most R non-relevant documents. Unjudged documents, retrieved
    or not, change nothing, as if they were not there: bpref equals its condensed variant. 0.0
    when there is no relevant document; with no judged non-relevant document (N = 0) it is the
    share of relevant documents retrieved, recall without a cutoff.
    """
    relevant = len(_relevant(qrels, relevance_level))
    if not relevant:
        return 0.0
    nonrelevant = sum(1 for grade in qrels.values() if 0 <= grade < relevance_level)
    above, total = 0, 0.0
    for doc_id in ranking:
        grade = qrels.get(doc_id)
        if not is_judged(grade):
            continue
        if grade is not None and grade >= relevance_level:
            # `above` > 0 implies N >= above > 0: the denominator is never 0
            total += 1.0 - min(above, relevant) / min(relevant, nonrelevant) if above else 1.0
        else:
            above += 1
    return total / relevant


def judged_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    """Judged@k: documents among the first k that have a judgment (any grade, 0 included),
    divided by k.

    ir_measures' `Judged@k`; trec_eval's `P_k` at relevance level 0 (`-l 0`). It ignores
    `relevance_level`, and a question with no relevant document has one too. Divides by k
    even when fewer than k documents came back, as precision does. A low value says the
    other metrics count many documents nobody judged as non-relevant: the retriever may be
    better than they say (compare the condensed `_j` variants, which drop them).
    """
    _check_cutoff(k)
    return sum(1 for doc_id in ranking[:k] if is_judged(qrels.get(doc_id))) / k
