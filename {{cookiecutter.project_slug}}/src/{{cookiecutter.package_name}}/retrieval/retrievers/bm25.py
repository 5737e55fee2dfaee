"""BM25: rank documents by the query terms they contain, weighted by rarity.

score(d, q) = sum over query tokens t of
    idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * len(d) / avg_len))
with idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)) (Lucene's non-negative idf).
A repeated query token counts each time, as in Lucene and Anserini. Documents are indexed
as title + text. Defaults k1 = 0.9, b = 0.4 are Anserini's documented BM25 defaults. With
`chunk_size`, each chunk is indexed instead (retrieval/chunks.py): N, df and the average
length then count chunks.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...api import Document, Hit, Tokenizer
from ..chunks import chunk_corpus
from ..ranking import ascending_id_rank, top_hits
from . import parse_options


@dataclass(frozen=True)
class Options:
    k1: float = 0.9  # term-frequency saturation
    b: float = field(default=0.4, metadata={"range": (0, 1)})  # length normalisation (0 = none, 1 = full)
    chunk_size: int = 0  # words per chunk; 0: whole documents (retrieval/chunks.py)
    chunk_overlap: int = 0  # words shared by consecutive chunks, less than chunk_size


class BM25Retriever:
    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: Options):
        self.options = options
        self.tokenize = tokenize
        self.doc_ids = [d.id for d in documents]
        self.tiebreak = ascending_id_rank(self.doc_ids)
        self.chunks = chunk_corpus(documents, options.chunk_size, options.chunk_overlap)
        indexed = documents if self.chunks is None else self.chunks.units  # what is scored
        # Inverted index: term -> (document positions, term frequencies), as arrays.
        postings: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
        lengths = np.zeros(len(indexed))
        for position, doc in enumerate(indexed):
            counts = Counter(tokenize(f"{doc.title}\n{doc.text}"))
            lengths[position] = sum(counts.values())
            for term, frequency in counts.items():
                postings[term][0].append(position)
                postings[term][1].append(frequency)
        n = len(indexed)
        average = lengths.mean() if n and lengths.mean() > 0 else 1.0
        norm = options.k1 * (1 - options.b + options.b * lengths / average)
        # A sparse term x document matrix, one column of postings per term, holding each
        # document's whole BM25 term weight: a search is then one vector add per query term.
        self.index: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, (docs, tfs) in postings.items():
            positions, tf = np.array(docs), np.array(tfs, dtype=float)
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            self.index[term] = (positions, idf * tf * (options.k1 + 1) / (tf + norm[positions]))

    def search(self, question: str, depth: int) -> list[Hit]:
        scores = np.zeros(len(self.doc_ids) if self.chunks is None else len(self.chunks.units))
        for term in self.tokenize(question):
            if term in self.index:
                docs, weights = self.index[term]
                scores[docs] += weights  # each document at most once per term
        if self.chunks is not None:
            return self.chunks.top(scores, depth)
        return top_hits(scores, self.doc_ids, self.tiebreak, depth)


def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> BM25Retriever:
    return BM25Retriever(documents, tokenize, parse_options(Options, options))
