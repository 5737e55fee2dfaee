"""All metrics for many questions at once, with numpy: the fast path of the evaluator.

metrics.py holds the definitions, one readable function per metric and question. This
module computes the same numbers for thousands of questions in a few array operations,
so a 10k-question golden set is not held up by a Python loop per question and metric.
tests/engine/retrieval/test_batch.py checks, on generated input, that every value equals the
per-question function's.

How: only the *judged retrieved* documents affect any metric here (the relevant ones, and
for bpref, judged@k and the judged-only `_j` variants those judged non-relevant too), so the
work is on one entry per (question, retrieved document in its qrels): its rank and its grade.
A ranking of 1,000 ids with 3 judged documents costs 3 entries, not 1,000. A metric keeps the
entries it counts (`Judged.binary`: grade >= relevance_level; nDCG: positive grades), and a
judged-only metric is its function given the entries re-ranked among the judged ones
(`Judged.condensed`, by `compute`): the unjudged documents between them are exactly what the
ranks skip. Sums are taken in rank order with
`np.bincount`, which adds its weights in array order, and discounts use `math.log2`, so the
results are the same floats the per-question functions return (on Python < 3.12, whose `sum`
also adds in order; later versions differ in the last bit).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import chain, repeat

import numpy as np

from .metrics import Qrels, Ranking
from .ranking import as_float32

# Pairs compared per step when ranking relevant documents within a scored run: bounds the
# temporary [pairs x depth] array to a few MB whatever the run's size.
_CHUNK_CELLS = 1 << 22
# Scores read and ranked per block of a scored run: a few MB of dicts, which stay in the CPU
# cache between reading the block's scores and looking up its documents (measured best on
# the benchmark's 10k x 1000 and 100k x 100 runs among 2^14 to 2^17).
_BLOCK_CELLS = 1 << 16


@dataclass(frozen=True)
class Judged:
    """What the metrics need to know about a batch of rankings, sorted by (question, rank)."""

    question: np.ndarray  # question index of each retrieved document its qrels grade (any grade)
    rank: np.ndarray  # its rank, from 1
    grade: np.ndarray  # its grade (negative: unjudged, as trec_eval reads it; metrics.is_judged)
    num_relevant: np.ndarray  # per question: documents with grade >= level in its qrels
    num_nonrelevant: np.ndarray  # per question: judged non-relevant ones, 0 <= grade < level (bpref's N)
    ideal: np.ndarray  # per question: positive grades, highest first, 0-padded (nDCG's ideal)
    level: int = 1  # relevance_level (trec_eval's -l): binary metrics count grade >= level

    @property
    def questions(self) -> int:
        return len(self.num_relevant)

    # The views the metrics read, each made once per batch however many metrics read it:
    # filtering every entry again for each metric cost more than the metrics themselves.
    @cached_property
    def binary(self) -> Judged:
        """Only the documents binary metrics count as relevant (grade >= level)."""
        return _keep(self, self.grade >= self.level)

    @cached_property
    def positive(self) -> Judged:
        """Only the documents of positive grade: nDCG weighs every one by its gain, as
        trec_eval's ndcg does whatever its `-l`."""
        return self.binary if self.level <= 1 else _keep(self, self.grade >= 1)

    @cached_property
    def condensed(self) -> Judged:
        """The condensed rankings that trec_eval's -J evaluates: the unjudged entries dropped
        (metrics.condensed) and each judged one ranked among the judged ones, which are
        exactly the entries of its question above it."""
        judged = _keep(self, self.grade >= 0)
        return replace(judged, rank=_position(judged.question))


def _keep(j: Judged, keep: np.ndarray) -> Judged:
    """`j` with only the entries where `keep`; order kept: still sorted by (question, rank)."""
    if keep.all():  # the usual case (qrels of relevant documents only): no copy
        return j
    return replace(j, question=j.question[keep], rank=j.rank[keep], grade=j.grade[keep])


def _position(question: np.ndarray) -> np.ndarray:
    """Each entry's position among its question's entries, from 1 (`question` sorted)."""
    return np.arange(len(question)) - np.searchsorted(question, question, side="left") + 1


class _Collector:
    """Flat lists filled by one pass over the questions, turned into a `Judged` at the end."""

    def __init__(self) -> None:
        self.question: list[int] = []  # *retrieved* documents in the qrels
        self.rank: list[int] = []
        self.grade: list[int] = []
        self.qrels_question: list[int] = []  # *all* documents in the qrels (recall, ideal DCG, bpref)
        self.qrels_grade: list[int] = []

    def qrels(self, index: int, qrels: Qrels) -> list[tuple[str, int]]:
        """Record question `index`'s qrels; return them as (id, grade)."""
        graded = list(qrels.items())
        self.qrels_question += [index] * len(graded)
        self.qrels_grade += [g for _, g in graded]
        return graded

    def judged(self, questions: int, level: int) -> Judged:
        return _judged(
            questions,
            np.array(self.question, dtype=np.int64),
            np.array(self.rank, dtype=np.int64),
            np.array(self.grade, dtype=np.int64),
            np.array(self.qrels_question, dtype=np.int64),
            np.array(self.qrels_grade, dtype=np.int64),
            level,
        )


