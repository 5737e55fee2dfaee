"""All metrics for many questions at once, with numpy: the fast path of the evaluator.

metrics.py holds the definitions, one readable function per metric and question. This
module computes the same numbers for thousands of questions in a few array operations,
so a 10k-question golden set is not held up by a Python loop per question and metric.
tests/test_batch.py checks, on generated input, that every value equals the per-question
function's.

How: only the *relevant retrieved* documents affect any metric here, so the work is on
one entry per (question, relevant retrieved document): its rank and its grade. A ranking
of 1,000 ids with 3 relevant documents costs 3 entries, not 1,000. Sums are taken in rank
order with `np.bincount`, which adds its weights in array order, and discounts use
`math.log2`, so the results are the same floats the per-question functions return
(on Python < 3.12, whose `sum` also adds in order; later versions differ in the last bit).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from .metric_names import Metric
from .metrics import Qrels, Ranking

# Pairs compared per step when ranking relevant documents within a scored run: bounds the
# temporary [pairs x depth] array to a few MB whatever the run's size.
_CHUNK_CELLS = 1 << 22


@dataclass(frozen=True)
class Judged:
    """What the metrics need to know about a batch of rankings, sorted by (question, rank)."""

    question: np.ndarray  # question index of each relevant retrieved document
    rank: np.ndarray  # its rank, from 1
    grade: np.ndarray  # its grade (>= 1)
    num_relevant: np.ndarray  # per question: documents with grade >= 1 in its qrels
    ideal: np.ndarray  # per question: relevant grades, highest first, 0-padded

    @property
    def questions(self) -> int:
        return len(self.num_relevant)

    @classmethod
    def build(cls, question: list[int], rank: list[int], grade: list[int], qrels: Sequence[Qrels]) -> Judged:
        question_a = np.array(question, dtype=np.int64)
        rank_a = np.array(rank, dtype=np.int64)
        order = np.lexsort((rank_a, question_a))
        graded = [sorted((g for g in q.values() if g >= 1), reverse=True) for q in qrels]
        num_relevant = np.fromiter(map(len, graded), dtype=np.int64, count=len(graded))
        ideal = np.zeros((len(graded), int(num_relevant.max(initial=0))), dtype=np.int64)
        ideal[np.arange(ideal.shape[1]) < num_relevant[:, None]] = list(chain.from_iterable(graded))
        return cls(
            question_a[order], rank_a[order], np.array(grade, dtype=np.int64)[order], num_relevant, ideal
        )


def judge_rankings(rankings: Sequence[Ranking], qrels: Sequence[Qrels]) -> Judged:
    """Judge rankings that are already in order (best first), e.g. a retriever's hits."""
    question, rank, grade = [], [], []
    for index, (ranking, judged) in enumerate(zip(rankings, qrels, strict=True)):
        relevant = [(doc_id, g) for doc_id, g in judged.items() if g >= 1]
        if len(relevant) > 8:  # many relevant documents: one pass over the ranking
            wanted = dict(relevant)
            found = [(r, wanted[d]) for r, d in enumerate(ranking, start=1) if d in wanted]
        else:  # a few: list.index scans in C, much faster than a Python loop
            found = []
            for doc_id, g in relevant:
                try:
                    found.append((ranking.index(doc_id) + 1, g))
                except ValueError:
                    pass
        for r, g in found:
            question.append(index)
            rank.append(r)
            grade.append(g)
    return Judged.build(question, rank, grade, qrels)


