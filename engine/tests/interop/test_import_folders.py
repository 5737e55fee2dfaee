"""`import` of collections as they are found: a BEIR-like folder with one top-level qrels.tsv,
qrels of 3 or 4 columns with or without a header, `--qrels FILE`, topics as JSON Lines or TSV;
and what `import` prints afterwards about the settings of eval.toml the new data cannot use
(which `baseline --fit-floors` then clears) and the depth and metrics a test collection is
scored with.

Each test writes a small collection into tmp_path; the listing tests import it into a copy of
the demo project, whose eval.toml was written for other data (the help centre of "Tidemark").
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
from test_import import DOCS, QRELS, QUERIES, error_at, golden_rows, project, run_import, summary

from conftest import PROJECT_ROOT, run_cli, write_jsonl

EXPECTED = [
    {"id": "q1", "question": "How do I turn on SSO?", "relevant": {"d1": 2}},
    {"id": "q2", "question": "Where are my invoices?", "relevant": {"d2": 1}},
    {"id": "q3", "question": "How do I create an API key?", "relevant": {"d3": 1}},
]


def qrels_text(header: str | None = None, columns: int = 3, separator: str = "\t") -> str:
    rows = [(q, "0", d, str(g)) if columns == 4 else (q, d, str(g)) for q, d, g in QRELS]
    lines = ([header] if header else []) + [separator.join(row) for row in rows]
    return "".join(f"{line}\n" for line in lines)


def folder(root: Path, qrels: str | None = None, queries: str | None = None) -> Path:
    """A BEIR-like folder: corpus.jsonl, queries.jsonl (or `queries` as queries.tsv) and
    `qrels` as a top-level qrels.tsv (no qrels/ folder)."""
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "corpus.jsonl", DOCS)
    if queries is None:
        write_jsonl(root / "queries.jsonl", QUERIES)
    else:
        (root / "queries.tsv").write_text(queries, encoding="utf-8")
    if qrels is not None:
        (root / "qrels.tsv").write_text(qrels, encoding="utf-8")
    return root


# -- what is read ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("qrels", "layout"),
    [
        (qrels_text("query-id\tcorpus-id\tscore"), "3 columns, a header row"),
        (qrels_text(), "3 columns, no header row"),
        (qrels_text(separator=" "), "3 columns, no header row"),
        (qrels_text("qid iter docid rel", columns=4, separator=" "), "4 columns, a header row"),
    ],
    ids=["header", "no-header", "spaces", "trec-4-columns"],
)
def test_a_top_level_qrels_tsv_is_found_without_a_qrels_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], qrels: str, layout: str
) -> None:
    """As SciFact is laid out here: corpus.jsonl, queries.jsonl, qrels.tsv. The summary names
    the qrels file read and how its columns were read."""
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(folder(tmp_path / "c", qrels))) == 0
    assert golden_rows(config) == EXPECTED
    out = capsys.readouterr().out
    assert re.search(rf"^read .*corpus\.jsonl, .*queries\.jsonl and .*qrels\.tsv \({layout}\)$", out, re.M), (
        out
    )
    assert summary(out)["relevant judgments"] == 3


def test_qrels_option_overrides_the_folders_qrels(tmp_path: Path) -> None:
    """--qrels FILE is read instead of qrels/<split>.tsv or qrels.tsv, even outside the folder."""
    collection = folder(tmp_path / "c", qrels_text())
    (collection / "qrels").mkdir()
    (collection / "qrels" / "test.tsv").write_text("q1\td1\t1\n", encoding="utf-8")
    elsewhere = tmp_path / "judged-by-us.txt"
    elsewhere.write_text("q2 0 d2 3\nq3 0 d3 1\n", encoding="utf-8")
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(collection), "--qrels", str(elsewhere)) == 0
    assert golden_rows(config) == [
        {"id": "q2", "question": "Where are my invoices?", "relevant": {"d2": 3}},
        {"id": "q3", "question": "How do I create an API key?", "relevant": {"d3": 1}},
    ]
    # without --qrels, the qrels/ folder wins over the top-level file
    assert run_import(config, "beir", str(collection), "--force") == 0
    assert [row["id"] for row in golden_rows(config)] == ["q1"]


@pytest.mark.parametrize("header", ["query-id\ttext\n", "_id\tquery\n", ""], ids=["header", "_id", "none"])
def test_beir_queries_as_tsv(tmp_path: Path, header: str) -> None:
    """queries.tsv (id<TAB>text) when the folder has no queries.jsonl; a header row is skipped."""
    queries = header + "".join(f"{q['_id']}\t{q['text']}\n" for q in QUERIES)
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(folder(tmp_path / "c", qrels_text(), queries))) == 0
    assert golden_rows(config) == EXPECTED


@pytest.mark.parametrize(
    "topics",
    [
        "".join(f'{{"_id": "{q["_id"]}", "text": "{q["text"]}"}}\n' for q in QUERIES),
        "query-id\ttext\n" + "".join(f"{q['_id']}\t{q['text']}\n" for q in QUERIES),
    ],
    ids=["jsonl", "tsv-header"],
)
@pytest.mark.parametrize("columns", [3, 4])
def test_trec_takes_jsonl_or_tsv_topics_and_qrels_of_3_or_4_columns(
    tmp_path: Path, topics: str, columns: int
) -> None:
    files = tmp_path / "trec"
    files.mkdir()
    (files / "topics").write_text(topics, encoding="utf-8")
    (files / "qrels").write_text(qrels_text("query-id\tcorpus-id\tscore" if columns == 3 else None, columns))
    write_jsonl(files / "corpus.jsonl", DOCS)
    config = project(tmp_path / "project")
    args = ["trec", "--qrels", str(files / "qrels"), "--topics", str(files / "topics")]
    assert run_import(config, *args, "--corpus", str(files / "corpus.jsonl")) == 0
    assert golden_rows(config) == EXPECTED


@pytest.mark.parametrize(
    ("qrels", "line", "problem"),
    [
        ("query-id\tcorpus-id\tscore\nq1\td1\t1\n\nq2\td2\n", 4, "expected 3 columns"),
        ("q1 0 d1 1\nq2 d2 1\n", 2, "expected 4 columns (qid iteration docid grade) as on the first line"),
        ("q1\td1\t1\nq2\td2\tyes\n", 2, "grade must be an integer"),
        ("q1\td1\t1.5\n", 1, "grade must be an integer"),
        ("q1 d1\n", 1, "expected 3 columns (query-id corpus-id score) or 4"),
        ("query-id\tcorpus-id\tscore\n", None, "holds no judgments"),
    ],
    ids=["short-row", "mixed-widths", "word-grade", "decimal-grade", "two-columns", "header-only"],
)
def test_a_malformed_qrels_row_names_its_file_line_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], qrels: str, line: int | None, problem: str
) -> None:
    """Exit 2, `qrels.tsv:<line>:`, the problem and a fix; nothing is written."""
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(folder(tmp_path / "c", qrels))) == 2
    err = capsys.readouterr().err
    error_at(err, "qrels.tsv", line)
    assert problem in err, err
    assert not (config.parent / "corpus.jsonl").exists() and not (config.parent / "golden.jsonl").exists()


def test_a_malformed_tsv_topic_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = "id\ttext\nq1\tHow do I turn on SSO?\nq2 Where are my invoices?\n"
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(folder(tmp_path / "c", qrels_text(), queries))) == 2
    err = capsys.readouterr().err
    error_at(err, "queries.tsv", 3)
    assert "no tab" in err


def test_missing_qrels_say_where_they_are_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No qrels at all: the fix names qrels/<split>.tsv, qrels.tsv and --qrels. A --split with
    only a top-level qrels.tsv is refused rather than read as that split."""
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(folder(tmp_path / "none"))) == 2
    err = capsys.readouterr().err
    assert "qrels/<split>.tsv or qrels.tsv, or pass --qrels FILE" in err

    assert run_import(config, "beir", str(folder(tmp_path / "c", qrels_text())), "--split", "dev") == 2
    err = capsys.readouterr().err
    error_at(err, "dev.tsv", None)
    assert "leave out --split to read qrels.tsv" in err


