"""`import`: a BEIR folder or TREC files become the corpus and golden set in one command.

Each test writes a small collection into tmp_path, imports it into a project whose eval.toml
points [data] at corpus.jsonl and golden.jsonl, and checks what a team relies on: the files
written (read back by the project's own loaders), the summary's counts, warnings on stderr,
and exit 2 with `file:line` and a fix for anything unreadable.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY_CONFIG, run_cli, write_jsonl
from rag_regress.inputs.data import load_corpus, load_golden
from rag_regress.interop.collections import sample

# SciFact in the layout of its SOURCE.md (corpus.jsonl, queries.jsonl, qrels.tsv), if present
# A real collection, when you have one: BEIR SciFact's corpus.jsonl, queries.jsonl, qrels.tsv.
SCIFACT = Path(os.environ.get("SCIFACT_DIR", "") or "no-scifact-given")
DOCS = [
    {"_id": "d1", "title": "Single sign-on", "text": "Turn on SSO with SAML."},
    {"_id": "d2", "title": "Invoices", "text": "Download invoices as PDF files."},
    {"_id": "d3", "title": "API keys", "text": "Create an API key under Developer settings."},
    {"_id": "d4", "title": "Unrelated", "text": "Nothing anyone asks about."},
]
QUERIES = [
    {"_id": "q1", "text": "How do I turn on SSO?"},
    {"_id": "q2", "text": "Where are my invoices?"},
    {"_id": "q3", "text": "How do I create an API key?"},
]
QRELS = [("q1", "d1", 2), ("q1", "d4", 0), ("q2", "d2", 1), ("q3", "d3", 1)]


def project(root: Path) -> Path:
    """An eval.toml whose [data] names corpus.jsonl and golden.jsonl, which do not exist yet."""
    root.mkdir(parents=True, exist_ok=True)
    config = root / "eval.toml"
    config.write_text(TINY_CONFIG, encoding="utf-8")
    return config


def beir(
    root: Path,
    docs: list[dict[str, Any]] = DOCS,
    queries: list[dict[str, Any]] = QUERIES,
    qrels: list[tuple[str, str, int]] = QRELS,
    *,
    header: bool = True,
    split: str = "test",
) -> Path:
    """A BEIR folder: corpus.jsonl, queries.jsonl and qrels/<split>.tsv (CRLF, as BEIR's)."""
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "corpus.jsonl", docs)
    write_jsonl(root / "queries.jsonl", queries)
    lines = (["query-id\tcorpus-id\tscore"] if header else []) + [f"{q}\t{d}\t{g}" for q, d, g in qrels]
    (root / "qrels" / f"{split}.tsv").write_bytes("".join(f"{line}\r\n" for line in lines).encode())
    return root


def run_import(config: Path, *args: str) -> int:
    return run_cli(["--config", str(config), "import", *args])


def summary(out: str) -> dict[str, int]:
    """The summary's counts: `  questions kept       2 (...)` -> {"questions kept": 2}."""
    return {name: int(n) for name, n in re.findall(r"^  ([a-z][a-z ]*[a-z]) +(\d+)", out, re.MULTILINE)}


def golden_rows(config: Path) -> list[dict[str, Any]]:
    """The written golden set, as the project's loaders read it (so it is valid input)."""
    questions = load_golden(config.parent / "golden.jsonl", load_corpus(config.parent / "corpus.jsonl"))
    return [{"id": q.id, "question": q.question, "relevant": q.relevant} for q in questions]


def error_at(err: str, name: str, line: int | None) -> None:
    """Exit 2's message: `<file>:<line>: <problem>` and a fix."""
    where = f"{name}:{line}:" if line is not None else f"{name}:"
    assert where in err, err
    assert "\n  fix: " in err


# -- BEIR --------------------------------------------------------------------------------


