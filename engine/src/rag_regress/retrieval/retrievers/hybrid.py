"""Hybrid retrieval: BM25 and dense rankings fused by reciprocal rank fusion (RRF).

score(d) = sum over the two rankings of 1 / (rrf_k + rank of d), ranks from 1; a document
missing from a ranking adds nothing there. rrf_k = 60 is the constant of Cormack, Clarke
and Buettcher (SIGIR 2009), also the default of common search engines. Each retriever
contributes its top `candidates` documents. RRF needs no score calibration: only ranks are
fused, so BM25's unbounded scores and cosine similarities mix safely. With `chunk_size`,
both parts rank the same chunks (retrieval/chunks.py) and chunks are fused, each by its offsets.

So a question gets at most 2 x `candidates` hits, fewer where the rankings share documents:
a depth it cannot fill ([retrieval] depth above that, with more documents in the corpus) is a
warning on stderr naming both settings, once per depth asked.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, TypeVar

import numpy as np
from pydantic import BaseModel, Field, StrictFloat, StrictInt, field_validator

from ...api import Document, History, Hit, Retriever, Tokenizer
from ...options import PartSettings, validated
from ..chunks import chunk_corpus
from ..ranking import ascending_id_rank, search_all, top_hits
from . import ChunkOverlap, ChunkSize, UseHistory, all_in_context, bm25, dense

VERSION = "1.0"  # bumped whenever a ranking may change for the same settings
PART = "the hybrid retriever"  # who refuses a bad option
Part = TypeVar("Part", bound=BaseModel)
_BM25, _DENSE = bm25.Settings.model_fields, dense.Settings.model_fields


class Settings(PartSettings):
    """[retriever] of the hybrid retriever: BM25's options (bm25.py), the dense ones
    (dense.py) and the fusion's."""

    # the defaults of the parts fused, declared there
    k1: Annotated[StrictFloat, bm25.K1] = _BM25["k1"].default
    b: Annotated[StrictFloat, bm25.B] = _BM25["b"].default
    model: dense.Model = _DENSE["model"].default
    revision: dense.Revision = _DENSE["revision"].default
    batch_size: dense.BatchSize = _DENSE["batch_size"].default
    cache_dir: dense.CacheDir = _DENSE["cache_dir"].default
    precision: dense.Precision = _DENSE["precision"].default
    rrf_k: Annotated[
        StrictInt, Field(ge=0, description="fusion constant: larger values flatten the gap between ranks")
    ] = 60
    candidates: Annotated[
        StrictInt, Field(ge=1, le=100_000, description="documents each ranking contributes to the fusion")
    ] = 100
    chunk_size: ChunkSize = 0
    chunk_overlap: ChunkOverlap = 0
    history: UseHistory = True

    _precision = field_validator("precision")(dense.known_precision)


def _subset(options: Settings, target: type[Part]) -> Part:
    """The options of one of the fused parts."""
    return target.model_validate({k: v for k, v in options.model_dump().items() if k in target.model_fields})


class HybridRetriever:
    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: Settings):
        self.options = options
        self.doc_ids = [d.id for d in documents]
        self.position = {doc_id: i for i, doc_id in enumerate(self.doc_ids)}
        self.tiebreak = ascending_id_rank(self.doc_ids)
        self.chunks = chunk_corpus(documents, options.chunk_size, options.chunk_overlap)
        if self.chunks is not None:  # the parts chunk alike: a chunk is known by its offsets
            units = zip(self.chunks.units, self.chunks.spans, strict=True)
            self.chunk_position = {(unit.id, span): i for i, (unit, span) in enumerate(units)}
        self.units = len(self.chunks.units) if self.chunks is not None else len(self.doc_ids)
        self.warned: set[int] = set()  # depths already warned about
        self.parts: list[Retriever] = [
            bm25.BM25Retriever(documents, tokenize, _subset(options, bm25.Settings)),
            dense.DenseRetriever(documents, _subset(options, dense.Settings)),
        ]

    def search(self, question: str, depth: int, history: History = ()) -> list[Hit]:
        return self.search_many([question], depth, [history])[0]

    def shortfall(self, depth: int) -> str | None:
        """Why `depth` hits per question cannot all come back (at most 2 x candidates are
        fused, while the corpus holds more), with the setting that fixes it; None: they can."""
        most = len(self.parts) * self.options.candidates
        wanted = min(depth, self.units)
        if most >= wanted:
            return None
        what = "chunks" if self.chunks is not None else "documents"
        return (
            f"[retrieval] depth = {depth} but [retriever] candidates = {self.options.candidates} gives "
            f"hybrid at most {most} hits per question ({self.options.candidates} from each of its "
            f"{len(self.parts)} rankings; the corpus has {self.units} {what}): metrics that look deeper "
            f"count the rest as not retrieved; raise candidates to at least {wanted}"
        )

    def search_many(
        self, questions: list[str], depth: int, histories: list[History] | None = None
    ) -> list[list[Hit]]:
        """Each part answers every question at once (the dense part encodes them in batches),
        a later turn searched in its conversation (in_context) by both."""
        questions = all_in_context(questions, histories, self.options.history)
        if depth not in self.warned:
            self.warned.add(depth)
            if note := self.shortfall(depth):
                print(f"warning: {note}", file=sys.stderr)
        per_part = [search_all(part, questions, self.options.candidates) for part in self.parts]
        return [self._fuse([answers[i] for answers in per_part], depth) for i in range(len(questions))]

    def _fuse(self, rankings: list[list[Hit]], depth: int) -> list[Hit]:
        if self.chunks is not None:
            fused = np.zeros(len(self.chunks.units))
            for ranking in rankings:
                for rank, hit in enumerate(ranking, start=1):
                    span = None if hit.start is None or hit.end is None else (hit.start, hit.end)
                    fused[self.chunk_position[hit.doc_id, span]] += 1.0 / (self.options.rrf_k + rank)
            return self.chunks.top(fused, depth)
        scores = np.zeros(len(self.doc_ids))
        for ranking in rankings:
            for rank, hit in enumerate(ranking, start=1):
                scores[self.position[hit.doc_id]] += 1.0 / (self.options.rrf_k + rank)
        return top_hits(scores, self.doc_ids, self.tiebreak, depth)  # equal fused scores: by id


def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> HybridRetriever:
    return HybridRetriever(documents, tokenize, validated(Settings, options, PART))