# -- what is printed after an import ------------------------------------------------------


def demo_copy(root: Path) -> Path:
    """The demo project's eval.toml and data in `root` (the lexical judge: no model files)."""
    text = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8")
    root.mkdir(parents=True)
    (root / "eval.toml").write_text(
        re.sub(r'(?m)^backend = "nli"', 'backend = "lexical"', text), encoding="utf-8"
    )
    shutil.copytree(PROJECT_ROOT / "evals", root / "evals")
    return root / "eval.toml"


def toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_import_lists_the_settings_the_new_data_cannot_use_and_changes_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Into the demo project: its product name, answer checks with no key facts and no
    unanswerable question to check, a slice of a tag the collection lacks, a min_score in
    another retriever's units; and the depth and metrics a collection is scored with."""
    config = demo_copy(tmp_path / "demo")
    before = config.read_text(encoding="utf-8")
    assert run_import(config, "beir", str(folder(tmp_path / "c", qrels_text())), "--force") == 0
    out = capsys.readouterr().out
    lines = before.splitlines()

    def line_of(text: str) -> int:
        return next(number for number, line in enumerate(lines, start=1) if line.startswith(text))

    gated = line_of('metrics = ["recall@5"')
    assert "14 setting(s) of eval.toml the new data cannot use; `nox -s baseline -- --fit-floors`" in out
    for expected in [
        f'eval.toml:{line_of("names = ")}: [judge] names: "Tidemark": no document of the corpus says it',
        f'eval.toml:{gated}: [gate] metrics: "key_facts": no question of the golden set has `must_include`',
        '[gate] metrics: "abstention": the golden set has no unanswerable question',
        f"eval.toml:{line_of('key_facts = 0.70')}: [gate.floors] key_facts = 0.7:",
        "[gate.floors] abstention = 0.8: the golden set has no unanswerable question",
        f"eval.toml:{line_of('key_facts = 1.0')}: [gate.checks] key_facts = 1: no question",
        '[gate] metrics: "correctness": no question of the golden set has a `reference` answer to compare '
        "with: it is 0, and fails any floor",
        '[gate] metrics: "vital_recall": no question of the golden set has `nuggets` to find',
        f"eval.toml:{line_of('correctness = 0.70')}: [gate.floors] correctness = 0.7:",
        "[gate.checks] correctness = 1: no question of the golden set has a `reference` answer to compare "
        "with: no question can fail or pass it",
        "[gate.checks] abstention = 1: the golden set has no unanswerable question",
        "[gate.slices.acronym]: no answerable question of the golden set has the tag 'acronym'",
        f"eval.toml:{line_of('min_score = ')}: [generation] min_score = 3.35: the stand-in's abstention "
        "threshold, in the score units of the retriever",
        "`nox -s baseline -- --fit-floors` removes it (there is no unanswerable question",
        "[gate.floors] recall@5 = 0.8, hit@5 = 0.85, mrr = 0.7, faithfulness = 0.95, "
        "citation_precision = 0.95: minimums set",
        "[judge] labels = ",
        "suggested for a test collection (printed only; edit eval.toml to apply):",
        f"eval.toml:{line_of('depth = ')}: [retrieval] depth = 20:",
        "fix: set depth = 1000",
        'add "ndcg@10", "recall@100" to the list',
        "[retrieval] k = 5:",
    ]:
        assert expected in out, expected
    assert "faithfulness" not in out.split("made for the previous data")[0], "faithfulness can be checked"
    assert config.read_text(encoding="utf-8") == before, "import lists the settings; it changes none"