@pytest.mark.parametrize("header", [True, False], ids=["qrels-header", "no-header"])
@pytest.mark.parametrize("id_key", ["_id", "id"])
def test_beir_folder_becomes_corpus_and_golden_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: bool, id_key: str
) -> None:
    """Every document is kept (d4 is judged not relevant, and still retrievable), each
    question keeps its relevant documents and grades, in the collection's order."""
    docs = [{id_key: d["_id"], "title": d["title"], "text": d["text"]} for d in DOCS]
    queries = [{id_key: q["_id"], "text": q["text"]} for q in QUERIES]
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(beir(tmp_path / "beir", docs, queries, header=header))) == 0

    corpus = load_corpus(config.parent / "corpus.jsonl")
    assert list(corpus) == ["d1", "d2", "d3", "d4"]
    assert corpus["d1"].title == "Single sign-on" and corpus["d1"].text == "Turn on SSO with SAML."
    assert golden_rows(config) == [
        {"id": "q1", "question": "How do I turn on SSO?", "relevant": {"d1": 2}},
        {"id": "q2", "question": "Where are my invoices?", "relevant": {"d2": 1}},
        {"id": "q3", "question": "How do I create an API key?", "relevant": {"d3": 1}},
    ]
    out = capsys.readouterr().out
    assert summary(out) == {
        "documents": 4,
        "questions kept": 3,
        "questions left out": 0,
        "relevant judgments": 3,
        "warnings": 0,
    }


def test_the_split_chooses_the_qrels_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--split dev reads qrels/dev.tsv; an unknown split names the ones the folder has."""
    folder = beir(tmp_path / "collection")
    beir(folder, qrels=[("q2", "d2", 1)], split="dev")
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(folder), "--split", "dev") == 0
    assert [row["id"] for row in golden_rows(config)] == ["q2"]

    assert run_import(config, "beir", str(folder), "--split", "train", "--force") == 2
    err = capsys.readouterr().err
    error_at(err, "train.tsv", None)
    assert "--split: dev, test" in err


def test_graded_relevance_is_kept_and_non_relevant_grades_left_out(tmp_path: Path) -> None:
    """Grades 3, 2 and 1 are copied; 0 and -1 (judged not relevant) are not in `relevant`."""
    qrels = [
        ("q1", "d1", 3),
        ("q1", "d2", 2),
        ("q1", "d3", 1),
        ("q1", "d4", 0),
        ("q2", "d2", 1),
        ("q2", "d1", -1),
    ]
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(beir(tmp_path / "c", qrels=qrels))) == 0
    relevant = {row["id"]: row["relevant"] for row in golden_rows(config)}
    assert relevant["q1"] == {"d1": 3, "d2": 2, "d3": 1}
    assert relevant["q2"] == {"d2": 1}


def test_questions_without_relevant_judgments_are_left_out_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """q3 is not judged and q4 only judged not relevant: neither can be scored."""
    queries = [*QUERIES, {"_id": "q4", "text": "Is there a mobile app?"}]
    qrels = [("q1", "d1", 1), ("q2", "d2", 1), ("q4", "d4", 0)]
    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(beir(tmp_path / "c", queries=queries, qrels=qrels))) == 0
    assert [row["id"] for row in golden_rows(config)] == ["q1", "q2"]
    counts = summary(capsys.readouterr().out)
    assert counts["questions kept"] == 2 and counts["questions left out"] == 2


def test_sample_is_reproducible_and_keeps_the_collections_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same N and seed: the same questions, in file order; another seed: another sample."""
    docs = [{"_id": f"d{i}", "title": "", "text": f"document {i}"} for i in range(30)]
    queries = [{"_id": f"q{i}", "text": f"question {i}"} for i in range(30)]
    folder = beir(tmp_path / "c", docs, queries, [(f"q{i}", f"d{i}", 1) for i in range(30)])

    def sampled(seed: int) -> list[str]:
        config = project(tmp_path / f"project-{seed}")
        assert run_import(config, "beir", str(folder), "--sample", "10", "--seed", str(seed), "--force") == 0
        return [row["id"] for row in golden_rows(config)]

    first = sampled(7)
    assert len(first) == 10
    assert first == sorted(first, key=lambda qid: int(qid[1:]))  # the collection's order
    assert sampled(7) == first
    assert sampled(8) != first
    counts = summary(capsys.readouterr().out)
    assert counts["questions kept"] == 10 and counts["documents"] == 30  # every document kept


def test_sample_does_not_depend_on_the_files_order() -> None:
    """A question's chance depends on its id and the seed only: reordering the queries file
    (or another Python) picks the same questions."""
    ids = [f"q{i}" for i in range(50)]
    chosen = sample(ids, 10, seed=7)
    assert len(chosen) == 10 and chosen == [qid for qid in ids if qid in chosen]  # in the given order
    assert set(sample(list(reversed(ids)), 10, seed=7)) == set(chosen)


