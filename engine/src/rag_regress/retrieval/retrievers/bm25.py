"""BM25: rank documents by the query terms they contain, weighted by rarity.

score(d, q) = sum over query tokens t of
    idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * len(d) / avg_len))
with idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)) (Lucene's non-negative idf).
A repeated query token counts each time, as in Lucene and Anserini; a token no document
holds adds nothing, and a question without known tokens finds nothing. Documents are
indexed as title + text. Defaults k1 = 0.9, b = 0.4 are Anserini's documented BM25
defaults. With `chunk_size`, each chunk is indexed instead (retrieval/chunks.py): N, df
and the average length then count chunks.

How it is stored: every term gets an integer id, and a sparse term x document matrix
(compressed by term: one run of (document, weight) pairs per term) holds each document's
whole term weight, the summand above, in double precision. A search adds the runs of the
question's tokens, one after another in the question's order, so a score is the same sum,
added in the same order, for every question however it is asked (`search` or
`search_many`). The term frequencies and lengths are kept too, so other k1 and b reuse the
index (`with_options`: the sweep's `query_time_options`) without tokenizing again.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any

import numpy as np
import scipy.sparse
from pydantic import Field, StrictFloat

from ...api import Document, History, Hit, Tokenizer
from ...calling.executor import Threads
from ...execution.forked import map_forked, parts_of, usable_cores
from ...execution.heap import paused
from ...options import PartSettings, validated
from ..chunks import Chunks, chunk_corpus
from ..ranking import ascending_id_rank, top_hits
from ..tokens import WordTokenizer
from . import ChunkOverlap, ChunkSize, UseHistory, all_in_context, in_context

VERSION = "1.0"  # bumped whenever a ranking may change for the same settings
PART = "the bm25 retriever"  # who refuses a bad option

# Questions a search thread takes at a time (search_many): enough that handing out a slice
# costs nothing beside ranking it, few enough that the threads finish together.
SEARCH_SLICE = 64
# Indexed units from which search_many ranks on several threads: in a smaller index a
# question's numpy work is too short to release the GIL for long, and the threads mostly take
# turns. SciFact copied, questions a second on one thread and on two: 5,183 documents 8,200
# and 4,600; 20,732: 4,300 and 3,900; 51,830: 1,520 and 2,150; 103,660: 880 and 1,350.
THREADED_UNITS = 50_000
# At most this many: a third of a question's work holds the GIL (two threads search 1.5 times
# as fast as one), so more threads than this mostly wait for it.
SEARCH_THREADS = 4
# Texts from which indexing is shared among the cores (Postings.of_texts): below it, starting
# a process costs more than it saves.
FORKED_TEXTS = 20_000


K1 = Field(ge=0, allow_inf_nan=False, description="term-frequency saturation")
B = Field(ge=0, le=1, allow_inf_nan=False, description="length normalisation (0: none, 1: full)")


class Settings(PartSettings):
    """[retriever] of the bm25 retriever."""

    k1: Annotated[StrictFloat, K1] = 0.9
    b: Annotated[StrictFloat, B] = 0.4
    chunk_size: ChunkSize = 0
    chunk_overlap: ChunkOverlap = 0
    history: UseHistory = True


class _NextId(dict[str, int]):
    """term -> id: a term not seen yet gets the next id (0, 1, 2, ... in order of first look-up)."""

    def __missing__(self, term: str) -> int:
        self[term] = term_id = len(self)
        return term_id


class _WordIds(dict[str, int]):
    """word -> its term's id (-1: dropped), computed by `of_word` once per distinct word."""

    def __init__(self, of_word: Callable[[str], int]) -> None:
        super().__init__()
        self.of_word = of_word

    def __missing__(self, word: str) -> int:
        self[word] = term_id = self.of_word(word)
        return term_id


