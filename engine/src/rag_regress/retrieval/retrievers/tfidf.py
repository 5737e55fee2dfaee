"""TF-IDF: rank documents by cosine similarity of TF-IDF vectors (scikit-learn).

Uses our tokenizer (the [tokenizer] settings) as scikit-learn's analyzer, smoothed idf and
L2-normalised vectors, so the dot product is the cosine similarity. Documents are indexed
as title + text; with `chunk_size`, each chunk is (retrieval/chunks.py), and idf counts chunks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from ...api import Document, History, Hit, Tokenizer
from ..chunks import chunk_corpus
from ..ranking import ascending_id_rank, top_hits
from . import in_context, parse_options


@dataclass(frozen=True)
class Options:
    sublinear_tf: bool = False  # use 1 + log(tf) instead of the raw term count
    chunk_size: int = 0  # words per chunk; 0: whole documents (retrieval/chunks.py)
    chunk_overlap: int = 0  # words shared by consecutive chunks, less than chunk_size
    history: bool = True  # search a later turn with the user's earlier turns (in_context)


class TfidfRetriever:
    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: Options):
        self.options = options
        self.doc_ids = [d.id for d in documents]
        self.tiebreak = ascending_id_rank(self.doc_ids)
        self.vectorizer = TfidfVectorizer(analyzer=tokenize, sublinear_tf=options.sublinear_tf)
        self.chunks = chunk_corpus(documents, options.chunk_size, options.chunk_overlap)
        indexed = documents if self.chunks is None else self.chunks.units  # what is scored
        texts = [f"{d.title}\n{d.text}" for d in indexed]
        try:
            self.matrix = self.vectorizer.fit_transform(texts)
        except ValueError:  # every document tokenised to nothing
            self.matrix = None

    def search(self, question: str, depth: int, history: History = ()) -> list[Hit]:
        if self.matrix is None:
            return []
        query = self.vectorizer.transform([in_context(question, history, self.options.history)])
        scores = np.asarray((self.matrix @ query.T).todense()).ravel()
        if self.chunks is not None:
            return self.chunks.top(scores, depth)
        return top_hits(scores, self.doc_ids, self.tiebreak, depth)


def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> TfidfRetriever:
    return TfidfRetriever(documents, tokenize, parse_options(Options, options))
