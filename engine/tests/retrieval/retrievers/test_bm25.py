"""BM25 (retrievers/bm25.py) scores exactly what its docstring's formula says.

The reference below evaluates the formula one document at a time in plain Python: term
counts, Lucene's idf, the documented defaults, a repeated query token counted each time,
ties ranked as trec_eval ranks them. The index must give the same doubles (the same
operations in the same order), so rankings, tie order and the stand-in generator's
`min_score` are those of the formula, on any corpus.
"""

from __future__ import annotations

import math
import threading
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_regress.api import Document, Hit, Tokenizer
from rag_regress.retrieval.chunks import chunk_corpus
from rag_regress.retrieval.ranking import trec_order
from rag_regress.retrieval.retrievers import OptionsError, bm25
from rag_regress.retrieval.tokens import TokenizerSettings, make_tokenizer

TOKENIZE = make_tokenizer(TokenizerSettings(stopwords="none"))
WORDS = ["sso", "login", "invoice", "api", "key", "reset", "password", "2fa", "team", "export"]


def formula(
    documents: list[Document], tokenize: Tokenizer, question: str, k1: float = 0.9, b: float = 0.4
) -> list[float]:
    """Each document's score by bm25.py's formula, one document at a time."""
    counts = [Counter(tokenize(f"{d.title}\n{d.text}")) for d in documents]
    lengths = [sum(c.values()) for c in counts]
    n = len(documents)
    average = math.fsum(lengths) / n if n and sum(lengths) > 0 else 1.0
    scores = []
    for tf, length in zip(counts, lengths, strict=True):
        score = 0.0
        for term in tokenize(question):
            if tf[term]:
                df = sum(1 for c in counts if c[term])
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * length / average))
        scores.append(score)
    return scores


def reference(
    documents: list[Document], tokenize: Tokenizer, question: str, depth: int, k1: float = 0.9, b: float = 0.4
) -> list[Hit]:
    """The best `depth` documents with a positive score, in trec_eval's order (float32 score
    descending, then id descending)."""
    scores = formula(documents, tokenize, question, k1, b)
    return trec_order(Hit(d.id, s) for d, s in zip(documents, scores, strict=True) if s > 0)[:depth]


texts = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
corpora = st.lists(
    st.builds(
        Document,
        st.sampled_from([f"d{i}" for i in range(30)]),
        texts,
        st.sampled_from(["", "SSO", "API key"]),
    ),
    min_size=1,
    max_size=12,
    unique_by=lambda d: d.id,
)
questions = st.lists(st.sampled_from([*WORDS, "unknown", "SSO", "sso"]), max_size=6).map(" ".join)


any_settings = st.builds(
    TokenizerSettings,
    lowercase=st.booleans(),
    pattern=st.sampled_from([r"\w+", r"[a-z0-9-]+"]),
    min_length=st.integers(1, 4),
    stopwords=st.sampled_from(["english", "lucene", "none"]),
    stemmer=st.sampled_from(["none", "porter", "english"]),
)
any_texts = st.lists(
    st.lists(
        st.sampled_from([*WORDS, "the", "The", "a", "of", "SSO", "Regulated", "naïve", "x-y", "é"])
        | st.just("\u03b1\u2013\u03b2")  # alpha, en dash, beta
        | st.text(max_size=5),
        max_size=10,
    ).map(" ".join),
    max_size=8,
)


@given(any_settings, any_texts)
def test_postings_of_texts_are_those_of_their_tokens(settings: TokenizerSettings, texts: list[str]) -> None:
    """Indexing with the [tokenizer] settings' own tokenizer takes a path of its own (each
    word straight to its term's id, dropped words left out): the same vocabulary, in the same
    order, and the same postings as counting the tokens the tokenizer returns; also when the
    texts are cut into runs indexed at once in forked processes (a large corpus, several cores)."""
    tokenize = make_tokenizer(settings)
    plain = bm25.Postings.count([tokenize(text) for text in texts])
    for cores in (1, 3):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(bm25, "usable_cores", lambda cores=cores: cores)
            patch.setattr(bm25, "FORKED_TEXTS", 0)
            fast = bm25.Postings.of_texts(texts, make_tokenizer(settings))
        assert list(fast.vocabulary.items()) == list(plain.vocabulary.items())
        for name in ("start", "documents", "frequencies", "lengths"):
            assert np.array_equal(getattr(fast, name), getattr(plain, name)), name
            assert getattr(fast, name).dtype == getattr(plain, name).dtype, name  # int32 stays int32


@given(corpora, questions, st.integers(1, 15))
def test_scores_and_order_are_the_formulas(documents: list[Document], question: str, depth: int) -> None:
    """Same documents, same doubles, same order as the reference: repeated query tokens
    ("sso SSO" counts sso twice), unknown tokens (add nothing), empty questions (no hits),
    documents without text and tied scores (ordered by id, descending) included."""
    retriever = bm25.build(documents, TOKENIZE, {})
    assert retriever.search(question, depth) == reference(documents, TOKENIZE, question, depth)


