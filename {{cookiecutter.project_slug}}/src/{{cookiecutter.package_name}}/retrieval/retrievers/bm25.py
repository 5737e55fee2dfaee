"""BM25: rank documents by the query terms they contain, weighted by rarity.

score(d, q) = sum over query tokens t of
    idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * len(d) / avg_len))
with idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)) (Lucene's non-negative idf).
A repeated query token counts each time, as in Lucene and Anserini. Documents are indexed
as title + text. Defaults k1 = 0.9, b = 0.4 are Anserini's documented BM25 defaults.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...api import Document, Hit, Tokenizer
from ..ranking import ascending_id_rank, top_hits
from . import parse_options


@dataclass(frozen=True)
class Options:
    k1: float = 0.9  # term-frequency saturation
    b: float = field(default=0.4, metadata={"range": (0, 1)})  # length normalisation (0 = none, 1 = full)


class BM25Retriever:
    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: Options):
        self.options = options
        self.tokenize = tokenize
        self.doc_ids = [d.id for d in documents]
        self.tiebreak = ascending_id_rank(self.doc_ids)
        # Inverted index: term -> (document positions, term frequencies), as arrays.
        postings: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
        lengths = np.zeros(len(documents))
        for position, doc in enumerate(documents):
            counts = Counter(tokenize(f"{doc.title}\n{doc.text}"))
            lengths[position] = sum(counts.values())
            for term, frequency in counts.items():
                postings[term][0].append(position)
                postings[term][1].append(frequency)
        n = len(documents)
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
        scores = np.zeros(len(self.doc_ids))
        for term in self.tokenize(question):
            if term in self.index:
                docs, weights = self.index[term]
                scores[docs] += weights  # each document at most once per term
        return top_hits(scores, self.doc_ids, self.tiebreak, depth)


def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> BM25Retriever:
    return BM25Retriever(documents, tokenize, parse_options(Options, options))
