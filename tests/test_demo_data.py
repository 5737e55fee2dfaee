"""The demo every project starts with has the shape the README promises, and the engine's
tests read the very same demo (engine/tests/demo)."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from pathlib import Path

from conftest import ENGINE, TEMPLATE

ACRONYMS = {"SSO", "2FA", "API", "CSV"}


ENGINE_DEMO = ENGINE / "tests" / "demo"


def load(name: str, folder: Path = TEMPLATE) -> list[dict]:
    lines = (folder / "evals" / name).read_text(encoding="utf-8").splitlines()
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
    assert all(
        set(q) - {"not_relevant", "history"}
        == keys | ({"reference", "nuggets"} if q["answerable"] else set())
        for q in golden
    )
    # Judged and found not relevant: documents of the shipped BM25's top 5, never a relevant one.
    assert sum(len(q.get("not_relevant", [])) for q in golden) >= 150
    assert all(not set(q.get("not_relevant", [])) & set(q["relevant"]) for q in golden)
    assert all(doc in corpus for q in golden for doc in q.get("not_relevant", []))
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
            assert fact in q["reference"] and {"text": fact, "vital": True} in q["nuggets"], (q["id"], fact)
        # each nugget is a fact of an answering document, so a right answer can state it
        texts = [corpus[doc]["text"] for doc, grade in q["relevant"].items() if grade == 3]
        answering = " ".join(" ".join(text.lower().split()) for text in texts)
        for nugget in q.get("nuggets", []):
            assert " ".join(nugget["text"].lower().split()) in answering, (q["id"], nugget["text"])


def test_the_demo_holds_conversations_whose_follow_ups_need_their_history() -> None:
    """Later turns (`history`) in conversations of two and three turns, each turn before them
    an item of the golden set too; most assistant turns left for the system to write."""
    golden = {q["id"]: q for q in load("golden.jsonl")}
    later = [q for q in golden.values() if q.get("history")]
    assert len(later) >= 6 and {len(q["history"]) for q in later} == {2, 4}
    asked = {q["question"] for q in golden.values()}
    for q in later:
        users = [turn["content"] for turn in q["history"] if turn["role"] == "user"]
        assert all(said in asked for said in users), q["id"]  # each earlier turn is gated too
        assert [turn["role"] for turn in q["history"]] == ["user", "assistant"] * (len(q["history"]) // 2)
    blanks = sum("content" not in turn for q in later for turn in q["history"] if turn["role"] == "assistant")
    given = sum("content" in turn for q in later for turn in q["history"] if turn["role"] == "assistant")
    assert blanks > given >= 1


def test_the_engines_demo_is_the_templates() -> None:
    """The engine's tests read engine/tests/demo: the same corpus and golden set, byte for
    byte, and every labelled claim the template ships among the engine's."""
    for name in ("corpus.jsonl", "golden.jsonl"):
        assert (ENGINE_DEMO / "evals" / name).read_bytes() == (TEMPLATE / "evals" / name).read_bytes(), name
    engine_labels = {json.dumps(row, sort_keys=True) for row in load("judge_labels.jsonl", ENGINE_DEMO)}
    shipped = load("judge_labels.jsonl")
    missing = [row["id"] for row in shipped if json.dumps(row, sort_keys=True) not in engine_labels]
    assert shipped and not missing, f"labelled claims the engine's set lacks: {missing}"


def test_the_engines_demo_settings_are_the_default_bakes(default_project: Path) -> None:
    """The settings of the default bake's eval.toml, less [system] (the engine's tests build
    the shipped system themselves)."""
    text = (default_project / "eval.toml").read_text(encoding="utf-8")
    baked = tomllib.loads(text)
    assert set(baked.pop("system")) == {"retriever", "generator"}
    demo = (ENGINE_DEMO / "eval.toml").read_text(encoding="utf-8")
    assert tomllib.loads(demo) == baked
    # and its comments, below the header, word for word: none goes stale in one copy only
    assert demo[demo.index("[data]") :] == text[text.index("[data]") :]


def test_the_shipped_judge_labels_are_a_balanced_sample() -> None:
    """A sample small enough to ship (the engine holds the full set): both verdicts, every
    kind of hallucination the full set has, ids unique."""
    shipped = load("judge_labels.jsonl")
    assert 100 <= len(shipped) <= 1000 and len({row["id"] for row in shipped}) == len(shipped)
    verdicts = Counter(row["supported"] for row in shipped)
    assert verdicts[True] == verdicts[False]
    kinds = {row["kind"] for row in load("judge_labels.jsonl", ENGINE_DEMO) if not row["supported"]}
    assert {row["kind"] for row in shipped if not row["supported"]} == kinds
