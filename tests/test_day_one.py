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
from conftest import SCIFACT, bake, nox, package_of, run
from test_baked_projects import output
from test_engine_boundary import SUBSTRING_RETRIEVER


def make_it_ours(tmp_path: Path) -> Path:
    project = bake(tmp_path)
    (project / "src" / package_of(project) / "retriever.py").write_text(SUBSTRING_RETRIEVER.lstrip(), "utf-8")
    return project


def fit_then_gate(project: Path, *deselected: str) -> None:
    fitted = nox(project, "baseline", "--", "--fit-floors")
    assert fitted.returncode == 0, output(fitted)
    chosen = ["--", "-k", " and ".join(f"not {name}" for name in deselected)] if deselected else []
    tested = nox(project, "tests", *chosen)
    assert tested.returncode == 0 and " passed" in tested.stdout + tested.stderr, output(tested)
    checked = nox(project, "gate")
    assert checked.returncode == 0, output(checked)
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
    command = str(next((project / ".nox").glob("baseline*/bin")) / package_of(project))
    args = ["import", "beir", str(beir), "--split", "test", "--sample", "100", "--seed", "7", "--force"]
    imported = run(project, command, *args)
    assert imported.returncode == 0, output(imported)
    golden = (project / "evals" / "golden.jsonl").read_text(encoding="utf-8")
    assert len(golden.splitlines()) == 100
    again = run(project, command, *args)
    assert again.returncode == 0 and (project / "evals" / "golden.jsonl").read_text("utf-8") == golden
    # The engine test that checks every sentence of the team's corpus against its own document
    # reads SciFact here, as test_judge_self_support.py does with the same judge: it runs there.
    fit_then_gate(project, "every_sentence_of_the_demo_corpus")
