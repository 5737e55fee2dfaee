"""TREC / JSON qrels and runs: every accepted layout, trec_eval's tie order, the exports, and
the round trip golden set -> files -> import that must give the report's numbers exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import evaluate_shipped, run_cli
from rag_regress.api import Hit
from rag_regress.errors import EvalInputError
from rag_regress.interop.trec import format_qrels, format_run, load_qrels, load_runs
from rag_regress.retrieval.ranking import ascending_id_rank, top_hits, trec_order
from rag_regress.settings.config import load_config


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("q.txt", "q1 0 a 2\nq1 0 b 0\n\nq2\t0\tc\t1\n"),
        ("q.json", '{"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}'),
    ],
)
def test_graded_qrels_in_either_format(tmp_path: Path, name: str, text: str) -> None:
    assert load_qrels(write(tmp_path / name, text)) == {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}


def test_list_qrels_mean_grade_one(tmp_path: Path) -> None:
    """The list form `{qid: [relevant ids]}`: each listed id is relevant with grade 1."""
    assert load_qrels(write(tmp_path / "q.json", '{"q1": ["a", "b"]}')) == {"q1": {"a": 1, "b": 1}}


def test_scored_runs_rank_as_trec_eval(tmp_path: Path) -> None:
    """Score descending, ties by document id descending; the rank column is ignored."""
    text = "q1 Q0 a 1 1.0 sys\nq1 Q0 c 2 1.0 sys\nq1 Q0 b 3 2.5 sys\nq1 Q0 d 4 -3 sys\n"
    assert load_runs(write(tmp_path / "x.run", text)) == {"sys": {"q1": ["b", "c", "a", "d"]}}
    as_json = write(tmp_path / "mine.json", '{"q1": {"a": 1.0, "c": 1, "b": 2.5, "d": -3}}')
    assert load_runs(as_json) == {"mine": {"q1": ["b", "c", "a", "d"]}}


def test_ranked_lists_and_named_runs(tmp_path: Path) -> None:
    """`{qid: [ids]}` keeps the given order and takes the file's name; named runs keep theirs."""
    assert load_runs(write(tmp_path / "bm25.json", '{"q1": ["z", "a"], "q2": []}')) == {
        "bm25": {"q1": ["z", "a"], "q2": []}
    }
    text = '{"one": {"q1": ["z", "a"]}, "two": {"q1": {"a": 1, "z": 0.5}}}'
    assert load_runs(write(tmp_path / "r.json", text)) == {
        "one": {"q1": ["z", "a"]},
        "two": {"q1": ["a", "z"]},
    }
    trec = "q1 Q0 a 1 2 one\nq1 Q0 b 1 3 two\n"
    assert load_runs(write(tmp_path / "r.txt", trec)) == {"one": {"q1": ["a"]}, "two": {"q1": ["b"]}}


