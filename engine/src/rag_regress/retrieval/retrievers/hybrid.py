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

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...api import Document, History, Hit, Retriever, Tokenizer
from ..chunks import chunk_corpus
from ..ranking import ascending_id_rank, search_all, top_hits
from . import T, all_in_context, bm25, dense, parse_options


@dataclass(frozen=True)
class Options:
    k1: float = bm25.Options.k1  # BM25 options: see bm25.py
    b: float = dataclasses.field(default=bm25.Options.b, metadata={"range": (0, 1)})
    model: str = dense.Options.model  # dense options: see dense.py
    revision: str = dense.Options.revision
    batch_size: int = dataclasses.field(default=dense.Options.batch_size, metadata={"range": (1, 4096)})
    cache_dir: str = dense.Options.cache_dir
    precision: str = dense.Options.precision  # "float32" or "bfloat16": see dense.py
    rrf_k: int = 60  # fusion constant: larger values flatten the gap between ranks
    candidates: int = dataclasses.field(default=100, metadata={"range": (1, 100_000)})  # per ranking, fused
    chunk_size: int = 0  # words per chunk; 0: whole documents (retrieval/chunks.py)
    chunk_overlap: int = 0  # words shared by consecutive chunks, less than chunk_size
    history: bool = True  # search a later turn with the user's earlier turns (in_context)


def _subset(options: Options, target: type[T]) -> T:
    names = {f.name for f in dataclasses.fields(target)}
    return target(**{k: v for k, v in dataclasses.asdict(options).items() if k in names})


class HybridRetriever:
    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: Options):
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
            bm25.BM25Retriever(documents, tokenize, _subset(options, bm25.Options)),
            dense.DenseRetriever(documents, _subset(options, dense.Options)),
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
    return HybridRetriever(documents, tokenize, parse_options(Options, options))
