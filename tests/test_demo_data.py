"""The demo every project starts with has the shape the README promises."""

from __future__ import annotations

import json
from collections import Counter

from conftest import TEMPLATE

ACRONYMS = {"SSO", "2FA", "API", "CSV"}


def load(name: str) -> list[dict]:
    lines = (TEMPLATE / "evals" / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_corpus_is_a_help_centre_of_at_least_30_short_documents() -> None:
    corpus = load("corpus.jsonl")
    assert len(corpus) >= 30
    assert len({doc["id"] for doc in corpus}) == len(corpus)
    assert all(set(doc) == {"id", "title", "text"} for doc in corpus)
    assert all(20 <= len(doc["text"].split()) <= 120 for doc in corpus)


def test_golden_set_covers_what_a_real_one_needs() -> None:
    corpus = {doc["id"]: doc for doc in load("corpus.jsonl")}
    golden = load("golden.jsonl")
    assert len(golden) >= 40
    keys = {"id", "question", "relevant", "must_include", "answerable", "tags", "must_pass"}
    assert all(set(q) == keys for q in golden)
    unanswerable = [q for q in golden if not q["answerable"]]
    assert len(unanswerable) >= 5 and all(not q["relevant"] for q in unanswerable)
    assert sum(len(q["relevant"]) >= 2 for q in golden) >= 5, "multi-document questions"
    grades = Counter(g for q in golden for g in q["relevant"].values())
    assert set(grades) == {1, 2, 3}, "graded relevance uses the whole 1-3 scale"
    tags = Counter(t for q in golden for t in q["tags"])
    assert len(tags) >= 4
    assert sum(q["must_pass"] for q in golden) >= 3
    asked = {a for q in golden for a in ACRONYMS if a in q["question"].split() or f"{a}?" in q["question"]}
    assert asked == ACRONYMS, f"short acronyms that matter for retrieval; missing {ACRONYMS - asked}"
    for q in golden:
        for fact in q["must_include"]:
            assert any(fact.lower() in corpus[d]["text"].lower() for d in q["relevant"]), (q["id"], fact)
