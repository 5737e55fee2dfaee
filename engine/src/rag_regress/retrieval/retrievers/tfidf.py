"""TF-IDF: rank documents by cosine similarity of TF-IDF vectors (scikit-learn).

Uses our tokenizer (the [tokenizer] settings) as scikit-learn's analyzer, smoothed idf and
L2-normalised vectors, so the dot product is the cosine similarity. Documents are indexed
as title + text; with `chunk_size`, each chunk is (retrieval/chunks.py), and idf counts chunks.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field, StrictBool
from sklearn.feature_extraction.text import TfidfVectorizer

from ...api import Document, History, Hit, Tokenizer
from ...options import PartSettings, validated
from ..chunks import chunk_corpus
from ..ranking import ascending_id_rank, top_hits
from . import ChunkOverlap, ChunkSize, UseHistory, in_context

VERSION = "1.0"  # bumped whenever a ranking may change for the same settings
PART = "the tfidf retriever"  # who refuses a bad option


class Settings(PartSettings):
    """[retriever] of the tfidf retriever."""

    sublinear_tf: Annotated[
        StrictBool, Field(description="use 1 + log(tf) instead of the raw term count")
    ] = False
    chunk_size: ChunkSize = 0
    chunk_overlap: ChunkOverlap = 0
    history: UseHistory = True


class TfidfRetriever:
    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: Settings):
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
    return TfidfRetriever(documents, tokenize, validated(Settings, options, PART))
