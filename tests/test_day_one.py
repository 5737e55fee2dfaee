"""Day one: a team makes the copy its own (its retriever; its data) and CI is green at once.

In a default bake, the team replaces `build_retriever` with a substring retriever (it ranks
documents by how often the question's words of more than 3 letters occur in them), then
either keeps the demo data or imports a reproducible 100-question sample of a real test
collection (BEIR SciFact, from beside the template); `nox -s baseline -- --fit-floors`
adjusts the settings the new system or data cannot meet, and `nox -s tests gate` passes,
with no edit by hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import SCIFACT, bake, nox, output, package_of, run, venv_bin

SUBSTRING_RETRIEVER = '''
"""A team's first retriever: count how often the question's longer words occur."""

from __future__ import annotations

import re
from typing import Any

from rag_regress import Document, Hit, Retriever, Tokenizer


class Substring:
    def __init__(self, documents: list[Document]):
        self.texts = {d.id: f"{d.title} {d.text}".lower() for d in documents}

    def search(self, question: str, depth: int) -> list[Hit]:
        words = [w for w in re.findall(r"\\w+", question.lower()) if len(w) > 3]
        counts = {doc_id: sum(text.count(w) for w in words) for doc_id, text in self.texts.items()}
        ranked = sorted((c, doc_id) for doc_id, c in counts.items() if c > 0)[::-1]
        return [Hit(doc_id, float(c)) for c, doc_id in ranked[:depth]]


def build_retriever(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> Retriever:
    return Substring(documents)
'''


def make_it_ours(tmp_path: Path) -> Path:
    project = bake(tmp_path)
    (project / "src" / package_of(project) / "retriever.py").write_text(SUBSTRING_RETRIEVER.lstrip(), "utf-8")
    return project


def fit_then_gate(project: Path) -> None:
    """`nox -s baseline -- --fit-floors`, then what CI runs: `nox -s tests gate`."""
    fitted = nox(project, "baseline", "--", "--fit-floors")
    assert fitted.returncode == 0, output(fitted)
    checked = nox(project, "tests", "gate")
    assert checked.returncode == 0 and " passed" in checked.stdout + checked.stderr, output(checked)
    assert "GATE PASSED" in checked.stdout


def test_own_retriever_on_the_demo_data_is_green_after_fitting(tmp_path: Path) -> None:
    fit_then_gate(make_it_ours(tmp_path))


@pytest.mark.skipif(not SCIFACT.is_dir(), reason=f"no BEIR SciFact at {SCIFACT}")
def test_own_retriever_on_an_imported_collection_is_green_after_fitting(tmp_path: Path) -> None:
    project = make_it_ours(tmp_path / "bake")
    beir = tmp_path / "scifact-beir"
    (beir / "qrels").mkdir(parents=True)
    shutil.copy(SCIFACT / "corpus.jsonl", beir / "corpus.jsonl")
    shutil.copy(SCIFACT / "queries.jsonl", beir / "queries.jsonl")
    shutil.copy(SCIFACT / "qrels.tsv", beir / "qrels" / "test.tsv")
    installed = nox(project, "baseline", "--install-only")
    assert installed.returncode == 0, output(installed)
    command = str(venv_bin(project, "baseline") / "rag-regress")
    args = ["import", "beir", str(beir), "--split", "test", "--sample", "100", "--seed", "7", "--force"]
    imported = run(project, command, *args)
    assert imported.returncode == 0, output(imported)
    golden = (project / "evals" / "golden.jsonl").read_text(encoding="utf-8")
    assert len(golden.splitlines()) == 100
    again = run(project, command, *args)
    assert again.returncode == 0 and (project / "evals" / "golden.jsonl").read_text("utf-8") == golden
    fit_then_gate(project)
