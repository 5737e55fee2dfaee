"""The hybrid retriever: BM25 and dense rankings fused by reciprocal rank fusion (k = 60)."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from rag_regress.api import Document
from rag_regress.retrieval.retrievers import dense, hybrid
from rag_regress.retrieval.tokens import TokenizerSettings, make_tokenizer

# The dense extra (sentence-transformers and torch): `nox -s engine` installs it, so CI runs these.
pytest.importorskip(
    "sentence_transformers", reason="needs the dense extra: pip install -e '.[dense]' torch==2.13.0"
)

DOCUMENTS = [
    Document("password", "Open account settings and choose a new password.", "Forgotten password"),
    Document("invoices", "Download PDF invoices from the Billing page.", "Invoices"),
    Document("timezone", "Set the time zone of your workspace.", "Time zones"),
    Document("sso", "Members sign in through SSO once an admin turns it on.", "Single sign-on"),
]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> hybrid.HybridRetriever:
    cache = tmp_path_factory.mktemp("embeddings")
    return hybrid.build(DOCUMENTS, make_tokenizer(TokenizerSettings()), {"cache_dir": str(cache)})


@pytest.mark.parametrize("question", ["download invoices", "I can't remember how to log in", "SSO password"])
def test_scores_are_reciprocal_rank_fusion_of_both_rankings(
    retriever: hybrid.HybridRetriever, question: str
) -> None:
    """score = sum of 1 / (60 + rank) over the BM25 and dense rankings; ties by id, descending.
    A document only one retriever found still counts (the second question shares no word)."""
    expected: dict[str, float] = {}
    for part in retriever.parts:
        for rank, hit in enumerate(part.search(question, 100), start=1):
            expected[hit.doc_id] = expected.get(hit.doc_id, 0.0) + 1 / (60 + rank)
    order = sorted(expected, key=lambda doc_id: (expected[doc_id], doc_id), reverse=True)
    hits = retriever.search(question, 3)
    assert [hit.doc_id for hit in hits] == order[:3]
    assert [hit.score for hit in hits] == pytest.approx([expected[d] for d in order[:3]], rel=1e-12)


def test_many_questions_at_once_fuse_as_one_at_a_time(retriever: hybrid.HybridRetriever) -> None:
    """search_many fuses each question's own two rankings: the same hits as search, in order."""
    questions = ["download invoices", "I can't remember how to log in", "SSO password"]
    together = retriever.search_many(questions, 3)
    assert [[h.doc_id for h in hits] for hits in together] == [
        [h.doc_id for h in retriever.search(q, 3)] for q in questions
    ]


class _WordModel:
    """A stand-in embedding model (no torch needed): hashed bag of words, L2-normalised."""

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, zlib.crc32(word.encode()) % 64] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)


def test_chunks_are_fused_by_their_offsets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With chunk_size, both parts rank the same chunks and each chunk's fused score is the sum
    of 1 / (60 + rank) over the parts' rankings of that chunk (the document's offsets)."""
    monkeypatch.setattr(dense, "load_model", lambda options: _WordModel())
    options = {"cache_dir": str(tmp_path), "chunk_size": 4, "chunk_overlap": 1}
    retriever = hybrid.build(DOCUMENTS, make_tokenizer(TokenizerSettings()), options)
    texts = {document.id: document.text for document in DOCUMENTS}
    expected: dict[tuple[str, int | None, int | None], float] = {}
    for part in retriever.parts:
        for rank, hit in enumerate(part.search("download invoices", 100), start=1):
            key = (hit.doc_id, hit.start, hit.end)
            expected[key] = expected.get(key, 0.0) + 1 / (60 + rank)
    hits = retriever.search("download invoices", 3)
    assert len(hits) == 3 and hits[0].doc_id == "invoices"
    for hit in hits:
        assert hit.start is not None and hit.end is not None
        assert 1 <= len(texts[hit.doc_id][hit.start : hit.end].split()) <= 4
        assert hit.score == pytest.approx(expected[hit.doc_id, hit.start, hit.end], rel=1e-12)
    assert [hit.score for hit in hits] == sorted(expected.values(), reverse=True)[:3]


def test_a_depth_the_candidates_cannot_fill_is_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """candidates = 1 fuses at most 2 of the 4 documents: asked for 4, the retriever says so,
    naming both settings and the fix, once per depth; candidates = 2 can fill 4."""
    monkeypatch.setattr(dense, "load_model", lambda options: _WordModel())
    tokenize = make_tokenizer(TokenizerSettings())
    short = hybrid.build(DOCUMENTS, tokenize, {"cache_dir": str(tmp_path), "candidates": 1})
    assert len(short.search("download invoices", 4)) <= 2
    short.search_many(["SSO password", "time zone"], 4)
    err = capsys.readouterr().err
    assert err.count("warning: ") == 1
    assert (
        "[retrieval] depth = 4 but [retriever] candidates = 1 gives hybrid at most 2 hits per question" in err
    )
    assert "raise candidates to at least 4" in err
    short.search("download invoices", 2)  # 2 hits can come back: nothing to say
    enough = hybrid.build(DOCUMENTS, tokenize, {"cache_dir": str(tmp_path), "candidates": 2})
    enough.search("download invoices", 4)
    enough.search("download invoices", 1000)  # more than the corpus holds: not the candidates' fault
    assert capsys.readouterr().err.count("warning: ") == 0
