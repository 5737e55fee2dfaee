"""`add-judgments`: grades from the grading page join the golden set with who and when;
conflicts are refused unless settled; two graders' agreement is Cohen's kappa."""

from __future__ import annotations

import contextlib
import fnmatch
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from conftest import ENGINE_ROOT, TINY_GOLDEN, run_cli, write_jsonl
from rag_regress.errors import EvalInputError
from rag_regress.golden import merge as merge_module
from rag_regress.golden.agreement import cohen_kappa
from rag_regress.golden.merge import LOCK_PATTERN, Resolve, run_add_judgments
from rag_regress.inputs.data import load_corpus, load_golden
from rag_regress.settings.config import load_config

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


# A candidate as the page downloads it, accepted.
CANDIDATE = {
    "id": "cand-0001",
    "origin": "candidate",
    "status": "accepted",
    "question": "Where do I create an API key?",
    "answerable": True,
    "reference": "Under Developer settings.",
    "nuggets": [{"text": "Developer settings", "vital": True}],
    "kind": "acronym",
    "passages": [{"doc": "api-keys", "start": 0, "end": 20, "grade": 3}],
    "provenance": {"model": "m", "prompt_version": "1", "seed": 0, "slot": 1},
    "judgments": {"api-keys": 3},
}


def test_accepted_candidates_become_questions_and_rejected_ones_do_not(project: Path, tmp_path: Path) -> None:
    candidate = {**CANDIDATE, "kind": "single", "judgments": {"api-keys": 3, "invoices": 0}}
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
        ({key: v for key, v in graded("q1").items() if key != "question"}, "missing key(s): question"),
        ({**graded("q1"), "question": 5}, "'question' must be a non-empty string, got 5"),
        ({**graded("q1"), "judgments": [1]}, "'judgments' must be an object mapping document ids to grades"),
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


# -- merges that cannot lose or invent a grade ------------------------------------------------

BEN = {**HEADER, "by": "ben"}


def run_merge(project: Path, *paths: Path, how: Resolve | None = None) -> int:
    """add-judgments as the command line runs it, in this thread: its exit code."""
    try:
        return run_add_judgments(load_config(project), list(paths), how, dry_run=False)
    except EvalInputError:
        return 2


