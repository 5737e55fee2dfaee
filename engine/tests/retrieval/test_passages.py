"""Chunks and passages: a Hit that carries a chunk stays the (doc_id, score) pair teams'
code unpacks; a chunk ranking counts each document once, at its first chunk, as trec_eval
evaluates the collapsed run; a chunk covers a passage when it overlaps at least half of it;
passage metrics exist only for questions that name passages."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from conftest import ENGINE_ROOT, SHIPPED, TINY_GOLDEN, run_cli, write_project
from rag_regress.api import Document, Hit, System
from rag_regress.inputs.data import Passage, Question
from rag_regress.retrieval.names import parse_metric
from rag_regress.retrieval.passages import (
    COVER_SHARE,
    collapse,
    collect,
    covers,
    passage_metrics,
    passage_names,
    spans,
)
from rag_regress.retrieval.ranking import RetrieverOutputError

TEXT = "a" * 100
CORPUS = {doc: Document(doc, TEXT) for doc in ("a", "b", "c")}


# -- Hit: the pair it always was, plus an optional chunk --


def test_a_chunk_hit_is_still_the_pair_teams_code_unpacks() -> None:
    hit = Hit("a", 2.0, 10, 30, "a#1")
    doc_id, score = hit  # a 2-tuple, as code written for whole documents unpacks it
    assert (doc_id, score) == ("a", 2.0) and len(hit) == 2 and hit[0] == "a"
    assert (hit.start, hit.end, hit.chunk_id) == (10, 30, "a#1")
    assert json.dumps([hit, Hit("b", 1.0)]) == '[["a", 2.0], ["b", 1.0]]'  # the report's [id, score]
    assert Hit("b", 1.0) == ("b", 1.0) and Hit(*("b", 1.0)).start is None  # positional, as before
    assert hit != Hit("a", 2.0, 30, 50, "a#2") and hit != ("a", 2.0)  # another chunk is another hit
    assert pickle.loads(pickle.dumps(hit)) == hit == copy.deepcopy(hit)
    assert hit._replace(score=1.0).start == 10
    with pytest.raises(AttributeError):
        hit.start = 0  # type: ignore[misc]  # the point: a hit cannot be changed


# -- collapse rule: document metrics count a document at its first chunk --


def test_later_chunks_of_a_document_collapse_into_its_first() -> None:
    chunks = [Hit("a", 3.0, 0, 10), Hit("a", 2.5, 50, 60), Hit("b", 2.0, 0, 10), Hit("a", 1.0, 80, 90)]
    assert collapse(chunks) == [Hit("a", 3.0, 0, 10), Hit("b", 2.0, 0, 10)]
    documents, kept = collect(chunks, depth=4, corpus=CORPUS)
    assert [hit.doc_id for hit in documents] == ["a", "b"] and kept == chunks
    # b is the second document, not the third hit: its reciprocal rank is 1/2, as trec_eval gives
    # for the collapsed run {a: 3.0, b: 2.0} (the only run it can evaluate: ids unique per query).
    assert parse_metric("mrr")([hit.doc_id for hit in documents], {"b": 1}) == 0.5


def test_depth_counts_hits_whether_chunks_or_documents() -> None:
    chunks = [Hit("a", 3.0, 0, 10), Hit("a", 2.5, 50, 60), Hit("b", 2.0, 0, 10)]
    assert len(collect(chunks, depth=3, corpus=CORPUS)[0]) == 2  # three hits, two documents
    with pytest.raises(RetrieverOutputError, match="asked for at most 2 hits, got 3"):
        collect(chunks, depth=2, corpus=CORPUS)


def test_whole_document_rankings_are_checked_as_before() -> None:
    """No chunk anywhere: a document twice is still an error, and the hits come back as they went."""
    with pytest.raises(RetrieverOutputError, match="document 'a' appears twice"):
        collect([Hit("a", 2.0), Hit("a", 1.0)], depth=5, corpus=CORPUS)
    documents, chunks = collect([("a", 2), ("b", 1.0)], depth=5, corpus=CORPUS)
    assert documents == chunks == [Hit("a", 2.0), Hit("b", 1.0)]


@pytest.mark.parametrize(
    ("hits", "problem"),
    [
        ([Hit("a", 2.0, 0, 10), Hit("a", 1.0, 0, 10)], "the same chunk of 'a' appears twice"),
        ([Hit("a", 2.0, 0, 101)], "give both or neither"),
        ([Hit("a", 2.0, 10, 10)], "0 <= start < end <= 100"),
        ([Hit("a", 2.0, start=3)], "give both or neither"),
        ([Hit("a", 1.0, 0, 10), Hit("b", 2.0, 0, 10)], "scores must not increase"),
        ([Hit("z", 1.0, 0, 10)], "document 'z' is not in the corpus"),
        ([Hit("a", float("nan"), 0, 10)], "not a finite number"),
    ],
)
def test_bad_chunks_are_refused_with_the_reason(hits: list[Hit], problem: str) -> None:
    with pytest.raises(RetrieverOutputError, match=problem):
        collect(hits, depth=5, corpus=CORPUS)


def test_a_chunk_ranking_through_the_command_line_reports_documents(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A team retriever that returns two chunks of each document, one after the other: eval
    exits 0 and the report lists each document once, at its first chunk, with the metrics
    of the same documents returned whole."""

    class Halved:
        """The shipped retriever at half the depth: each document whole, or as two chunks."""

        def __init__(self, inner: Any, chunked: bool):
            self.inner, self.chunked = inner, chunked

        def search(self, question: str, depth: int) -> list[Hit]:
            hits = self.inner.search(question, depth // 2)
            if not self.chunked:
                return hits
            return [Hit(h.doc_id, h.score, start, start + 5) for h in hits for start in (0, 5)]

    def system(chunked: bool) -> System:
        def build(documents: Any, tokenize: Any, options: Any) -> Halved:
            return Halved(SHIPPED.build_retriever(documents, tokenize, options), chunked)

        return System(build, SHIPPED.build_generator)

    reports = []
    for chunked in (False, True):
        assert run_cli(["--config", str(project), "eval", "--quiet"], system(chunked)) == 0
        reports.append(json.loads((project.parent / "build" / "report.json").read_text(encoding="utf-8")))
    whole, chunked_report = reports
    for before, after in zip(whole["questions"], chunked_report["questions"], strict=True):
        ids = [doc_id for doc_id, _ in after["retrieved"]]
        assert ids == [doc_id for doc_id, _ in before["retrieved"]] and len(ids) == len(set(ids))
        assert after["metrics"] == before["metrics"]  # each document at its first chunk's rank
    assert "passages" not in chunked_report  # the tiny golden set names no passage


# -- coverage rule: a chunk covers a passage when it overlaps at least half of it --


def test_a_chunk_covers_a_passage_from_half_of_it() -> None:
    passage = Passage("a", 20, 40, 3)  # 20 characters: 10 is half
    assert COVER_SHARE == 0.5
    assert covers(("a", 30, 90), passage)  # the last 10 characters
    assert not covers(("a", 31, 90), passage)  # 9 characters
    assert covers(("a", 0, 30), passage) and not covers(("a", 25, 34), passage)  # 10, then 9
    assert not covers(("b", 0, 100), passage)  # another document
    whole = spans([Hit("a", 1.0)], CORPUS)[0]
    assert whole == ("a", 0, 100) and covers(whole, passage)  # a whole document covers its passages


def question(qid: str, passages: list[Passage]) -> Question:
    return Question(qid, "?", {"a": 3, "b": 1}, passages=passages)


def test_passage_metrics_rank_chunks_and_skip_questions_without_passages() -> None:
    labelled = question("q1", [Passage("a", 50, 70, 3), Passage("b", 0, 20, 1)])
    unlabelled = question("q2", [])
    chunks = [
        [Hit("c", 3.0, 0, 50), Hit("a", 2.0, 0, 30), Hit("a", 1.5, 55, 95), Hit("b", 1.0, 60, 90)],
        [Hit("a", 1.0)],
    ]
    results = passage_metrics([labelled, unlabelled], chunks, CORPUS, k=3)
    assert results is not None and results.evaluated == 1
    assert results.questions[1] is None  # no passages: no passage metrics, left out of the means
    # Rank 3 (a second chunk of a) covers a's passage; nothing covers b's (60-90 misses 0-20).
    assert results.questions[0] == {"passage_recall@3": 0.5, "passage_hit@3": 1.0, "passage_mrr": 1 / 3}
    assert results.aggregate == results.questions[0]
    at_two = passage_metrics([labelled], chunks[:1], CORPUS, k=2)
    assert at_two is not None and at_two.aggregate["passage_hit@2"] == 0.0


def test_a_golden_set_without_passages_reports_none() -> None:
    assert passage_metrics([question("q1", [])], [[Hit("a", 1.0)]], CORPUS, k=5) is None


def test_passage_metrics_in_the_report(tmp_path: Path) -> None:
    """Passages named for one question: the report's "passages" section has its values, and
    null for the others, which the means leave out; the document metrics do not move."""
    golden = [dict(row) for row in TINY_GOLDEN]
    golden[1]["passages"] = [{"doc": "2fa-setup", "quote": "authenticator   app"}]
    config = write_project(tmp_path, golden=golden)
    assert run_cli(["--config", str(config), "eval", "--quiet"]) == 0
    report = json.loads((tmp_path / "build" / "report.json").read_text(encoding="utf-8"))
    section = report["passages"]
    assert section["names"] == ["passage_recall@5", "passage_hit@5", "passage_mrr"]
    assert section["evaluated"] == 1 and section["questions"]["q1"] is None
    assert section["questions"]["q2"] == section["aggregate"] == dict.fromkeys(section["names"], 1.0)
    plain = write_project(tmp_path / "plain")
    assert run_cli(["--config", str(plain), "eval", "--quiet"]) == 0
    before = json.loads((tmp_path / "plain" / "build" / "report.json").read_text(encoding="utf-8"))
    assert before["aggregate"] == report["aggregate"]


def test_docs_list_the_passage_metrics() -> None:
    """docs/metrics.md's passage table names the metrics the report carries, in its order."""
    text = (ENGINE_ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    table = text.split("| passage metric |")[1].split("\n\n")[0]
    documented = [line.split("|")[1].strip().strip("`") for line in table.splitlines()[2:]]
    assert documented == [name.replace("@5", "@k") for name in passage_names(5)]