@dataclass(frozen=True)
class Postings:
    """What the weights are computed from, independent of k1 and b: `vocabulary` maps a
    term to its id; term t's postings are entries `start[t]:start[t + 1]` of `documents`
    (positions, ascending) and `frequencies` (tf, each > 0); `lengths[i]` counts the tokens
    of indexed unit i, repeats included."""

    vocabulary: dict[str, int]
    start: np.ndarray  # int64, one more than there are terms
    documents: np.ndarray  # int32 (int64 past 2**31 units, terms or tokens)
    frequencies: np.ndarray  # float64
    lengths: np.ndarray  # float64

    @classmethod
    def count(cls, token_lists: list[list[str]]) -> Postings:
        """The postings of documents given as their tokens, in order."""
        n = len(token_lists)
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=n)
        # Term ids in order of first occurrence, every token's id in one pass over the tokens.
        vocabulary = _NextId()
        id_of = vocabulary.__getitem__
        ids = array("q")
        for tokens in token_lists:
            ids.extend(map(id_of, tokens))
        return cls._of_ids(vocabulary, np.frombuffer(ids, dtype=np.int64), lengths)

    @classmethod
    def of_texts(cls, texts: Iterable[str], tokenize: Tokenizer) -> Postings:
        """`count([tokenize(text) for text in texts])`. With the [tokenizer] settings' own
        tokenizer, each word goes straight to its term's id (the same ids, in the same order:
        a term's id is given at its first token either way), without a list of tokens per
        text: a third of the time of indexing a large corpus. A large corpus is then cut into
        one run of texts per usable core, each turned into ids at the same time as the
        others (execution/forked.py), and the runs' ids joined into the corpus's own."""
        if not isinstance(tokenize, WordTokenizer):
            return cls.count([tokenize(text) for text in texts])
        texts = list(texts)
        parts = parts_of(texts, usable_cores() if len(texts) >= FORKED_TEXTS else 1)
        vocabulary = _NextId()
        ids, lengths = [], []
        for terms, run_ids, run_lengths in map_forked(partial(_term_ids, tokenize=tokenize), parts):
            # A run's term i is the corpus's term `to_corpus[i]`: terms new to the corpus get
            # the next ids in the order the run met them, as one pass over all texts would.
            to_corpus = np.fromiter(map(vocabulary.__getitem__, terms), dtype=np.int64, count=len(terms))
            ids.append(to_corpus[run_ids])
            lengths.append(run_lengths)
        return cls._of_ids(vocabulary, np.concatenate(ids), np.concatenate(lengths))

    @classmethod
    def _of_ids(cls, vocabulary: dict[str, int], term_ids: np.ndarray, lengths: np.ndarray) -> Postings:
        """The postings of every token's term id, the texts' tokens one after another
        (`lengths[i]` of them for text i)."""
        n = len(lengths)
        # One row per document, a 1 per token, repeats kept. The 1s are integers of the index's
        # width (a count of tokens fits it): half the memory of float64, and 0.4 s of 6 s.
        index_type = np.int32 if max(n, len(vocabulary)) < 2**31 and len(term_ids) < 2**31 else np.int64
        ones: np.ndarray = np.ones(len(term_ids), dtype=index_type)
        tokens = scipy.sparse.csr_array(
            (
                ones,
                term_ids.astype(index_type),
                np.concatenate(([0], np.cumsum(lengths))).astype(index_type),
            ),
            shape=(n, len(vocabulary)),
        )
        del term_ids
        # Column t: a 1 for each token of term t, documents ascending (the rows are read in
        # order), so a document's repeats sit side by side and summing them is one linear pass,
        # where summing them by row first sorts every document's tokens: half the time.
        by_term = tokens.tocsc()
        del tokens
        by_term.sum_duplicates()
        return cls(
            dict(vocabulary),
            by_term.indptr.astype(np.int64),
            by_term.indices,
            by_term.data.astype(np.float64),
            lengths.astype(np.float64),
        )

    def weights(self, k1: float, b: float) -> np.ndarray:
        """Each posting's BM25 term weight (module docstring), in `documents` order."""
        n = len(self.lengths)
        df = np.diff(self.start)
        # math.log, as Python computes it, once per distinct document frequency.
        distinct, which = np.unique(df, return_inverse=True)
        idf = np.array([math.log(1 + (n - int(d) + 0.5) / (int(d) + 0.5)) for d in distinct.tolist()])
        average = self.lengths.mean() if n and self.lengths.mean() > 0 else 1.0
        norm = k1 * (1 - b + b * self.lengths / average)
        tf = self.frequencies
        per_posting: np.ndarray = np.repeat(idf[which], df) * tf * (k1 + 1) / (tf + norm[self.documents])
        return per_posting