def _judged(
    questions: int,
    question: np.ndarray,
    rank: np.ndarray,
    grade: np.ndarray,
    qrels_question: np.ndarray,
    qrels_grade: np.ndarray,
    level: int,
) -> Judged:
    """Sort the retrieved documents in the qrels by (question, rank); build the ideal grades
    and count each question's relevant and judged non-relevant documents at relevance level
    `level`, from every (question, grade) of the qrels."""
    # One stable sort of an integer key, not a lexsort: entries arrive grouped by question
    # (both callers build them so), which timsort handles in close to one pass.
    order = np.argsort(question * (int(rank.max(initial=0)) + 1) + rank, kind="stable")
    num_relevant = np.bincount(qrels_question[qrels_grade >= level], minlength=questions)
    nonrelevant = (qrels_grade >= 0) & (qrels_grade < level)
    num_nonrelevant = np.bincount(qrels_question[nonrelevant], minlength=questions)
    # Ideal grades: each question's positive grades in a row of its own, then every row sorted,
    # highest first.
    positive = qrels_grade >= 1
    relevant_question, relevant_grade = qrels_question[positive], qrels_grade[positive]
    num_positive = np.bincount(relevant_question, minlength=questions)
    by_question = np.argsort(relevant_question, kind="stable")
    starts = np.cumsum(num_positive) - num_positive
    column = np.arange(len(relevant_question)) - np.repeat(starts, num_positive)
    ideal = np.zeros((questions, int(num_positive.max(initial=0))), dtype=np.int64)
    ideal[relevant_question[by_question], column] = relevant_grade[by_question]
    ideal = -np.sort(-ideal, axis=1)
    return Judged(question[order], rank[order], grade[order], num_relevant, num_nonrelevant, ideal, level)


def judge_rankings(rankings: Sequence[Ranking], qrels: Sequence[Qrels], relevance_level: int = 1) -> Judged:
    """Judge rankings that are already in order (best first), e.g. a retriever's hits, against
    qrels {document id: grade}: grade 0 is judged non-relevant, a document absent unjudged (as
    trec_eval's qrels); binary metrics count grades >= `relevance_level` as relevant (-l)."""
    out = _Collector()
    for index, (ranking, judged) in enumerate(zip(rankings, qrels, strict=True)):
        graded = out.qrels(index, judged)
        if len(graded) > 8:  # many judged documents: one pass over the ranking
            wanted = dict(graded)
            found = [(r, wanted[d]) for r, d in enumerate(ranking, start=1) if d in wanted]
        else:  # a few: list.index scans in C, much faster than a Python loop
            found = []
            for doc_id, g in graded:
                with contextlib.suppress(ValueError):  # not retrieved
                    found.append((ranking.index(doc_id) + 1, g))
        for r, g in found:
            out.question.append(index)
            out.rank.append(r)
            out.grade.append(g)
    return out.judged(len(rankings), relevance_level)


def judge_run(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Qrels], relevance_level: int = 1
) -> tuple[list[str], Judged]:
    """Judge a scored run {question id: {doc id: score}} as trec_eval ranks it.

    Documents are ranked by score, highest first, scores compared in float32 as trec_eval
    stores them; equal scores by document id, descending (trec_eval's order,
    `ranking.trec_order`; `ranking.top_hits` uses the same). Every question in `qrels` is
    evaluated, in `qrels` order; one missing from `run` retrieved nothing. Scores must be
    finite, as the run loaders check. Returns the question ids and their judgements.
    """
    ids = list(qrels)
    rows = list(map(run.get, ids, repeat({})))  # the empty run is shared, and only read
    judged = list(qrels.values())
    counts = np.fromiter(map(len, judged), dtype=np.int64, count=len(judged))
    grade = np.fromiter(chain.from_iterable(j.values() for j in judged), dtype=np.int64, count=counts.sum())
    question = np.repeat(np.arange(len(ids), dtype=np.int64), counts)
    # Only documents in the qrels affect any metric: their scores are looked up, NaN if not retrieved.
    docs = list(chain.from_iterable(judged))
    score, ahead, ahead_or_tied = _rank_scored(rows, docs, question)

    retrieved = ~np.isnan(score)
    where = np.flatnonzero(retrieved)
    q, rank = question[where], ahead[where] + 1
    for i in np.flatnonzero(ahead_or_tied[where] - ahead[where] > 1):  # equal scores: rare with real scores
        doc, value, row = docs[where[i]], float(score[where[i]]), rows[q[i]]
        tied = as_float32(np.fromiter(row.values(), dtype=np.float64, count=len(row))).tolist()
        rank[i] += sum(1 for other, v in zip(row, tied, strict=True) if v == value and other > doc)
    return ids, _judged(len(ids), q, rank, grade[where], question, grade, relevance_level)


