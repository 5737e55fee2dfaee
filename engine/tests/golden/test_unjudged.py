"""Unjudged documents: judged@k in every report, the gate's note on a possible pooling
artefact (its exit code left to the rules), `pool`, and pool -> grade -> merge -> baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, TINY_CORPUS, TINY_GOLDEN, run_cli, write_jsonl, write_project
from rag_regress.api import Document, Hit, System, Tokenizer
from rag_regress.retrieval.retrievers import bm25

ALL_IDS = [doc["id"] for doc in TINY_CORPUS]


class Padded:
    """BM25, then every other document after its results: the same judged documents at the
    same ranks, and unjudged ones where BM25 returned nothing (metrics unchanged)."""

    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]):
        self.inner = bm25.build(documents, tokenize, options)

    def search(self, question: str, depth: int) -> list[Hit]:
        hits = self.inner.search(question, depth)
        seen = {hit.doc_id for hit in hits}
        rest = [doc_id for doc_id in ALL_IDS if doc_id not in seen]
        return [*hits, *(Hit(doc_id, -1.0 - i) for i, doc_id in enumerate(rest))][:depth]


PADDED = System(Padded, SHIPPED.build_generator)


def cli(project: Path, *args: str, system: System = SHIPPED) -> int:
    return run_cli(["--config", str(project), *args], system)


def report(project: Path) -> dict[str, Any]:
    return json.loads((project.parent / "build" / "report.json").read_text(encoding="utf-8"))


def test_judged_at_k_per_question_and_overall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = [dict(q) for q in TINY_GOLDEN]
    golden[0]["not_relevant"] = ["password-policy"]  # BM25's second result for "SSO"
    project = write_project(tmp_path / "p", golden=golden)
    assert cli(project, "eval", "--all") == 0
    data = report(project)
    rows = {row["id"]: row for row in data["questions"]}
    top = {qid: [doc for doc, _ in row["retrieved"][:5]] for qid, row in rows.items()}
    assert top["q1"] == ["sso-setup", "password-policy"]
    assert rows["q1"]["judged"] == pytest.approx(2 / 5)  # both judged; empty places count as not
    assert rows["q1"]["not_relevant"] == ["password-policy"]
    for qid in ("q2", "q3", "q4"):
        judged = [doc for doc in top[qid] if doc in rows[qid]["relevant"]]
        assert rows[qid]["judged"] == pytest.approx(len(judged) / 5)
    unjudged = sum(len([d for d in top[q] if d not in rows[q]["relevant"]]) for q in top) - 1
    assert data["judged"]["unjudged"] == unjudged
    assert data["judged"]["mean"] == pytest.approx(sum(row["judged"] for row in rows.values()) / 5)
    out = capsys.readouterr().out
    assert f"judged@5 {data['judged']['mean']:.3f}" in out and f"{unjudged} unjudged document(s)" in out
    assert "retrieved: *sso-setup(3) password-policy\n" in out  # judged: no "?"


def test_more_unjudged_documents_are_named_but_the_rules_decide(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(project, "baseline") == 0
    capsys.readouterr()
    assert cli(project, "gate", system=PADDED) == 0  # same metrics: the gate passes
    out = capsys.readouterr().out
    assert "possible pooling artefact" in out
    comparison = report(project)["comparison"]
    assert comparison["passed"] is True and comparison["pooling"]
    note = next(n for n in comparison["notes"] if n.startswith("possible pooling artefact"))
    for qid in comparison["pooling"]:
        assert f"{qid} (" in note
    summary = (project.parent / "build" / "summary.md").read_text(encoding="utf-8")
    assert "possible pooling artefact" in summary


def test_the_gate_shows_judged_at_k_of_baseline_and_now_in_every_rendering(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(project, "eval") == 0
    before = report(project)["judged"]
    assert cli(project, "baseline") == 0
    capsys.readouterr()
    assert cli(project, "gate", system=PADDED) == 0
    now = report(project)["judged"]
    assert now["unjudged"] > before["unjudged"]
    line = (
        f"judged@5 {before['mean']:.3f} -> {now['mean']:.3f}: the share of each top 5 the golden set "
        f"has judged ({before['unjudged']} -> {now['unjudged']} unjudged documents"
    )
    assert line in capsys.readouterr().out
    build = project.parent / "build"
    for page in ("summary.md", "report.html"):
        shown = (build / page).read_text(encoding="utf-8").replace("-&gt;", "->")
        assert line[0].upper() + line[1:] in shown, page


def test_no_note_when_the_top_k_is_as_judged_as_before(project: Path) -> None:
    assert cli(project, "baseline") == 0
    assert cli(project, "gate") == 0
    comparison = report(project)["comparison"]
    assert comparison["pooling"] == [] and not any("pooling" in n for n in comparison["notes"])


def test_pool_grade_merge_rebaseline_changes_the_numbers(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(project, "baseline") == 0
    pool_file = tmp_path / "pool.jsonl"
    assert cli(project, "pool", "--output", str(pool_file), system=PADDED) == 0
    lines = [json.loads(line) for line in pool_file.read_text(encoding="utf-8").splitlines()]
    pooled = {line["id"]: line["docs"] for line in lines}
    assert all(entry["in"] == ["candidate"] for entry in pooled["q3"])  # BM25 returned 1 document
    assert len(pooled["q3"]) == 4  # the padding in q3's top 5
    assert "wrote" in capsys.readouterr().out
    # A grader finds the first padded document relevant (grade 2) and the rest of q3's pool not.
    surfaced = pooled["q3"][0]["doc"]
    grades = {entry["doc"]: 0 for entry in pooled["q3"]} | {surfaced: 2}
    header = {"format": "rag-regress-judgments", "version": 1, "by": "ana", "at": "2026-12-03T10:00:00Z"}
    item = {"id": "q3", "origin": "question", "status": "judged", "question": "API", "judgments": grades}
    judged = write_jsonl(tmp_path / "ana.jsonl", [header, item])
    assert cli(project, "add-judgments", str(judged)) == 0
    assert cli(project, "gate", system=PADDED) == 2  # the golden set changed: re-baseline first
    assert "golden" in capsys.readouterr().err
    assert cli(project, "baseline") == 0
    before = json.loads((project.parent / "baseline.json").read_text(encoding="utf-8"))
    q3 = next(row for row in before["questions"] if row["id"] == "q3")
    assert q3["relevant"] == {"api-keys": 3, surfaced: 2}
    assert cli(project, "gate", system=PADDED) == 0  # padding now surfaces a relevant document
    now = report(project)
    row = next(row for row in now["questions"] if row["id"] == "q3")
    assert row["judged"] == pytest.approx(len(row["retrieved"][:5]) / 5)
    assert row["metrics"]["recall@5"] > q3["metrics"]["recall@5"]
    assert "q3" not in now["comparison"]["pooling"]


def test_a_baseline_whose_judged_share_was_edited_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(project, "baseline") == 0
    path = project.parent / "baseline.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["questions"][0]["judged"] = 1.0  # as if every document of its top 5 had been graded
    path.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    assert cli(project, "gate") == 2
    assert "question 'q1': judged = 1.0, its ranks give 0.2" in capsys.readouterr().err


def test_grade_writes_the_page_of_a_pool_and_refuses_nothing_to_grade(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(project, "baseline") == 0
    pool_file = tmp_path / "pool.jsonl"
    assert cli(project, "pool", "--output", str(pool_file), system=PADDED) == 0
    page = tmp_path / "grade.html"
    capsys.readouterr()
    assert cli(project, "grade", "--pool", str(pool_file), "--output", str(page)) == 0
    assert f"wrote {page}: 5 item(s) to grade" in capsys.readouterr().out
    html = page.read_text(encoding="utf-8")
    assert "password-policy" in html and "<script" in html
    assert cli(project, "grade", "--output", str(page)) == 2
    assert "give --candidates FILE, --pool FILE or --all" in capsys.readouterr().err
