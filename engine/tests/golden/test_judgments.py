"""`add-judgments`: grades from the grading page join the golden set with who and when;
conflicts are refused unless settled; two graders' agreement is Cohen's kappa."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from conftest import TINY_GOLDEN, run_cli, write_jsonl
from rag_regress.golden.agreement import cohen_kappa
from rag_regress.inputs.data import load_corpus, load_golden

WHO = {"by": "ana", "at": "2026-12-03T10:00:00Z"}
HEADER = {"format": "rag-regress-judgments", "version": 1, **WHO}


def judgments(path: Path, *items: dict[str, Any], header: dict[str, Any] = HEADER) -> Path:
    return write_jsonl(path, [header, *items])


def graded(qid: str, **grades: int) -> dict[str, Any]:
    question = next(q["question"] for q in TINY_GOLDEN if q["id"] == qid)
    return {"id": qid, "origin": "question", "status": "judged", "question": question, "judgments": grades}


def golden_lines(project: Path) -> dict[str, dict[str, Any]]:
    lines = (project.parent / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    return {line["id"]: line for line in map(json.loads, lines)}


def add(project: Path, *args: str | Path) -> int:
    return run_cli(["--config", str(project), "add-judgments", *map(str, args)])


def test_grades_join_relevant_and_not_relevant_with_provenance(project: Path, tmp_path: Path) -> None:
    before = (project.parent / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    file = judgments(tmp_path / "ana.jsonl", graded("q1", **{"password-policy": 1, "invoices": 0}))
    assert add(project, file) == 0
    after = (project.parent / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    q1 = json.loads(after[0])
    assert q1["relevant"] == {"sso-setup": 3, "password-policy": 1}
    assert q1["not_relevant"] == ["invoices"]
    assert q1["provenance"] == [
        {
            "by": "ana",
            "at": "2026-12-03T10:00:00Z",
            "file": "ana.jsonl",
            "docs": ["invoices", "password-policy"],
        }
    ]
    assert after[1:] == before[1:], "lines that did not change keep their bytes"
    questions = load_golden(project.parent / "golden.jsonl", load_corpus(project.parent / "corpus.jsonl"))
    assert questions[0].qrels == {"invoices": 0, "sso-setup": 3, "password-policy": 1}


def test_merging_the_same_file_twice_changes_nothing(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = judgments(tmp_path / "ana.jsonl", graded("q2", **{"api-keys": 0}))
    assert add(project, file) == 0
    once = (project.parent / "golden.jsonl").read_bytes()
    assert add(project, file) == 0
    assert (project.parent / "golden.jsonl").read_bytes() == once
    assert "unchanged" in capsys.readouterr().out


def test_a_conflict_is_refused_and_listed_unless_settled(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (project.parent / "golden.jsonl").read_bytes()
    file = judgments(tmp_path / "ana.jsonl", graded("q1", **{"sso-setup": 1}))
    assert add(project, file) == 2
    err = capsys.readouterr().err
    assert "1 conflicting grade(s), nothing merged" in err and "q1 sso-setup: 3" in err
    assert "--on-conflict keep|replace|max|min" in err
    assert (project.parent / "golden.jsonl").read_bytes() == before
    assert add(project, file, "--on-conflict", "keep") == 0
    assert golden_lines(project)["q1"]["relevant"] == {"sso-setup": 3}
    assert add(project, file, "--on-conflict", "replace") == 0
    assert golden_lines(project)["q1"]["relevant"] == {"sso-setup": 1}


def test_two_graders_agreement_and_their_conflicts(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ana = judgments(tmp_path / "ana.jsonl", graded("q1", **{"invoices": 0, "api-keys": 0, "export-data": 2}))
    ben = judgments(
        tmp_path / "ben.jsonl",
        graded("q1", **{"invoices": 0, "api-keys": 1, "export-data": 2}),
        header={**HEADER, "by": "ben"},
    )
    assert add(project, ana, ben) == 2  # api-keys: 0 against 1
    out, err = capsys.readouterr()
    expected = cohen_kappa_score([0, 0, 2], [0, 1, 2])
    assert f"on 3 pair(s): kappa {expected:.3f} on grades" in out
    assert "q1 api-keys: 0 vs 1" in out and "1 disagreement(s)" in out
    assert "q1 api-keys: 0 in the golden set or an earlier file, 1 in ben.jsonl" in err
    assert add(project, ana, ben, "--on-conflict", "max") == 0
    q1 = golden_lines(project)["q1"]
    assert q1["relevant"] == {"sso-setup": 3, "export-data": 2, "api-keys": 1}
    assert [entry["by"] for entry in q1["provenance"]] == ["ana", "ben"]


def test_accepted_candidates_become_questions_and_rejected_ones_do_not(project: Path, tmp_path: Path) -> None:
    candidate = {
        "id": "cand-0001",
        "origin": "candidate",
        "status": "accepted",
        "question": "Where do I create an API key?",
        "answerable": True,
        "reference": "Under Developer settings.",
        "nuggets": [{"text": "Developer settings", "vital": True}],
        "kind": "single",
        "passages": [{"doc": "api-keys", "start": 0, "end": 20, "grade": 3}],
        "provenance": {"model": "m", "prompt_version": "1", "seed": 0, "slot": 1},
        "judgments": {"api-keys": 3, "invoices": 0},
    }
    rejected = {**candidate, "id": "cand-0002", "status": "rejected", "question": "Something else?"}
    added = {
        "id": "new-1",
        "origin": "added",
        "status": "accepted",
        "question": "Export my projects",
        "judgments": {"export-data": 3},
    }
    file = judgments(tmp_path / "ana.jsonl", candidate, rejected, added)
    assert add(project, file) == 0
    lines = golden_lines(project)
    assert "cand-0002" not in lines
    new = lines["cand-0001"]
    assert new["relevant"] == {"api-keys": 3} and new["not_relevant"] == ["invoices"]
    assert new["reference"] == "Under Developer settings." and new["tags"] == ["generated", "single"]
    assert new["provenance"][0]["generated"]["model"] == "m"
    assert lines["new-1"]["relevant"] == {"export-data": 3} and lines["new-1"]["tags"] == ["added"]
    questions = load_golden(project.parent / "golden.jsonl", load_corpus(project.parent / "corpus.jsonl"))
    assert [q.id for q in questions][-2:] == ["cand-0001", "new-1"]


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        (graded("q5", **{"invoices": 2}), "q5 is unanswerable, but 'invoices' is graded 2"),
        (graded("q1", **{"no-such-doc": 1}), "document 'no-such-doc' is not in the corpus"),
        ({**graded("q1"), "id": "q99"}, "question 'q99' is not in the golden set"),
        (graded("q1", **{"invoices": 7 * 10}), "grade of 'invoices' is 70"),
        (
            {
                "id": "c",
                "origin": "candidate",
                "status": "accepted",
                "question": "x?",
                "judgments": {"invoices": 0},
            },
            "accepted question 'c' has no document graded 1 or more",
        ),
        ({**graded("q1"), "status": "accepted"}, "origin 'question' with status 'accepted'"),
    ],
)
def test_a_bad_item_names_its_file_and_line_and_nothing_is_written(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], item: dict[str, Any], problem: str
) -> None:
    before = (project.parent / "golden.jsonl").read_bytes()
    file = judgments(tmp_path / "bad.jsonl", graded("q2", **{"api-keys": 0}), item)
    assert add(project, file) == 2
    err = capsys.readouterr().err
    assert problem in err and "bad.jsonl" in err and ":3" in err
    assert (project.parent / "golden.jsonl").read_bytes() == before


def test_a_file_without_its_header_or_grader_is_refused(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert add(project, write_jsonl(tmp_path / "x.jsonl", [graded("q1")])) == 2
    assert "header" in capsys.readouterr().err
    assert add(project, judgments(tmp_path / "y.jsonl", graded("q1"), header={**HEADER, "by": " "})) == 2
    assert "names no grader" in capsys.readouterr().err


def test_dry_run_writes_nothing(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (project.parent / "golden.jsonl").read_bytes()
    assert add(project, judgments(tmp_path / "a.jsonl", graded("q1", invoices=0)), "--dry-run") == 0
    assert "1 grade(s) merged into 1 question(s)" in capsys.readouterr().out
    assert (project.parent / "golden.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ([0, 1, 2, 3, 3, 0], [0, 1, 2, 2, 3, 1]),
        ([1, 1, 0, 0], [1, 0, 1, 0]),
        ([True, False, True], [True, True, True]),
        ([2, 2, 2], [3, 3, 3]),
    ],
)
def test_cohen_kappa_equals_scikit_learns(first: list[int], second: list[int]) -> None:
    assert cohen_kappa(first, second) == pytest.approx(cohen_kappa_score(first, second))


def test_cohen_kappa_is_undefined_when_both_give_one_grade_throughout() -> None:
    assert cohen_kappa([1, 1], [1, 1]) is None
    assert cohen_kappa([], []) is None


def test_a_line_separator_inside_a_question_stays_in_its_line(project: Path, tmp_path: Path) -> None:
    """U+2028 is no line end in JSON Lines: a question holding one, in the golden set and in the
    page's download (JSON.stringify leaves it raw), merges like any other."""
    golden = project.parent / "golden.jsonl"
    rows = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]
    rows[1]["question"] = "first line\u2028second line"
    golden.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    item = {"id": rows[1]["id"], "origin": "question", "status": "judged", "question": rows[1]["question"]}
    file = tmp_path / "ana.jsonl"
    file.write_text(
        "".join(
            json.dumps(line, ensure_ascii=False) + "\n"
            for line in [HEADER, item | {"judgments": {"invoices": 0}}]
        ),
        encoding="utf-8",
    )
    assert "\u2028" in file.read_text(encoding="utf-8")
    assert add(project, file) == 0
    merged = [json.loads(line) for line in golden.read_bytes().decode("utf-8").split("\n") if line]
    assert merged[1]["question"] == "first line\u2028second line"
    assert "invoices" in merged[1]["not_relevant"]