def _rank_scored(
    rows: list[Mapping[str, float]], docs: list[str], owner: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of `docs` (docs[i] belongs to rows[owner[i]]; `owner` ascending): its score
    in its row as a float32 (NaN: not there), and how many of the row's scores are > it and
    >= it, compared in float32 as trec_eval compares them.

    A block of rows at a time: the block's scores are read into a small matrix with
    `np.fromiter`, its documents looked up with `map`, both in C, and ranked while the
    block is still in the CPU cache. No matrix of the whole run is ever held.
    """
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    get: Callable[..., float] = dict.get if all(type(row) is dict for row in rows) else _get
    docs_per_row = np.bincount(owner, minlength=len(rows))
    row_ends = np.concatenate(([0], np.cumsum(lengths))).tolist()
    doc_ends = np.concatenate(([0], np.cumsum(docs_per_row))).tolist()
    score = np.empty(len(docs), dtype=np.float32)
    greater, greater_equal = np.zeros(len(docs), dtype=np.int64), np.zeros(len(docs), dtype=np.int64)
    step = max(1, _BLOCK_CELLS // max(int(lengths.max(initial=0)), 1))
    for start in range(0, len(rows), step):
        stop = min(start + step, len(rows))
        block, first, last = rows[start:stop], doc_ends[start], doc_ends[stop]
        values = as_float32(
            np.fromiter(
                chain.from_iterable(row.values() for row in block),
                dtype=np.float64,
                count=row_ends[stop] - row_ends[start],
            )
        )
        each_row = chain.from_iterable(map(repeat, block, docs_per_row[start:stop].tolist()))
        score[first:last] = as_float32(
            np.fromiter(
                map(get, each_row, docs[first:last], repeat(math.nan)), dtype=np.float64, count=last - first
            )
        )
        found = first + np.flatnonzero(~np.isnan(score[first:last]))
        if len(found):
            matrix = _as_matrix(values, lengths[start:stop])
            greater[found], greater_equal[found] = _count_ahead(matrix, owner[found] - start, score[found])
    return score, greater, greater_equal


def _as_matrix(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Rows of `lengths` values each, as a [rows x longest] matrix padded with NaN (NaN
    compares false with everything, so padding never counts as ahead of a document)."""
    width = int(lengths.max(initial=0))
    if (lengths == width).all():
        return values.reshape(len(lengths), width)
    matrix = np.full((len(lengths), width), np.nan, dtype=values.dtype)
    matrix[np.arange(width) < lengths[:, None]] = values
    return matrix


def _get(row: Mapping[str, float], doc_id: str, default: float) -> float:
    return row.get(doc_id, default)


def _count_ahead(scores: np.ndarray, q: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each (question q[i], score s[i]), s[i] being one of that question's scores: how
    many of the question's scores are > s[i], and how many are >= s[i]."""
    width = scores.shape[1]
    greater, greater_equal = np.zeros(len(q), dtype=np.int64), np.zeros(len(q), dtype=np.int64)
    if width == 0 or len(q) == 0:
        return greater, greater_equal
    # Runs usually arrive best first (retrievers and run files list them so): binary search
    # those rows, log2(depth) steps for all documents at once. In such a row the scores
    # equal to s[i] follow the greater ones; s[i] itself is one, and usually the only one.
    descending: np.ndarray = ~np.any(scores[:, 1:] > scores[:, :-1], axis=1)
    fast = np.flatnonzero(descending[q])
    cell = _first_not_ahead(scores, q[fast], s[fast])  # flat index of s[i]'s first equal score
    greater[fast] = cell - q[fast] * width
    greater_equal[fast] = greater[fast] + 1
    following = np.minimum(cell + 1, scores.size - 1)
    ties = fast[(greater[fast] + 1 < width) & (scores.ravel()[following] == s[fast])]
    for i in ties:  # more than one score equal to s[i]: count them (rare with real scores)
        greater_equal[i] = np.count_nonzero(scores[q[i]] >= s[i])
    # The other rows: compare in full, a bounded number of rows at a time.
    slow = np.flatnonzero(~descending[q])
    step = max(1, _CHUNK_CELLS // width)
    for start in range(0, len(slow), step):
        part = slow[start : start + step]
        row = scores[q[part]]
        greater[part] = (row > s[part, None]).sum(axis=1)
        greater_equal[part] = (row >= s[part, None]).sum(axis=1)
    return greater, greater_equal


def _first_not_ahead(scores: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Flat index of the first score in descending row q[i] that is not > s[i], s[i] being one
    of that row's scores: a branch-free binary search, the same steps for every row at once."""
    flat = scores.ravel()
    cell: np.ndarray = q * scores.shape[1]
    remaining = scores.shape[1]
    # Invariant: the answer is in [cell, cell + remaining - 1], inside the row (s[i] is in it).
    while remaining > 1:
        half = remaining // 2
        np.add(cell, half, out=cell, where=flat[cell + half - 1] > s)
        remaining -= half
    return cell


# --- one function per metric, over all questions at once ---
# Each takes a `Judged` (and the cutoff k where the metric has one) and returns one value per
# question, equal to the function of the same name in metrics.py, which holds the definition.
# names.REGISTRY pairs the two in the metric's record.


def _count_within(j: Judged, k: int | np.ndarray | None) -> np.ndarray:
    """Relevant documents within the first k, per question."""
    inside = (
        np.ones(len(j.rank), dtype=bool)
        if k is None
        else j.rank <= (k[j.question] if isinstance(k, np.ndarray) else k)
    )
    return np.bincount(j.question[inside], minlength=j.questions).astype(np.float64)


def _per_relevant(j: Judged, count: np.ndarray) -> np.ndarray:
    out = np.zeros(j.questions)
    np.divide(count, j.num_relevant, out=out, where=j.num_relevant > 0)
    return out


def precision_at_k(j: Judged, k: int) -> np.ndarray:
    j = j.binary
    return _count_within(j, k) / k


def recall_at_k(j: Judged, k: int) -> np.ndarray:
    j = j.binary
    return _per_relevant(j, _count_within(j, k))


def hit_at_k(j: Judged, k: int) -> np.ndarray:
    j = j.binary
    return (_count_within(j, k) > 0).astype(np.float64)


def reciprocal_rank(j: Judged, k: int | None = None) -> np.ndarray:
    j = j.binary
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
    j = j.positive
    columns = j.ideal.shape[1] if k is None else min(k, j.ideal.shape[1])
    discount = _discounts(max(columns, int(j.rank.max(initial=0))))
    ideal = np.zeros(j.questions)
    for column in range(columns):  # column by column: each row summed in rank order
        ideal += gain(j.ideal[:, column]) / discount[column]
    inside = np.ones(len(j.rank), dtype=bool) if k is None else j.rank <= k
    dcg = np.bincount(
        j.question[inside],
        weights=gain(j.grade[inside]) / discount[j.rank[inside] - 1],
        minlength=j.questions,
    )
    out = np.zeros(j.questions)
    np.divide(dcg, ideal, out=out, where=ideal != 0.0)
    return out


def ndcg_at_k(j: Judged, k: int | None = None) -> np.ndarray:
    return _ndcg(j, k, lambda grade: grade.astype(np.float64))


def ndcg_exp_at_k(j: Judged, k: int | None = None) -> np.ndarray:
    return _ndcg(j, k, lambda grade: 2.0 ** grade.astype(np.float64) - 1.0)


def average_precision(j: Judged, k: int | None = None) -> np.ndarray:
    j = j.binary
    found = _position(j.question)  # the n-th entry of a question is its n-th find
    inside = np.ones(len(j.rank), dtype=bool) if k is None else j.rank <= k
    total = np.bincount(j.question[inside], weights=found[inside] / j.rank[inside], minlength=j.questions)
    return _per_relevant(j, total)


def r_precision(j: Judged) -> np.ndarray:
    j = j.binary
    return _per_relevant(j, _count_within(j, j.num_relevant))


def bpref(j: Judged) -> np.ndarray:
    j = j.condensed  # unjudged documents skipped; rank = judged documents down to this one
    relevant = j.grade >= j.level
    q = j.question[relevant]
    # Judged documents above a relevant one, less the relevant ones above it (its find, from 1,
    # less 1): the judged non-relevant documents above it.
    above = j.rank[relevant] - _position(q)
    r, n = j.num_relevant[q], j.num_nonrelevant[q]
    term = np.ones(len(q))
    some = above > 0  # then n >= above > 0: the denominator is never 0
    term[some] = 1.0 - np.minimum(above[some], r[some]) / np.minimum(r[some], n[some])
    return _per_relevant(j, np.bincount(q, weights=term, minlength=j.questions))


def judged_at_k(j: Judged, k: int) -> np.ndarray:
    inside = (j.grade >= 0) & (j.rank <= k)
    return np.bincount(j.question[inside], minlength=j.questions) / k