@pytest.mark.parametrize(
    ("loader", "text", "line", "message"),
    [
        (load_qrels, "q1 0 a 1\nq1 0 a\n", 2, "expected 4 columns"),
        (load_qrels, "q1 0 a 1\nq1 0 b high\n", 2, "grade must be an integer"),
        (load_qrels, "q1 0 a 1\nq1 0 a 0\n", 2, "judges 'a' twice (first on line 1)"),
        (load_qrels, "\n  \n", None, "holds no lines"),
        (load_qrels, '{\n  "q1": ["a"],\n  "q2": ["b", "b"]\n}', 3, "lists 'b' twice"),
        (load_qrels, '{\n  "q1": {"a": true}\n}', 2, "grade of 'a' must be an integer"),
        (load_qrels, '{"q1": {"a": 1.5}}', 1, "must be an integer"),
        (load_qrels, '{"q1": "a"}', 1, "expected a list of relevant ids or an object of grades"),
        (load_qrels, '{"q1": ["a b"]}', 1, "without spaces"),
        (load_qrels, '["q1"]', 1, "expected a JSON object, got list"),
        (load_qrels, '{"q1": ["a"],}', 1, "not valid JSON"),
        (load_runs, "q1 Q0 a 1 1.0\n", 1, "expected 6 columns"),
        (load_runs, "q1 Q0 a 1 nan run\n", 1, "score must be a finite decimal number"),
        # Python's float() reads these; trec_eval and other tools do not read them the same.
        (load_runs, "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 1_0 r\n", 2, "got '1_0'"),
        (load_runs, "q1 Q0 a 1 \u0663 r\n", 1, "score must be a finite decimal number"),
        (load_runs, "q1 Q0 a 1 True r\n", 1, "got 'True'"),
        (load_qrels, "q1 0 a 1\nq1 0 b \u0663\n", 2, "grade must be an integer"),
        (
            load_runs,
            "q1 Q0 a 1 1 r\nq1 Q0 a 2 0.5 r\n",
            2,
            "ranks 'a' twice for query 'q1' (first on line 1)",
        ),
        (load_runs, '{\n  "q1": ["a", "a"]\n}', 2, "q1 ranks 'a' twice"),
        (load_runs, '{"q1": {"a": "high"}}', 1, "score of 'a' must be a finite number, got 'high' (a str"),
        # A score as a string or a boolean is refused with its line, in one run or several.
        (
            load_runs,
            '{\n  "q1": {"a": 1.5},\n  "q2": {"a": "6.47"}\n}',
            3,
            "got '6.47' (a str, not a number)",
        ),
        (
            load_runs,
            '{\n  "q1": {\n    "a": 1.5,\n    "b": true\n  }\n}',
            4,
            "got True (a bool, not a number)",
        ),
        (load_runs, '{"r": {\n  "q1": {"a": 2},\n  "q2": {"a": "6.47"}}}', 3, "r/q2: score of 'a'"),
        (load_runs, '{"q1": {"a": null}}', 1, "got None"),
        (load_runs, '{"q1": {"a": NaN}}', None, "NaN is not a number JSON allows"),
        (load_runs, '{"q1": {"a": 1e999}}', 1, "must be a finite number"),
        (load_runs, '{"q1": {"a": 1' + "0" * 400 + "}}", 1, "must be a finite number"),
        (load_runs, '{"r": {"q1": ["a"]}, "s": []}', 1, "run 's': expected an object of queries"),
        (load_runs, "{}", 1, "holds no queries"),
        (load_runs, "[" * 100_000, None, "nested too deeply"),
    ],
)
def test_bad_files_name_file_line_and_fix(
    tmp_path: Path, loader, text: str, line: int | None, message: str
) -> None:
    path = write(tmp_path / "input", text)
    with pytest.raises(EvalInputError) as caught:
        loader(path)
    assert message in caught.value.problem
    assert caught.value.line == line
    assert caught.value.path == str(path)
    assert caught.value.fix


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(EvalInputError, match="does not exist"):
        load_runs(tmp_path / "missing.run")
    (tmp_path / "bad").write_bytes(b"q1 0 a 1\nq1 0 \xff 1\n")
    with pytest.raises(EvalInputError, match="not valid UTF-8") as caught:
        load_qrels(tmp_path / "bad")
    assert caught.value.line == 2


hits_strategy = st.lists(
    st.builds(Hit, st.sampled_from("abcdefgh"), st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0])),
    max_size=8,
    unique_by=lambda hit: hit.doc_id,
)


@given(hits_strategy)
def test_written_runs_read_back_in_trec_order_with_matching_ranks(hits: list[Hit]) -> None:
    """format_run writes 1-based ranks in trec_eval's order, and reading it back gives that order."""
    lines = [line.split() for line in format_run({"q1": hits}, "sys").splitlines()]
    assert [int(fields[3]) for fields in lines] == list(range(1, len(hits) + 1))
    assert [fields[2] for fields in lines] == [hit.doc_id for hit in trec_order(hits)]
    assert [float(fields[4]) for fields in lines] == [hit.score for hit in trec_order(hits)]


@given(hits_strategy)
def test_top_hits_and_trec_order_agree(hits: list[Hit]) -> None:
    """The retrievers' vectorised ranking uses the same rule as the run reader and writer."""
    ids = [hit.doc_id for hit in hits]
    scores = np.array([hit.score for hit in hits], dtype=float)
    ranked = top_hits(scores, ids, ascending_id_rank(ids), depth=len(hits))
    assert ranked == [hit for hit in trec_order(hits) if hit.score > 0]


