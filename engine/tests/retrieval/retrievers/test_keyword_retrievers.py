"""The retriever this project shipped with (built directly, never through retriever.py) and
the output rules the evaluator enforces on any retriever (ranking.check_hits)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SHIPPED, TINY_CONFIG, TINY_CORPUS, evaluate_shipped, write_project
from rag_regress.api import Document, Hit, Retriever
from rag_regress.errors import EvalInputError
from rag_regress.retrieval.ranking import RetrieverOutputError, check_hits
from rag_regress.retrieval.tokens import TokenizerSettings, make_tokenizer
from rag_regress.settings.config import load_config

DOCUMENTS = [Document(d["id"], d["text"], d["title"]) for d in TINY_CORPUS]
IDS = {d.id for d in DOCUMENTS}


def build(documents: list[Document] = DOCUMENTS, **tokenizer: object) -> Retriever:
    return SHIPPED.build_retriever(documents, make_tokenizer(TokenizerSettings(**tokenizer)), {})  # type: ignore[arg-type]


DEFAULT = build()
WORDS = sorted({word for d in TINY_CORPUS for word in f"{d['title']} {d['text']}".split()})
queries = st.lists(st.sampled_from([*WORDS, "SSO", "2FA", "zebra", "the", ""]), max_size=6).map(" ".join)


@pytest.mark.keyword
@given(queries, st.integers(min_value=1, max_value=8))
def test_hits_follow_the_retriever_rules(question: str, depth: int) -> None:
    """Any question: at most `depth` Hit(doc_id, score), unique corpus ids, finite positive
    scores that never increase down the list, compared as float32 as trec_eval reads them
    (ties in float32 are ordered by id), and check_hits accepts them."""
    hits = DEFAULT.search(question, depth)
    assert isinstance(hits, list)
    assert len(hits) <= depth
    assert all(isinstance(hit, Hit) for hit in hits)
    ids = [hit.doc_id for hit in hits]
    assert len(ids) == len(set(ids))
    assert set(ids) <= IDS
    scores = [hit.score for hit in hits]
    assert all(math.isfinite(s) and s > 0 for s in scores)
    single = [float(np.float32(s)) for s in scores]
    assert single == sorted(single, reverse=True)
    assert check_hits(hits, depth, IDS) == hits


@pytest.mark.keyword
def test_acronym_query_finds_its_document_with_the_default_tokenizer() -> None:
    """'SSO' ranks the SSO article above the long article that mentions SSO once."""
    hits = DEFAULT.search("SSO", 10)
    assert [hit.doc_id for hit in hits] == ["sso-setup", "password-policy"]


@pytest.mark.keyword
def test_acronym_query_finds_nothing_with_min_length_four() -> None:
    """The classic regression: with min_length = 4, 'SSO' is no longer a token at all."""
    assert build(min_length=4).search("SSO", 10) == []
    assert build(min_length=4).search("2FA", 10) == []


@pytest.mark.keyword
@pytest.mark.parametrize("question", ["", "   ", "zebra giraffe", "the and of", "?!"])
def test_question_without_matching_tokens_returns_nothing(question: str) -> None:
    """No shared token (or only stopwords) means no hit, not arbitrary zero-score documents."""
    assert DEFAULT.search(question, 10) == []


@pytest.mark.keyword
def test_identical_documents_tie_and_are_ordered_by_id_descending() -> None:
    """Equal scores are broken like trec_eval (document id, descending), whatever the file
    order, and the cut at `depth` keeps the ones that order puts first."""
    text = "Reset your password from the sign-in page."
    documents = [
        Document("dup-b", text),
        Document("dup-a", text),
        Document("other", "Invoices and billing."),
        Document("dup-c", text),
    ]
    retriever = build(documents)
    hits = retriever.search("reset password", 10)
    assert [hit.doc_id for hit in hits] == ["dup-c", "dup-b", "dup-a"]
    assert hits[0].score == hits[1].score == hits[2].score
    assert [hit.doc_id for hit in retriever.search("reset password", 2)] == ["dup-c", "dup-b"]


def test_search_is_deterministic() -> None:
    """The same question gives the same ranking and scores every time."""
    assert DEFAULT.search("download invoices", 5) == DEFAULT.search("download invoices", 5)


def test_unknown_retriever_option_is_invalid_input(tmp_path: Path) -> None:
    """A typo in [retriever] stops the evaluation with the config file and the option name."""
    text = TINY_CONFIG.replace("[retriever]\n", "[retriever]\nnonsense = 1\n")
    config = load_config(write_project(tmp_path, config=text))
    with pytest.raises(EvalInputError, match="unknown option 'nonsense'") as caught:
        evaluate_shipped(config)
    assert "eval.toml" in str(caught.value)


# -- check_hits: what any retriever (including yours) must return --------------------------

KNOWN = {"a", "b", "c"}


@pytest.mark.parametrize(
    ("hits", "message"),
    [
        ([Hit("a", math.nan)], "not a finite number"),
        ([Hit("a", math.inf)], "not a finite number"),
        ([Hit("a", 2.0), Hit("b", -math.inf)], "not a finite number"),
        ([Hit("a", 2.0), Hit("a", 1.0)], "appears twice"),
        ([Hit("z", 1.0)], "'z' is not in the corpus"),
        ([Hit("a", 3.0), Hit("b", 2.0), Hit("c", 1.0)], "at most 2 hits, got 3"),
        ([Hit("a", 0.5), Hit("b", 0.9)], "must not increase"),
        (["a"], "not a (doc_id, score) pair"),
        ([("a",)], "not a (doc_id, score) pair"),
        ([("a", "high")], "not a (doc_id, score) pair"),
        ([None], "not a (doc_id, score) pair"),
        ([(1, 1.0)], "not in the corpus"),
        ({"a": 1.0}, "must return a list"),
        (None, "must return a list"),
    ],
)
def test_check_hits_rejects_bad_output(hits: object, message: str) -> None:
    """Each broken ranking is refused with a message saying what is wrong."""
    with pytest.raises(RetrieverOutputError) as caught:
        check_hits(hits, 2, KNOWN)
    assert message in str(caught.value)


def test_check_hits_accepts_empty_ties_and_plain_pairs() -> None:
    """[] is a valid answer; equal scores are allowed; (id, score) tuples become Hits."""
    assert check_hits([], 2, KNOWN) == []
    assert check_hits([("a", 1), ("b", 1)], 2, KNOWN) == [Hit("a", 1.0), Hit("b", 1.0)]
    assert check_hits((Hit("c", -2.5),), 2, KNOWN) == [Hit("c", -2.5)]