@given(
    corpora,
    questions,
    st.floats(0, 3, allow_nan=False),
    st.floats(0, 1, allow_nan=False),
)
def test_k1_and_b_are_the_formulas_and_apply_without_a_new_index(
    documents: list[Document], question: str, k1: float, b: float
) -> None:
    """Any k1 and b give the reference's scores, whether built with them or derived from
    an index built with others (`with_options`, which the sweep uses)."""
    expected = reference(documents, TOKENIZE, question, 20, k1, b)
    assert bm25.build(documents, TOKENIZE, {"k1": k1, "b": b}).search(question, 20) == expected
    derived = bm25.build(documents, TOKENIZE, {}).with_options({"k1": k1, "b": b})
    assert derived.search(question, 20) == expected
    assert derived.options == bm25.Settings(k1=k1, b=b)


def test_with_options_refuses_what_changes_the_index() -> None:
    retriever = bm25.build([Document("a", "sso login")], TOKENIZE, {})
    with pytest.raises(ValueError, match="chunk_size"):
        retriever.with_options({"chunk_size": 5})
    with pytest.raises(OptionsError, match="k1"):
        retriever.with_options({"k1": -1})


@given(corpora, st.lists(questions, max_size=6), st.integers(1, 10))
def test_search_many_answers_as_search_does(documents: list[Document], asked: list[str], depth: int) -> None:
    retriever = bm25.build(documents, TOKENIZE, {})
    assert retriever.search_many(asked, depth) == [retriever.search(q, depth) for q in asked]


@given(corpora, st.lists(questions, max_size=40), st.integers(1, 10), st.sampled_from([0, 2]))
def test_search_many_on_threads_answers_as_search_does_and_tokenizes_on_the_calling_thread(
    documents: list[Document], asked: list[str], depth: int, chunk_size: int
) -> None:
    """search_many ranks slices of the questions on one thread per core: the hits are those of
    `search`, in the questions' order, whatever the number of threads and slices; the
    tokenizer (a team's own need not be thread-safe) is only ever called on the caller's."""
    callers: set[int] = set()

    def tokenize(text: str) -> list[str]:
        callers.add(threading.get_ident())
        return TOKENIZE(text)

    retriever = bm25.build(documents, tokenize, {"chunk_size": chunk_size})
    expected = [retriever.search(q, depth) for q in asked]
    for cores, slice_size in [(1, 64), (3, 1), (4, 3)]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(bm25, "usable_cores", lambda cores=cores: cores)
            patch.setattr(bm25, "SEARCH_SLICE", slice_size)
            patch.setattr(bm25, "THREADED_UNITS", 0)
            assert retriever.search_many(asked, depth) == expected
    assert callers == {threading.get_ident()}


@given(corpora, questions, st.integers(1, 4), st.integers(0, 3), st.integers(1, 15))
def test_chunks_score_as_documents_of_their_own(
    documents: list[Document], question: str, size: int, overlap: int, depth: int
) -> None:
    """With chunk_size, each chunk (title + its words) is scored by the formula as if it were
    a document, N and the average length counting chunks; ties are ranked by document id
    (descending), then by position in the document; hits carry the chunk's offsets."""
    overlap = min(overlap, size - 1)
    chunks = chunk_corpus(documents, size, overlap)
    assert chunks is not None
    scores = formula(chunks.units, TOKENIZE, question)
    number = [sum(1 for u in chunks.units[:i] if u.id == unit.id) for i, unit in enumerate(chunks.units)]
    ranked = sorted((i for i, score in enumerate(scores) if score > 0), key=number.__getitem__)
    ranked.sort(key=lambda i: chunks.units[i].id, reverse=True)  # stable: ties keep the order before
    ranked.sort(key=lambda i: float(np.float32(scores[i])), reverse=True)
    expected = [chunks.hit(i, scores[i]) for i in ranked[:depth]]
    options = {"chunk_size": size, "chunk_overlap": overlap}
    assert bm25.build(documents, TOKENIZE, options).search(question, depth) == expected


def test_an_empty_question_and_unknown_words_find_nothing() -> None:
    retriever = bm25.build([Document("a", "sso login"), Document("b", "api key")], TOKENIZE, {})
    assert retriever.search("", 5) == []
    assert retriever.search("zebra unicorn", 5) == []
    assert np.array_equal(retriever.scores("zebra"), np.zeros(2))


def test_search_many_leaves_the_garbage_collector_as_it_was() -> None:
    """search_many pauses Python's garbage collector while it makes the hits, and only then."""
    import gc

    retriever = bm25.build([Document("a", "sso login")], TOKENIZE, {})
    assert gc.isenabled()
    assert retriever.search_many(["sso"], 1) == [[Hit("a", retriever.search("sso", 1)[0].score)]]
    assert gc.isenabled()
    gc.disable()
    try:
        retriever.search_many(["sso"], 1)
        assert not gc.isenabled()
    finally:
        gc.enable()