def _term_ids(texts: Sequence[str], tokenize: WordTokenizer) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The texts' tokens as ids of their own small vocabulary: (its terms, by id; every kept
    token's id, the texts one after another; each text's number of tokens)."""
    vocabulary, terms = _NextId(), tokenize.terms
    word_ids = _WordIds(lambda word: vocabulary[terms[word]] if terms.kept(word) else -1)
    id_of, words = word_ids.__getitem__, tokenize.words
    ids, ends = array("q"), array("q")
    for text in texts:
        ids.extend(map(id_of, words(text)))  # -1: a dropped word (too short, a stop word)
        ends.append(len(ids))
    every = np.frombuffer(ids, dtype=np.int64)
    kept = every >= 0
    kept_before = np.concatenate(([0], np.cumsum(kept)))  # kept words before each position
    lengths = np.diff(kept_before[np.concatenate(([0], np.frombuffer(ends, dtype=np.int64)))])
    return list(vocabulary), every[kept], lengths


class BM25Retriever:
    query_time_options = ("k1", "b")  # other values reuse the index: see with_options

    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: Settings):
        chunks = chunk_corpus(documents, options.chunk_size, options.chunk_overlap)
        indexed = documents if chunks is None else chunks.units  # what is scored
        postings = Postings.of_texts((f"{doc.title}\n{doc.text}" for doc in indexed), tokenize)
        self._setup(options, tokenize, [d.id for d in documents], chunks, postings)

    def _setup(
        self,
        options: Settings,
        tokenize: Tokenizer,
        doc_ids: list[str],
        chunks: Chunks | None,
        postings: Postings,
        tiebreak: np.ndarray | None = None,
    ) -> None:
        self.options = options
        self.tokenize = tokenize
        self.doc_ids = doc_ids
        self.tiebreak = ascending_id_rank(doc_ids) if tiebreak is None else tiebreak
        self.chunks = chunks
        self.postings = postings
        self.weights = postings.weights(options.k1, options.b)

    def with_options(self, options: dict[str, Any]) -> BM25Retriever:
        """This retriever with other k1 and b, sharing its index and tokenizer (the sweep
        asks for it); the same rankings as a new build with those options. Other options
        (chunking) change what is indexed: ValueError."""
        parsed = validated(Settings, options, PART)
        changed = [
            name
            for name in Settings.model_fields
            if name not in self.query_time_options and getattr(parsed, name) != getattr(self.options, name)
        ]
        if changed:
            raise ValueError(f"{', '.join(changed)} change(s) the index: build a new retriever")
        derived = BM25Retriever.__new__(BM25Retriever)
        derived._setup(parsed, self.tokenize, self.doc_ids, self.chunks, self.postings, self.tiebreak)
        return derived

    def _terms(self, question: str) -> list[int]:
        """The ids of the question's tokens that some indexed unit holds, in its order."""
        known = self.postings.vocabulary.get
        return [term for term in map(known, self.tokenize(question)) if term is not None]

    def _scores_of(self, terms: list[int]) -> np.ndarray:
        units = len(self.postings.lengths)
        if not terms:
            return np.zeros(units)
        ids = np.array(terms)
        runs = zip(self.postings.start[ids].tolist(), self.postings.start[ids + 1].tolist(), strict=True)
        documents, weights = self.postings.documents, self.weights
        pieces = [(documents[first:end], weights[first:end]) for first, end in runs]
        # bincount adds each unit's weights in the order they come: the question's order.
        return np.bincount(
            np.concatenate([piece[0] for piece in pieces]),
            np.concatenate([piece[1] for piece in pieces]),
            minlength=units,
        )

    def _ranked(self, terms: list[int], depth: int) -> list[Hit]:
        scores = self._scores_of(terms)
        if self.chunks is not None:
            return self.chunks.top(scores, depth)
        return top_hits(scores, self.doc_ids, self.tiebreak, depth)

    def scores(self, question: str) -> np.ndarray:
        """Every indexed unit's score for `question` (0 where it shares no term)."""
        return self._scores_of(self._terms(question))

    def search(self, question: str, depth: int, history: History = ()) -> list[Hit]:
        return self._ranked(self._terms(in_context(question, history, self.options.history)), depth)

    def search_many(
        self, questions: list[str], depth: int, histories: list[History] | None = None
    ) -> list[list[Hit]]:
        """`search` for each question, in order, the same hits.

        The questions are tokenized first, one after another on this thread (a tokenizer,
        a team's own included, need not be thread-safe); then slices of them are scored and
        ranked on one thread per usable core (`usable_cores`) when the index is large
        (THREADED_UNITS): numpy's additions, partitions and sorts release the GIL, so two
        cores search 10k questions over 100k documents in about two thirds of the time.
        Python's cyclic garbage collector is paused meanwhile: the hits are many small
        objects that form no cycles, and collecting while they pile up (the evaluator keeps
        every question's) cost a third of the search time."""
        with paused():
            asked = [self._terms(q) for q in all_in_context(questions, histories, self.options.history)]
            slices = [asked[i : i + SEARCH_SLICE] for i in range(0, len(asked), SEARCH_SLICE)]
            large = len(self.postings.lengths) >= THREADED_UNITS
            threads = min(usable_cores(), SEARCH_THREADS) if large else 1
            ranked = Threads(threads).map_ordered(
                lambda part: [self._ranked(terms, depth) for terms in part], slices
            )
            return [hits for part in ranked for hits in part]


def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> BM25Retriever:
    return BM25Retriever(documents, tokenize, validated(Settings, options, PART))