def judge_run(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Qrels]) -> tuple[list[str], Judged]:
    """Judge a scored run {question id: {doc id: score}} as trec_eval ranks it.

    Documents are ranked by score, highest first; equal scores by document id, descending
    (trec_eval's order; `ranking.top_hits` uses the same). Every question in `qrels` is
    evaluated, in `qrels` order; one missing from `run` retrieved nothing. Returns the
    question ids and their judgements.
    """
    ids = list(qrels)
    rows = [run.get(qid, {}) for qid in ids]
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    flat = np.fromiter(chain.from_iterable(row.values() for row in rows), dtype=np.float64, count=lengths.sum())
    width = int(lengths.max(initial=0))
    if len(rows) and (lengths == width).all():
        scores = flat.reshape(len(rows), width)
    else:  # NaN padding compares unequal to everything, so it never outranks a document
        scores = np.full((len(rows), width), np.nan)
        scores[np.arange(width) < lengths[:, None]] = flat

    question, doc, score, grade = [], [], [], []
    for index, (qid, row) in enumerate(zip(ids, rows, strict=True)):
        for doc_id, g in qrels[qid].items():
            if g >= 1 and doc_id in row:
                question.append(index)
                doc.append(doc_id)
                score.append(row[doc_id])
                grade.append(g)
    q = np.array(question, dtype=np.int64)
    s = np.array(score, dtype=np.float64)
    rank = np.empty(len(q), dtype=np.int64)
    step = max(1, _CHUNK_CELLS // max(width, 1))
    for start in range(0, len(q), step):
        part = slice(start, start + step)
        block, mine = scores[q[part]], s[part, None]
        rank[part] = (block > mine).sum(axis=1) + 1
        for offset in np.flatnonzero((block == mine).sum(axis=1) > 1):  # ties: rare with real scores
            i = start + offset
            row = rows[question[i]]
            rank[i] += sum(1 for other, value in row.items() if value == score[i] and other > doc[i])
    return ids, Judged.build(question, rank.tolist(), grade, [qrels[qid] for qid in ids])


# --- one function per metric, over all questions at once (definitions: metrics.py) ---


def _count_within(j: Judged, k: int | np.ndarray | None) -> np.ndarray:
    """Relevant documents within the first k, per question."""
    inside = np.ones(len(j.rank), dtype=bool) if k is None else j.rank <= (k if np.isscalar(k) else k[j.question])
    return np.bincount(j.question[inside], minlength=j.questions).astype(np.float64)


def _per_relevant(j: Judged, count: np.ndarray) -> np.ndarray:
    out = np.zeros(j.questions)
    np.divide(count, j.num_relevant, out=out, where=j.num_relevant > 0)
    return out


def _precision(j: Judged, k: int) -> np.ndarray:
    return _count_within(j, k) / k


def _recall(j: Judged, k: int) -> np.ndarray:
    return _per_relevant(j, _count_within(j, k))


def _hit(j: Judged, k: int) -> np.ndarray:
    return (_count_within(j, k) > 0).astype(np.float64)


def _reciprocal_rank(j: Judged, k: int | None = None) -> np.ndarray:
    first = np.full(j.questions, np.iinfo(np.int64).max)
    np.minimum.at(first, j.question, j.rank)
    out = np.zeros(j.questions)
    reached = first <= (k if k is not None else np.iinfo(np.int64).max - 1)
    out[reached] = 1.0 / first[reached]
    return out


def _discounts(n: int) -> np.ndarray:
    """log2(rank + 1) for ranks 1..n, with math.log2 as metrics.py uses (bit-identical)."""
    return np.array([math.log2(rank + 1) for rank in range(1, n + 1)])


def _ndcg(j: Judged, k: int | None, gain: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    columns = j.ideal.shape[1] if k is None else min(k, j.ideal.shape[1])
    discount = _discounts(max(columns, int(j.rank.max(initial=0))))
    ideal = np.zeros(j.questions)
    for column in range(columns):  # column by column: each row summed in rank order
        ideal += gain(j.ideal[:, column]) / discount[column]
    inside = np.ones(len(j.rank), dtype=bool) if k is None else j.rank <= k
    dcg = np.bincount(
        j.question[inside], weights=gain(j.grade[inside]) / discount[j.rank[inside] - 1], minlength=j.questions
    )
    out = np.zeros(j.questions)
    np.divide(dcg, ideal, out=out, where=ideal != 0.0)
    return out


def _ndcg_linear(j: Judged, k: int | None = None) -> np.ndarray:
    return _ndcg(j, k, lambda grade: grade.astype(np.float64))


def _ndcg_exp(j: Judged, k: int | None = None) -> np.ndarray:
    return _ndcg(j, k, lambda grade: 2.0 ** grade.astype(np.float64) - 1.0)


def _average_precision(j: Judged, k: int | None = None) -> np.ndarray:
    # Entries are sorted by (question, rank): the n-th entry of a question is its n-th find.
    starts = np.searchsorted(j.question, j.question, side="left")
    found = np.arange(len(j.question)) - starts + 1
    inside = np.ones(len(j.rank), dtype=bool) if k is None else j.rank <= k
    total = np.bincount(j.question[inside], weights=found[inside] / j.rank[inside], minlength=j.questions)
    return _per_relevant(j, total)


def _r_precision(j: Judged) -> np.ndarray:
    return _per_relevant(j, _count_within(j, j.num_relevant))


BATCH: dict[str, Callable[..., np.ndarray]] = {
    "precision": _precision,
    "recall": _recall,
    "hit": _hit,
    "mrr": _reciprocal_rank,
    "ndcg": _ndcg_linear,
    "ndcg_exp": _ndcg_exp,
    "map": _average_precision,
    "rprec": _r_precision,
}


def compute(judged: Judged, metrics: Sequence[Metric]) -> dict[str, np.ndarray]:
    """{metric name: one value per question}, equal to metrics.py's functions."""
    return {str(m): BATCH[m.name](judged) if m.k is None else BATCH[m.name](judged, m.k) for m in metrics}
