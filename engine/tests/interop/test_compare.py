"""`compare` end to end: the release check for runs from any system.

The fixture is a small lab: five queries (two with two relevant documents, one
must-pass), a baseline run, a candidate that raises MRR but loses the must-pass query, and a
corrected candidate. The expected numbers are worked out by hand in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import evaluate_shipped, run_cli
from rag_regress.interop.compare import compare_runs, load_inputs
from rag_regress.settings.config import load_config

QRELS = {
    "q-backup": ["doc-backup-policy", "doc-restore-test"],
    "q-dns": ["doc-dns-negative-cache"],
    "q-gpu": ["doc-gpu-memory", "doc-kv-cache"],
    "q-recovery": ["doc-restore-test"],
    "q-security": ["doc-origin-isolation", "doc-firewall-baseline"],
}
RUNS = {
    # first relevant at ranks 2, 1, 2, 1, 2 -> MRR@3 (0.5+1+0.5+1+0.5)/5 = 0.7; every relevant
    # id in the top 3 -> recall 1.0; precision (2+1+2+1+2)/15 = 0.5333
    "baseline": {
        "q-backup": ["doc-storage-price", "doc-backup-policy", "doc-restore-test"],
        "q-dns": ["doc-dns-negative-cache", "doc-dnssec", "doc-anycast"],
        "q-gpu": ["doc-model-format", "doc-gpu-memory", "doc-kv-cache"],
        "q-recovery": ["doc-restore-test", "doc-snapshot-list", "doc-rpo"],
        "q-security": ["doc-monitoring", "doc-firewall-baseline", "doc-origin-isolation"],
    },
    # relevant first for four queries, nothing relevant for q-recovery -> MRR 0.8, recall 0.8
    "candidate_bad": {
        "q-backup": ["doc-backup-policy", "doc-restore-test", "doc-storage-price"],
        "q-dns": ["doc-dns-negative-cache", "doc-dnssec", "doc-anycast"],
        "q-gpu": ["doc-gpu-memory", "doc-kv-cache", "doc-model-format"],
        "q-recovery": ["doc-snapshot-list", "doc-rpo", "doc-storage-price"],
        "q-security": ["doc-origin-isolation", "doc-firewall-baseline", "doc-monitoring"],
    },
    # relevant first everywhere and nothing lost -> MRR 1.0, recall 1.0
    "candidate_good": {
        "q-backup": ["doc-restore-test", "doc-backup-policy", "doc-storage-price"],
        "q-dns": ["doc-dns-negative-cache", "doc-dnssec", "doc-anycast"],
        "q-gpu": ["doc-kv-cache", "doc-gpu-memory", "doc-model-format"],
        "q-recovery": ["doc-restore-test", "doc-rpo", "doc-snapshot-list"],
        "q-security": ["doc-origin-isolation", "doc-firewall-baseline", "doc-monitoring"],
    },
}


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def lab(tmp_path: Path) -> tuple[Path, Path]:
    """qrels.json and runs.json in the JSON layouts `compare` reads."""
    return write_json(tmp_path / "qrels.json", QRELS), write_json(tmp_path / "runs.json", RUNS)


def compare(qrels: Path, runs: Path | list[Path], *args: str) -> int:
    paths = runs if isinstance(runs, list) else [runs]
    return run_cli(["compare", "--qrels", str(qrels), "--runs", *map(str, paths), *args])


def test_seed_004_baseline_numbers(lab: tuple[Path, Path]) -> None:
    """The baseline has Recall@3 1.0, MRR@3 0.7 and P@3 0.5333 (8 of 15 slots relevant)."""
    qrels, runs, _ = load_inputs(lab[0], [lab[1]])
    result = compare_runs(qrels, runs, "baseline", "candidate_good", 3, [])
    macro = result.macro["baseline"]
    assert macro["recall@3"] == 1.0
    assert macro["mrr@3"] == pytest.approx(0.7, abs=1e-12)
    assert macro["precision@3"] == pytest.approx(8 / 15, abs=1e-12)
    assert round(macro["precision@3"], 4) == 0.5333


def test_seed_004_better_mrr_but_lost_must_pass_query_is_rejected(
    lab: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """candidate_bad: MRR rises to 0.8, recall falls to 0.8, q-recovery finds nothing: exit 3."""
    receipt = tmp_path / "verdict.json"
    gate = ["--baseline", "baseline", "--candidate", "candidate_bad", "--must-pass", "q-recovery", "--k", "3"]
    code = compare(*lab, *gate, "--output", str(receipt))
    out = capsys.readouterr().out
    assert code == 3
    assert "FAIL  recall@3 not lower (1.0000 -> 0.8000)" in out
    assert "PASS  mrr@3 not lower (0.7000 -> 0.8000)" in out
    assert "FAIL  must-pass queries hit in the top 3 (missed: q-recovery)" in out
    assert "REJECTED" in out
    # per-query ids: what q-recovery lost, and where the candidate found the rest
    assert "candidate_bad  rr 0.000  found: -  missing: doc-restore-test" in out
    verdict = json.loads(receipt.read_text(encoding="utf-8"))
    assert verdict["accepted"] is False
    assert verdict["failed_queries"] == ["q-recovery"]
    assert verdict["macro"]["candidate_bad"]["mrr@3"] == pytest.approx(0.8, abs=1e-12)
    assert verdict["macro"]["candidate_bad"]["recall@3"] == pytest.approx(0.8, abs=1e-12)
    assert verdict["checks"] == {
        "recall@3 not lower": False,
        "mrr@3 not lower": True,
        "must-pass queries hit in the top 3": False,
    }


def test_seed_004_corrected_candidate_is_accepted(
    lab: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """candidate_good: recall@3 1.0 and MRR@3 1.0, must-pass hit: exit 0."""
    receipt = tmp_path / "verdict.json"
    gate = [
        "--baseline",
        "baseline",
        "--candidate",
        "candidate_good",
        "--must-pass",
        "q-recovery",
        "--k",
        "3",
    ]
    code = compare(*lab, *gate, "--output", str(receipt))
    assert code == 0
    assert "ACCEPTED" in capsys.readouterr().out
    verdict = json.loads(receipt.read_text(encoding="utf-8"))
    assert verdict["macro"]["candidate_good"]["recall@3"] == 1.0
    assert verdict["macro"]["candidate_good"]["mrr@3"] == 1.0
    assert verdict["accepted"] is True and verdict["failed_queries"] == []


def test_summary_first_then_only_the_queries_that_changed_or_fail(
    lab: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Macro table, checks and verdict come first; per-query ids follow for the queries whose
    results differ between the runs (q-backup, q-gpu, q-security move their relevant ids up;
    q-recovery loses its one) and not for q-dns, which both runs rank the same."""
    gate = ["--baseline", "baseline", "--candidate", "candidate_bad", "--must-pass", "q-recovery", "--k", "3"]
    assert compare(*lab, *gate) == 3
    out = capsys.readouterr().out
    order = ["Macro averages over 5 queries", "Checks", "REJECTED", "Per query"]
    assert [out.index(text) for text in order] == sorted(out.index(text) for text in order)
    assert "4 of 5 queries" in out
    for qid in ("q-backup", "q-gpu", "q-recovery  [must pass]", "q-security"):
        assert f"\n  {qid}\n" in out
    assert "q-dns" not in out


