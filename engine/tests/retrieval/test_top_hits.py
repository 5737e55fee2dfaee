"""Top-k selection over a whole index (`top_hits`, `Chunks.top`) and the order check of
`trec_order`: the same hits as sorting every candidate by trec_eval's rule, in corpora large
enough that the selection first reads a sample of the scores for a bound."""

from __future__ import annotations

from random import Random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_regress.api import Document, Hit
from rag_regress.inputs.reading import DuplicateKey, unique_pairs
from rag_regress.retrieval.chunks import chunk_corpus
from rag_regress.retrieval.ranking import (
    SAMPLE_STRIDE,
    as_float32,
    ascending_id_rank,
    top_hits,
    trec_order,
)

# Scores a large index gives: many zeros (no shared term), repeats (copies of a document),
# doubles one float32 apart or within one float32 (ties only in float32), a score too large
# for float32 (+inf there) and one too small (0 there, though positive).
SCORES = st.sampled_from(
    [0.0, 0.0, 0.0, 1.5, 2.0, 2.0000000001, 2.0000002, 7.25, 7.25, 3e38, 1e39, 1e-50, 0.1]
)
LARGE = st.lists(SCORES, min_size=SAMPLE_STRIDE, max_size=40 * SAMPLE_STRIDE)


def by_sorting(scores: list[float], ids: list[str], depth: int) -> list[Hit]:
    """The reference: every positive score, sorted as trec_eval sorts a run, cut at depth."""
    return trec_order(Hit(i, s) for i, s in zip(ids, scores, strict=True) if s > 0)[:depth]


@settings(max_examples=300, deadline=None)
@given(LARGE, st.integers(min_value=1, max_value=12), st.randoms(use_true_random=False))
def test_top_hits_equals_sorting_every_candidate(scores: list[float], depth: int, random: Random) -> None:
    """Whatever the sample's bound, the hits (ids, double scores, order) are the sorted ones."""
    ids = [f"d{i:04d}" for i in range(len(scores))]
    random.shuffle(ids)  # ids not in position order: the tie-break is by id, not position
    ranked = top_hits(np.array(scores), ids, ascending_id_rank(ids), depth)
    assert ranked == by_sorting(scores, ids, depth)


def test_a_sample_without_enough_positive_scores_still_finds_every_hit() -> None:
    """Positive scores only off the sampled positions: the selection falls back to reading all."""
    scores = np.zeros(64 * SAMPLE_STRIDE)
    scores[1::SAMPLE_STRIDE] = np.arange(64, dtype=float)  # no sampled position holds one
    ids = [f"d{i:04d}" for i in range(len(scores))]
    ranked = top_hits(scores, ids, ascending_id_rank(ids), 10)
    assert [hit.score for hit in ranked] == list(range(63, 53, -1))


@settings(max_examples=100, deadline=None)
@given(LARGE, st.integers(min_value=1, max_value=12))
def test_chunks_rank_as_sorting_every_chunk(scores: list[float], depth: int) -> None:
    """Chunks.top shares the selection: the best chunks by score, then document id, then
    position in the document (the first chunk first)."""
    documents = [Document(f"d{i % 7}-{i}", " ".join(["word"] * 3)) for i in range(len(scores))]
    chunks = chunk_corpus(documents, 1, 0)
    assert chunks is not None
    units = np.repeat(np.array(scores), 3)  # each document's three one-word chunks score alike
    ranked = chunks.top(units, depth)
    tied = as_float32(units)
    expected = sorted(
        (i for i in range(len(units)) if units[i] > 0), key=lambda i: (-tied[i], -chunks.tiebreak[i])
    )[:depth]
    assert ranked == [chunks.hit(i, float(units[i])) for i in expected]


def test_trec_order_returns_a_list_in_order_itself_and_sorts_one_that_is_not() -> None:
    """Ties (equal in float32) already by id descending: the very list; otherwise sorted."""
    in_order = [Hit("c", 3.0), Hit("b", 2.0), Hit("a", 2.0000000001), Hit("z", 1.0)]
    assert trec_order(in_order) is in_order
    swapped = [in_order[0], in_order[2], in_order[1], in_order[3]]
    assert trec_order(swapped) == in_order
    rising = [Hit("a", 1.0), Hit("b", 2.0)]
    assert trec_order(rising) == [Hit("b", 2.0), Hit("a", 1.0)]


def test_unique_pairs_names_the_first_key_given_twice() -> None:
    assert unique_pairs([("a", 1), ("b", 2)]) == {"a": 1, "b": 2}
    with pytest.raises(DuplicateKey) as caught:
        unique_pairs([("a", 1), ("b", 2), ("b", 3), ("a", 4)])
    assert caught.value.args == ("b",)