def test_import_into_settings_that_fit_lists_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tiny project's settings: no names, no answer checks gated, no slices, depth and
    metrics of a collection: nothing is listed but the floors and min_score to review."""
    config = project(tmp_path / "project")
    text = config.read_text(encoding="utf-8")
    text = text.replace("depth = 10", "depth = 1000").replace('"rprec"]', '"rprec", "ndcg@10", "recall@100"]')
    text = text.replace("k = 5", "k = 10")
    config.write_text(re.sub(r"(?s)\[gate\.checks\].*?\n\n", "", text), encoding="utf-8")
    assert run_import(config, "beir", str(folder(tmp_path / "c", qrels_text()))) == 0
    out = capsys.readouterr().out
    assert "cannot use" not in out and "suggested for a test collection" not in out
    assert "[generation] min_score = 0:" in out and "[gate.floors] hit@5 = 0.5: minimums set" in out


def test_fit_floors_after_an_import_clears_what_the_import_listed_and_the_gate_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`baseline --fit-floors` removes exactly the listed settings, keeping every comment of
    the settings that stay; the gate then passes on the new data."""
    config = demo_copy(tmp_path / "demo")
    assert run_import(config, "beir", str(folder(tmp_path / "c", qrels_text())), "--force") == 0
    capsys.readouterr()
    assert run_cli(["--config", str(config), "baseline", "--quiet", "--fit-floors"]) == 0
    said = capsys.readouterr()
    for change in [
        'eval.toml: [judge] names: "Tidemark" -> removed',
        'eval.toml: [gate] metrics: "key_facts" -> removed',
        'eval.toml: [gate] metrics: "abstention" -> removed',
        "eval.toml: [gate.floors] key_facts = 0.7 -> removed",
        "eval.toml: [gate.checks] key_facts = 1 -> removed",
        "eval.toml: [gate.checks] abstention = 1 -> removed",
        'eval.toml: [gate] metrics: "correctness" -> removed',
        "eval.toml: [gate.floors] vital_recall = 0.7 -> removed",
        "eval.toml: [gate.checks] correctness = 1 -> removed",
        "eval.toml: [gate.slices.acronym] -> removed",
        "eval.toml: [generation] min_score = 3.35 -> removed",
    ]:
        assert change in said.out, change
    assert "warning" not in said.err, said.err
    settings = toml(config)
    gate = settings["gate"]
    assert "names" not in settings["judge"] and "min_score" not in settings["generation"]
    assert gate["metrics"] == ["recall@5", "hit@5", "mrr", "ndcg@5", "faithfulness", "citation_precision"]
    assert set(gate["checks"]) == {"hit@5", "recall@5", "faithfulness", "citation_precision"}
    assert "key_facts" not in gate["floors"] and "abstention" not in gate["floors"]
    assert "slices" not in gate
    text = config.read_text(encoding="utf-8")
    assert (
        "# compared with the baseline" in text and "faithfulness = 1.0               # every sentence" in text
    )
    capsys.readouterr()
    assert run_cli(["--config", str(config), "gate"]) == 0, capsys.readouterr().out