def test_a_must_pass_query_missed_by_both_runs_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Identical runs differ nowhere, but a must-pass query they both miss fails a check: it is
    the one query listed, and the candidate is rejected."""
    qrels = write_json(tmp_path / "qrels.json", QRELS)
    same = RUNS["candidate_bad"]
    runs = write_json(tmp_path / "runs.json", {"before": same, "after": same})
    args = ["--baseline", "before", "--candidate", "after", "--must-pass", "q-recovery", "--k", "3"]
    code = compare(qrels, runs, *args)
    out = capsys.readouterr().out
    assert code == 3
    assert "1 of 5 queries" in out
    assert "  q-recovery  [must pass]\n    before  rr 0.000  found: -  missing: doc-restore-test" in out
    assert "q-backup" not in out


def big_query(tmp_path: Path) -> tuple[Path, Path]:
    """One query with 302 relevant documents (a classic test collection's size): both runs find
    doc-000 and doc-001 in their top 3, in other places, and miss the other 300."""
    relevant = [f"doc-{i:03d}" for i in range(302)]
    runs = {
        "baseline": {"q": ["doc-x", "doc-000", "doc-001"]},
        "candidate": {"q": ["doc-000", "doc-001", "doc-x"]},
    }
    return write_json(tmp_path / "qrels.json", {"q": relevant}), write_json(tmp_path / "runs.json", runs)


BIG = ["--baseline", "baseline", "--candidate", "candidate", "--k", "3"]


def test_a_long_id_list_is_cut_to_a_few_and_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """300 missing ids print as five and "... and 295 more"; the JSON receipt keeps all 300."""
    receipt = tmp_path / "verdict.json"
    assert compare(*big_query(tmp_path), *BIG, "--output", str(receipt)) == 0
    out = capsys.readouterr().out
    assert "missing: doc-002, doc-003, doc-004, doc-005, doc-006 ... and 295 more" in out
    assert "doc-007" not in out
    verdict = json.loads(receipt.read_text(encoding="utf-8"))
    assert len(verdict["queries"]["candidate"][0]["missing"]) == 300


def test_all_prints_every_query_and_every_id(
    lab: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--all: q-dns too (unchanged), and all 300 missing ids of the big query, uncut."""
    gate = ["--baseline", "baseline", "--candidate", "candidate_bad", "--k", "3", "--all"]
    assert compare(*lab, *gate) == 3
    out = capsys.readouterr().out
    assert "  q-dns\n    baseline       rr 1.000  found: doc-dns-negative-cache  missing: -" in out
    assert out.index("REJECTED") < out.index("q-dns")  # the summary still comes first
    big = tmp_path / "big"
    big.mkdir()
    assert compare(*big_query(big), *BIG, "--all") == 0
    out = capsys.readouterr().out
    assert "missing: " + ", ".join(f"doc-{i:03d}" for i in range(2, 302)) in out
    assert "more" not in out


def test_compare_scores_a_run_as_eval_does(project: Path) -> None:
    """The retriever's rankings from `eval`'s report, compared as a run: every question's
    metrics and found/missing ids are exactly the report's (one scorer for both)."""
    report = evaluate_shipped(load_config(project))
    rows = [row for row in report["questions"] if row["metrics"] is not None]
    qrels = {row["id"]: row["relevant"] for row in rows}
    run = {row["id"]: [doc_id for doc_id, _ in row["retrieved"]] for row in rows}
    result = compare_runs(qrels, {"a": run, "b": run}, "a", "b", 5, [])
    for row, scored in zip(rows, result.scores["a"], strict=True):
        assert (scored.qid, scored.found, scored.missing) == (row["id"], row["found"], row["missing"])
        for name in ("precision@5", "recall@5", "hit@5", "ndcg@5"):
            assert scored.metrics[name] == row["metrics"][name], (row["id"], name)


def test_trec_files_give_the_same_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same lab as TREC qrels and two scored TREC runs in separate files: same numbers."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} 1\n" for q, ids in QRELS.items() for d in ids), encoding="utf-8")
    paths = []
    for name in ("baseline", "candidate_bad"):
        lines = [
            f"{q} Q0 {d} {rank} {10 - rank} {name}\n"
            for q, ids in RUNS[name].items()
            for rank, d in enumerate(ids, start=1)
        ]
        paths.append(tmp_path / f"{name}.run")
        paths[-1].write_text("".join(reversed(lines)), encoding="utf-8")  # order comes from scores
    gate = ["--baseline", "baseline", "--candidate", "candidate_bad", "--k", "3", "--must-pass", "q-recovery"]
    code = compare(qrels, paths, *gate)
    out = capsys.readouterr().out
    assert code == 3
    assert "PASS  mrr@3 not lower (0.7000 -> 0.8000)" in out
    assert "missed: q-recovery" in out