def test_two_merges_at_once_keep_every_grade_of_both(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two add-judgments racing on one golden set: each has read it before the other writes
    (a barrier holds both just after reading, unless the lock keeps the second out), yet every
    grade of both ends up in the file."""
    ana = judgments(tmp_path / "ana.jsonl", graded("q1", invoices=0), graded("q2", **{"api-keys": 0}))
    ben = judgments(
        tmp_path / "ben.jsonl", graded("q3", invoices=0), graded("q4", **{"api-keys": 0}), header=BEN
    )
    barrier = threading.Barrier(2, timeout=1.0)
    real = merge_module.merge

    def racing(*args: Any) -> merge_module.Merge:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()  # both have read the golden set (the old code's lost update)
        return real(*args)

    monkeypatch.setattr(merge_module, "merge", racing)
    codes: dict[str, int] = {}
    threads = [
        threading.Thread(target=lambda n=name, f=file: codes.__setitem__(n, run_merge(project, f)))
        for name, file in (("ana", ana), ("ben", ben))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert codes == {"ana": 0, "ben": 0}
    lines = golden_lines(project)
    assert lines["q1"]["not_relevant"] == ["invoices"] and lines["q2"]["not_relevant"] == ["api-keys"]
    assert lines["q3"]["not_relevant"] == ["invoices"] and lines["q4"]["not_relevant"] == ["api-keys"]
    lock = project.parent / ".golden.jsonl.lock"
    assert lock.exists() and fnmatch.fnmatch(lock.name, LOCK_PATTERN)
    ignored = (ENGINE_ROOT.parent / "{{cookiecutter.project_slug}}" / ".gitignore").read_text(
        encoding="utf-8"
    )
    assert LOCK_PATTERN in ignored.splitlines(), "a project never commits the lock file"


def test_a_golden_set_another_writer_changes_while_merging_is_merged_again(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A writer that takes no lock (an editor, a script) changes the file after it was read:
    the merge reads it again, so both changes are kept; one that never stops is exit 2."""
    golden = project.parent / "golden.jsonl"
    file = judgments(tmp_path / "ana.jsonl", graded("q1", invoices=0))
    real = merge_module.merge
    edits: list[int] = []

    def meddling(*args: Any) -> merge_module.Merge:
        if len(edits) < 1:
            edits.append(1)
            text = golden.read_text(encoding="utf-8").replace('"question": "API"', '"question": "API keys"')
            golden.write_text(text, encoding="utf-8")
        return real(*args)

    monkeypatch.setattr(merge_module, "merge", meddling)
    assert add(project, file) == 0
    lines = golden_lines(project)
    assert lines["q3"]["question"] == "API keys", "the other writer's change is kept"
    assert lines["q1"]["not_relevant"] == ["invoices"], "and so is the merge's"
    assert "changed while merging (another writer): merging again" in capsys.readouterr().err

    def restless(*args: Any) -> merge_module.Merge:
        with golden.open("a", encoding="utf-8") as out:
            out.write("\n")
        return real(*args)

    monkeypatch.setattr(merge_module, "merge", restless)
    other = judgments(tmp_path / "ben.jsonl", graded("q2", invoices=0), header=BEN)
    assert add(project, other) == 2
    err = capsys.readouterr().err
    assert (
        "golden.jsonl: it changed while add-judgments was merging, 3 times in a row: nothing written" in err
    )
    q2 = json.loads(golden.read_text(encoding="utf-8").splitlines()[1])
    assert q2["id"] == "q2" and "not_relevant" not in q2, "nothing of the merge was written"


def test_a_candidate_accepted_by_one_grader_and_rejected_by_another_is_a_conflict(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (project.parent / "golden.jsonl").read_bytes()
    ana = judgments(tmp_path / "ana.jsonl", CANDIDATE)
    ben = judgments(tmp_path / "ben.jsonl", {**CANDIDATE, "status": "rejected"}, header=BEN)
    assert add(project, ana, ben) == 2
    out, err = capsys.readouterr()
    assert (
        "1 candidate(s) decided by both; 1 disagreement(s)" in out
        and "cand-0001: accepted vs rejected" in out
    )
    assert "1 candidate(s) accepted and rejected, nothing merged" in err
    assert "cand-0001: accepted in ana.jsonl, rejected in ben.jsonl" in err
    assert "--on-conflict keep" in err and "edit one download" in err
    assert (project.parent / "golden.jsonl").read_bytes() == before
    assert add(project, ana, ben, "--on-conflict", "replace") == 0  # the last file's: rejected
    assert (project.parent / "golden.jsonl").read_bytes() == before
    assert add(project, ana, ben, "--on-conflict", "keep") == 0  # the first file's: accepted
    assert golden_lines(project)["cand-0001"]["tags"] == ["generated", "acronym"]
    # Now the golden set holds it: a later rejection is a conflict only `keep` settles.
    capsys.readouterr()
    late = judgments(
        tmp_path / "cy.jsonl", {**CANDIDATE, "status": "rejected"}, header={**HEADER, "by": "cy"}
    )
    assert add(project, late) == 2
    assert "accepted in the golden set (an earlier merge), rejected in cy.jsonl" in capsys.readouterr().err
    assert add(project, late, "--on-conflict", "replace") == 2  # never removes a golden question
    assert add(project, late, "--on-conflict", "keep") == 0
    assert "cand-0001" in golden_lines(project)


def test_a_candidate_two_graders_edited_differently_is_a_conflict(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (project.parent / "golden.jsonl").read_bytes()
    ana = judgments(tmp_path / "ana.jsonl", {**CANDIDATE, "question": "Where are API keys made?"})
    ben = judgments(tmp_path / "ben.jsonl", {**CANDIDATE, "reference": "In Developer settings."}, header=BEN)
    assert add(project, ana, ben) == 2
    out, err = capsys.readouterr()
    assert "cand-0001: accepted by both, edited differently (question, reference)" in out
    assert "1 disagreement(s)" in out
    assert "1 candidate(s) accepted with different edits, nothing merged" in err
    assert (
        "cand-0001: accepted with different edits of question, reference: question 'Where are API keys "
        "made?', reference 'Under Developer settings.' in ana.jsonl; question 'Where do I create an API "
        "key?', reference 'In Developer settings.' in ben.jsonl"
    ) in err
    assert (project.parent / "golden.jsonl").read_bytes() == before
    assert add(project, ana, ben, "--on-conflict", "replace") == 0
    merged = golden_lines(project)["cand-0001"]
    assert (merged["question"], merged["reference"]) == (
        "Where do I create an API key?",
        "In Developer settings.",
    )
    assert [entry["by"] for entry in merged["provenance"]] == ["ana", "ben"]
    # The golden set's text against a later file's: a conflict too; replace takes the file's.
    later = judgments(
        tmp_path / "cy.jsonl", {**CANDIDATE, "question": "API key?"}, header={**HEADER, "by": "cy"}
    )
    assert add(project, later) == 2
    assert (
        "question 'Where do I create an API key?', reference 'In Developer settings.' in the golden set"
        in (capsys.readouterr().err)
    )
    assert add(project, later, "--on-conflict", "replace") == 0
    assert golden_lines(project)["cand-0001"]["question"] == "API key?"


def test_questions_added_in_two_rounds_get_ids_the_golden_set_does_not_hold(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every round's page starts at new-1: the merge takes the next free new-N, and merging a
    round's file again changes nothing."""
    added = {"id": "new-1", "origin": "added", "status": "accepted", "answerable": True}
    first = judgments(
        tmp_path / "r1.jsonl", {**added, "question": "Export my projects", "judgments": {"export-data": 3}}
    )
    second = judgments(
        tmp_path / "r2.jsonl",
        {**added, "question": "Invoices as PDF?", "judgments": {"invoices": 3}},
        {**added, "id": "new-2", "question": "Keys for the API?", "judgments": {"api-keys": 2}},
        header=BEN,
    )
    assert add(project, first) == 0
    assert add(project, second) == 0
    assert "new-1 of r2.jsonl (line 2) joins as new-2: new-1 is taken" in capsys.readouterr().err
    lines = golden_lines(project)
    assert lines["new-1"]["question"] == "Export my projects"
    assert (
        lines["new-2"]["question"] == "Invoices as PDF?" and lines["new-3"]["question"] == "Keys for the API?"
    )
    assert all(lines[i]["tags"] == ["added"] for i in ("new-1", "new-2", "new-3"))
    once = (project.parent / "golden.jsonl").read_bytes()
    assert add(project, second) == 0 and add(project, first) == 0
    assert (project.parent / "golden.jsonl").read_bytes() == once


def test_a_bad_passage_is_named_in_the_users_file_not_a_temporary_one(project: Path, tmp_path: Path) -> None:
    bad = {**CANDIDATE, "passages": [{"doc": "api-keys", "start": 0, "end": 9999}]}
    file = judgments(tmp_path / "ana.jsonl", graded("q1", invoices=0), bad)
    with pytest.raises(EvalInputError) as raised:
        run_add_judgments(load_config(project), [file], None, dry_run=False)
    assert (raised.value.path, raised.value.line) == (str(file), 3)
    assert "cand-0001, as a new golden question: passage 1: offsets" in raised.value.problem
    # A golden question's passage on a document a grader now grades 0 (settled by replace).
    golden = project.parent / "golden.jsonl"
    rows = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]
    rows[3]["passages"] = [{"doc": "export-data", "quote": "Export projects"}]
    write_jsonl(golden, rows)
    file = judgments(tmp_path / "ben.jsonl", graded("q4", **{"export-data": 0}), header=BEN)
    with pytest.raises(EvalInputError) as raised:
        run_add_judgments(load_config(project), [file], "replace", dry_run=False)
    assert (raised.value.path, raised.value.line) == (str(golden.resolve()), 4)
    assert "q4, as merged with ben.jsonl: passage 1: document 'export-data'" in raised.value.problem


def test_a_symlinked_golden_set_is_refused_as_baseline_refuses_one(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared" / "golden.jsonl"
    shared.parent.mkdir()
    (project.parent / "golden.jsonl").rename(shared)
    (project.parent / "golden.jsonl").symlink_to(shared)
    before = shared.read_bytes()
    assert add(project, judgments(tmp_path / "ana.jsonl", graded("q1", invoices=0))) == 2
    err = capsys.readouterr().err
    assert "the golden set ([data] golden) would be written through the symlink" in err
    assert "point [data] golden at the file itself" in err
    assert shared.read_bytes() == before and (project.parent / "golden.jsonl").is_symlink()