def test_round_trip_golden_to_trec_gives_identical_metrics(project: Path, tmp_path: Path) -> None:
    """Export golden set and retriever output as TREC files, import them, score them with the
    configured metrics: every per-question value and every aggregate equals the report's."""
    qrels_path, run_path = tmp_path / "golden.qrels", tmp_path / "retriever.run"
    assert run_cli(["--config", str(project), "export-qrels", str(qrels_path)]) == 0
    assert run_cli(["--config", str(project), "export-run", str(run_path), "--tag", "tiny"]) == 0
    config = load_config(project)
    report = evaluate_shipped(config)
    qrels = load_qrels(qrels_path)
    (run,) = load_runs(run_path).values()
    scored = [row for row in report["questions"] if row["metrics"] is not None]
    assert sorted(qrels) == sorted(row["id"] for row in scored)  # unanswerable: no qrels lines
    for row in scored:
        assert qrels[row["id"]] == row["relevant"]
        assert run[row["id"]] == [doc_id for doc_id, _ in row["retrieved"]]
        values = {str(metric): metric(run[row["id"]], qrels[row["id"]]) for metric in config.metrics}
        assert values == row["metrics"]
    for metric in config.metrics:
        mean = sum(metric(run[qid], qrels[qid]) for qid in qrels) / len(qrels)
        assert mean == pytest.approx(report["aggregate"][str(metric)], abs=1e-12)


def test_json_exports_read_back(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `.json` target writes JSON, which the loaders read back to the same content."""
    assert run_cli(["--config", str(project), "export-qrels", str(tmp_path / "q.json")]) == 0
    assert run_cli(["--config", str(project), "export-run", str(tmp_path / "run.json")]) == 0
    assert "wrote 4 queries" in capsys.readouterr().out
    exported = json.loads((tmp_path / "q.json").read_text(encoding="utf-8"))
    assert (
        load_qrels(tmp_path / "q.json")
        == exported
        == load_qrels(write(tmp_path / "q", format_qrels(exported)))
    )
    (run,) = load_runs(tmp_path / "run.json").values()
    assert run["q1"][0] == "sso-setup"


def test_a_score_given_as_text_fails_compare_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole command: a JSON run with `"6.47"` for a score, or TREC text with `True`, is
    exit 2 naming the file and the line; nothing is scored from it."""
    qrels = write(tmp_path / "qrels.txt", "q1 0 a 1\nq2 0 b 1\n")
    good = write(tmp_path / "base.txt", "q1 Q0 a 1 2.5 base\nq2 Q0 b 1 1.5 base\n")
    for candidate, line in (
        (write(tmp_path / "cand.json", '{\n  "q1": {"a": 2.5},\n  "q2": {"b": "6.47"}\n}\n'), 3),
        (write(tmp_path / "cand.txt", "q1 Q0 a 1 2.5 cand\nq2 Q0 b 1 True cand\n"), 2),
    ):
        argv = ["compare", "--qrels", str(qrels), "--runs", str(good), str(candidate)]
        assert run_cli([*argv, "--baseline", "base", "--candidate", "cand", "--k", "1"]) == 2
        err = capsys.readouterr().err
        assert f"{candidate}:{line}:" in err and "fix:" in err


def test_reading_a_valid_json_run_never_searches_for_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding a key's line scans the file: done for every key, reading 4,000 queries took
    minutes (quadratic). It is done only for the one key an error names."""
    from rag_regress.interop import trec

    searches: list[tuple[str, ...]] = []
    original = trec._line_of
    monkeypatch.setattr(trec, "_line_of", lambda text, *keys: searches.append(keys) or original(text, *keys))
    run: dict[str, dict[str, object]] = {f"q{q}": {f"d{d}": float(d) for d in range(5)} for q in range(50)}
    write(tmp_path / "run.json", json.dumps(run, indent=1))
    write(tmp_path / "runs.json", json.dumps({"r": run, "s": {q: list(s) for q, s in run.items()}}))
    write(tmp_path / "qrels.json", json.dumps({q: {"d1": 1} for q in run}))
    assert load_runs(tmp_path / "run.json")["run"]["q3"][0] == "d4"
    assert set(load_runs(tmp_path / "runs.json")) == {"r", "s"}
    assert len(load_qrels(tmp_path / "qrels.json")) == 50
    assert searches == []
    run["q49"]["d2"] = "6.47"  # the mistake under test
    write(tmp_path / "bad.json", json.dumps(run, indent=1))
    with pytest.raises(EvalInputError) as caught:
        load_runs(tmp_path / "bad.json")
    assert searches == [("q49", "d2")] and caught.value.line is not None