def _error_of(qrels: object, runs: object, tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str):
    q = write_json(tmp_path / "q.json", qrels) if not isinstance(qrels, str) else tmp_path / "q.txt"
    if isinstance(qrels, str):
        q.write_text(qrels, encoding="utf-8")
    r = write_json(tmp_path / "r.json", runs)
    code = compare(q, r, "--baseline", "baseline", "--candidate", "candidate_good", "--k", "3", *args)
    return code, capsys.readouterr()


@pytest.mark.parametrize(
    ("qrels", "runs", "args", "message"),
    [
        ({}, RUNS, [], "holds no queries"),
        ({**QRELS, "q-dns": []}, RUNS, [], "'q-dns' has no judged documents"),
        ({**QRELS, "q-dns": ["doc-a", "doc-a"]}, RUNS, [], "lists 'doc-a' twice"),
        ('{"q-dns": {"doc-a": 1, "doc-a": 2}}', RUNS, [], "key 'doc-a' appears twice"),
        ("q-dns 0 doc-a 1\nq-dns 0 doc-a 2\n", RUNS, [], "judges 'doc-a' twice (first on line 1)"),
        ({**QRELS, "q-extra": ["doc-a"]}, RUNS, [], "run 'baseline' lacks 1 qrels queries (q-extra)"),
        (
            {q: v for q, v in QRELS.items() if q != "q-dns"},
            RUNS,
            [],
            "has 1 queries not in the qrels (q-dns)",
        ),
        (
            QRELS,
            {**RUNS, "baseline": {**RUNS["baseline"], "q-dns": ["doc-a", "doc-b", "doc-a"]}},
            [],
            "baseline/q-dns ranks 'doc-a' twice",
        ),
        (
            QRELS,
            {**RUNS, "baseline": {**RUNS["baseline"], "q-dns": ["doc-a", "doc-b"]}},
            [],
            "query 'q-dns': ranks 2 documents, fewer than k=3",
        ),
        (QRELS, RUNS, ["--must-pass", "q-nope"], "must-pass query 'q-nope' is not in the qrels"),
        ({**QRELS, "q-dns": {"doc-x": 0}}, RUNS, [], "'q-dns' has no relevant document"),
        (QRELS, {"other": RUNS["baseline"]}, [], "no run named 'baseline'"),
    ],
)
def test_invalid_input_is_refused_before_scoring(
    qrels: object,
    runs: object,
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each of compare's validation rules: exit 2, the file, the problem and a fix; no verdict."""
    code, captured = _error_of(qrels, runs, tmp_path, capsys, *args)
    assert code == 2
    assert message in captured.err
    assert "fix:" in captured.err
    assert "ACCEPTED" not in captured.out and "REJECTED" not in captured.out


def test_duplicate_run_names_across_files_are_refused(
    lab: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two files both holding a run called `baseline` cannot be told apart: exit 2."""
    other = write_json(tmp_path / "more.json", {"baseline": RUNS["baseline"]})
    code = compare(
        lab[0], [lab[1], other], "--baseline", "baseline", "--candidate", "candidate_good", "--k", "3"
    )
    assert code == 2
    assert "a run named 'baseline' is also in" in capsys.readouterr().err


def test_compare_needs_no_eval_toml(
    lab: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any system's runs can be compared in an empty folder."""
    monkeypatch.chdir(tmp_path)
    assert not (tmp_path / "eval.toml").exists()
    assert compare(*lab, "--baseline", "baseline", "--candidate", "candidate_good", "--k", "3") == 0