def test_empty_text_documents_are_kept_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A classic collection judges documents with empty text relevant: they are imported,
    one warning line says so, and `eval` runs on the result."""
    docs = [*DOCS, {"_id": "d5", "title": "Mobile apps", "text": ""}, {"_id": "d6", "title": "", "text": ""}]
    queries = [*QUERIES, {"_id": "q4", "text": "mobile apps"}]
    config = project(tmp_path / "project")
    folder = beir(tmp_path / "c", docs, queries, [*QRELS, ("q4", "d5", 1)])
    assert run_import(config, "beir", str(folder)) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "2 document(s) with empty text" in warnings[0]
    assert summary(captured.out)["warnings"] == 1
    assert load_corpus(config.parent / "corpus.jsonl")["d5"].text == ""
    assert run_cli(["--config", str(config), "eval", "--quiet"]) == 0


def test_existing_files_are_kept_without_force_and_replaced_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The team's data is never lost to a mistyped command: exit 2 names the file and the
    fix. With --force the files are replaced, even when what is there is not valid."""
    config = project(tmp_path / "project")
    corpus = config.parent / "corpus.jsonl"
    corpus.write_text("not json\n", encoding="utf-8")
    folder = str(beir(tmp_path / "c"))
    assert run_import(config, "beir", folder) == 2
    err = capsys.readouterr().err
    error_at(err, "corpus.jsonl", None)
    assert "already exists" in err and "--force" in err
    assert corpus.read_text(encoding="utf-8") == "not json\n"
    assert not (config.parent / "golden.jsonl").exists()

    assert run_import(config, "beir", folder, "--force") == 0
    assert len(load_corpus(corpus)) == 4
    assert run_import(config, "beir", folder) == 2  # now golden.jsonl exists too


# -- TREC --------------------------------------------------------------------------------

SGML_TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>

<top>
<num> Number: 302
<title> Topic:  Poliomyelitis and
  Post-Polio
<desc> Description:
Is the disease of Poliomyelitis (polio) under control?
</top>
"""


def trec_files(root: Path, topics: str, corpus: str, qrels: str) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in (("topics", topics), ("corpus", corpus), ("qrels", qrels)):
        (root / name).write_text(text, encoding="utf-8")
    return [
        "trec",
        "--qrels",
        str(root / "qrels"),
        "--topics",
        str(root / "topics"),
        "--corpus",
        str(root / "corpus"),
    ]


def test_trec_sgml_topics_with_unclosed_tags(tmp_path: Path) -> None:
    """The title is the question (labels and line breaks dropped); <desc> and <narr> are not."""
    corpus = "".join(
        json.dumps({"id": f"FT-{n}", "title": "", "text": text}) + "\n"
        for n, text in [(1, "Mafia groups across borders."), (2, "Polio vaccines."), (3, "Weather.")]
    )
    qrels = "301 0 FT-1 1\n301 0 FT-3 0\n302 0 FT-2 2\n"
    config = project(tmp_path / "project")
    assert run_import(config, *trec_files(tmp_path / "trec", SGML_TOPICS, corpus, qrels)) == 0
    assert golden_rows(config) == [
        {"id": "301", "question": "International Organized Crime", "relevant": {"FT-1": 1}},
        {"id": "302", "question": "Poliomyelitis and Post-Polio", "relevant": {"FT-2": 2}},
    ]


@pytest.mark.parametrize(
    ("corpus", "titles"),
    [
        ("d1\tTurn on SSO.\nd2\tInvoices\tas PDF.\n", {"d1": "", "d2": ""}),  # a tab inside a text
        ("d1\tSSO\tTurn on SSO.\nd2\tBilling\tInvoices as PDF.\n", {"d1": "SSO", "d2": "Billing"}),
        ("id\ttext\ttitle\nd1\tTurn on SSO.\tSSO\nd2\tIt.\tBilling\n", {"d1": "SSO", "d2": "Billing"}),
    ],
    ids=["id-text", "id-title-text", "header-row"],
)
def test_trec_tsv_topics_and_tsv_corpus(tmp_path: Path, corpus: str, titles: dict[str, str]) -> None:
    """TSV topics `qid<TAB>text`; a TSV corpus of 2 or 3 columns, or with a header row."""
    topics = "1\tHow do I turn on SSO?\n2\tWhere are my invoices?\n"
    config = project(tmp_path / "project")
    assert run_import(config, *trec_files(tmp_path / "trec", topics, corpus, "1 0 d1 1\n2 0 d2 1\n")) == 0
    documents = load_corpus(config.parent / "corpus.jsonl")
    assert {doc_id: doc.title for doc_id, doc in documents.items()} == titles
    assert documents["d1"].text == "Turn on SSO."
    assert [row["question"] for row in golden_rows(config)] == [
        "How do I turn on SSO?",
        "Where are my invoices?",
    ]


TOPICS = "1\tHow do I turn on SSO?\n2\tWhere are my invoices?\n"
CORPUS = '{"id": "d1", "text": "Turn on SSO."}\n{"id": "d2", "text": "Invoices as PDF."}\n'
QRELS_TEXT = "1 0 d1 1\n2 0 d2 1\n"


@pytest.mark.parametrize(
    ("which", "text", "name", "line", "problem"),
    [
        ("corpus", '{"id": "d1", "text": "x"}\n\n{"id": "d2", "text": \n', "corpus", 3, "not valid JSON"),
        ("corpus", '{"id": "d1", "text": "x"}\n{"id": "d1", "text": "y"}\n', "corpus", 2, "appears twice"),
        ("corpus", '{"id": "d1", "text": "x"}\n{"id": "d2"}\n', "corpus", 2, "missing key: text"),
        ("corpus", "d1\tSSO\n\nd2\n", "corpus", 3, "expected 2 tab-separated columns"),
        ("topics", "1\tHow do I turn on SSO?\n2 Where are my invoices?\n", "topics", 2, "no tab"),
        ("topics", "<top>\n<num> Number: 1\n<title> SSO\n", "topics", 1, "never closed"),
        ("qrels", "1 0 d1 1\n2 d2 1\n", "qrels", 2, "expected 4 columns"),
        ("qrels", "1 0 d1 1\n2 0 d2 yes\n", "qrels", 2, "grade must be an integer"),
        ("qrels", "1 0 d1 1\n2 0 d9 1\n", "qrels", 2, "'d9' of question '2' is not in the corpus"),
        ("qrels", "1 0 d1 1\n\n7 0 d2 1\n", "qrels", 3, "question '7', which is not in topics"),
    ],
)
def test_malformed_input_names_file_line_and_fix(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    which: str,
    text: str,
    name: str,
    line: int,
    problem: str,
) -> None:
    """Exit 2 with `file:line`, the problem and the fix; nothing is written."""
    files = {"topics": TOPICS, "corpus": CORPUS, "qrels": QRELS_TEXT, which: text}
    config = project(tmp_path / "project")
    args = trec_files(tmp_path / "trec", files["topics"], files["corpus"], files["qrels"])
    assert run_import(config, *args) == 2
    err = capsys.readouterr().err
    error_at(err, name, line)
    assert problem in err
    assert not (config.parent / "corpus.jsonl").exists() and not (config.parent / "golden.jsonl").exists()


# -- a real collection -------------------------------------------------------------------


@pytest.mark.skipif(not SCIFACT.is_dir(), reason="set SCIFACT_DIR to a folder of BEIR SciFact's files")
def test_scifact_sample_imports_and_evaluates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A BEIR-layout folder from SciFact's first 300 queries and qrels lines, with the first
    300 documents plus those the qrels judge: imported, then evaluated by the shipped system."""
    folder = tmp_path / "scifact"
    (folder / "qrels").mkdir(parents=True)
    qrels = (SCIFACT / "qrels.tsv").read_text(encoding="utf-8").splitlines()[:300]
    judged = {line.split("\t")[1] for line in qrels}
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as source:
        docs = [line for n, line in enumerate(source) if n < 300 or json.loads(line)["id"] in judged]
    (folder / "corpus.jsonl").write_text("".join(docs), encoding="utf-8")
    shutil.copy(SCIFACT / "queries.jsonl", folder / "queries.jsonl")  # 300 lines
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")

    config = project(tmp_path / "project")
    assert run_import(config, "beir", str(folder), "--split", "test") == 0
    counts = summary(capsys.readouterr().out)
    assert counts["documents"] == len(docs)
    assert counts["questions kept"] + counts["questions left out"] == 300
    assert counts["relevant judgments"] == 300
    assert run_cli(["--config", str(config), "eval", "--quiet"]) == 0
    report = json.loads((config.parent / "build" / "report.json").read_text(encoding="utf-8"))
    assert report["counts"]["evaluated"] == counts["questions kept"]
    assert report["aggregate"]["mrr"] > 0.5  # BM25 finds SciFact's evidence well
