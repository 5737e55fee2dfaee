"""A retriever a package of its own registers: one module and one entry point, chosen by name in
[system], its [retriever] table validated by the module's Settings when eval.toml is read,
its errors at their line.

The package is written to a temporary folder and put on sys.path as an installed
distribution would be (a .dist-info with entry_points.txt), so the engine finds it exactly
as it finds a pip-installed one (tests/answers/test_judge_plugin.py does the same for a judge)."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY_CONFIG, run_cli, write_project
from rag_regress import parts
from rag_regress.dispatch import team_system
from rag_regress.errors import EvalInputError
from rag_regress.settings.config import load_config

# The whole plug-in: a retriever counting the question's words in each document, with two
# settings of its own.
PLUGIN = """
from typing import Annotated

from pydantic import Field

from rag_regress.parts import Hit, PartSettings, validated

VERSION = "0.1"


class Settings(PartSettings):
    min_length: Annotated[int, Field(ge=1, le=20, description="shorter words are not counted")] = 3
    title_weight: Annotated[float, Field(ge=0, le=10, description="a word in the title counts this")] = 2.0


class WordOverlap:
    def __init__(self, documents, settings):
        self.settings = settings
        self.documents = [(d.id, self.words(d.title), self.words(d.text)) for d in documents]

    def words(self, text):
        return {w.strip(".,;:!?").lower() for w in text.split() if len(w) >= self.settings.min_length}

    def search(self, question, depth):
        asked = self.words(question)
        scored = [
            (self.settings.title_weight * len(asked & title) + len(asked & text), doc_id)
            for doc_id, title, text in self.documents
        ]
        ranked = sorted((-score, doc_id) for score, doc_id in scored if score > 0)
        return [Hit(doc_id, -score) for score, doc_id in ranked[:depth]]


def build(documents, tokenize, options):
    return WordOverlap(documents, validated(Settings, options, "the word-overlap retriever"))
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The retriever `word-overlap`, registered under rag_regress.retrievers by an installed package."""
    site = tmp_path / "site"
    info = site / "word_overlap_retriever-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "word_overlap_retriever.py").write_text(PLUGIN, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: word-overlap-retriever\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[rag_regress.retrievers]\nword-overlap = word_overlap_retriever\n"
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield "word-overlap"
    sys.modules.pop("word_overlap_retriever", None)


def project(root: Path, retriever: str, options: str = "") -> Path:
    """The tiny project with `[system] retriever = retriever`, the stand-in generator and
    `options` as its [retriever] table."""
    system = f'[system]\nretriever = "{retriever}"\ngenerator = "stand-in"\n\n'
    text = system + TINY_CONFIG.replace("[retriever]\n", f"[retriever]\n{options}\n")
    return write_project(root, config=text)


def evaluated(config: Path) -> dict[str, Any]:
    """`eval` of the project, on the system its [system] table names; the report."""
    assert run_cli(["--config", str(config), "eval", "--quiet"], team_system(load_config(config))) == 0
    report: dict[str, Any] = json.loads((config.parent / "build" / "report.json").read_text(encoding="utf-8"))
    return report


def line_of(config: Path, start: str) -> int:
    rows = config.read_text(encoding="utf-8").split("\n")
    (line,) = [n for n, row in enumerate(rows, start=1) if row.startswith(start)]
    return line


def test_a_retriever_a_package_registers_is_chosen_by_name_and_reads_its_settings(
    plugin: str, tmp_path: Path
) -> None:
    assert plugin in parts.retrievers()
    assert parts.retriever(plugin).VERSION == "0.1"
    usual = evaluated(project(tmp_path / "usual", plugin, "min_length = 3\ntitle_weight = 1.5"))
    assert usual["aggregate"]["hit@5"] > 0.5, "it finds the documents that share the question's words"
    # its settings decide its rankings: no word of the tiny corpus has 20 letters
    blind = evaluated(project(tmp_path / "blind", plugin, "min_length = 20"))
    assert blind["aggregate"]["hit@5"] == 0.0


def test_a_typo_in_its_table_is_named_at_its_line(
    plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path, plugin, "min_lenght = 2")
    with pytest.raises(EvalInputError) as caught:
        load_config(config)
    assert caught.value.line == line_of(config, "min_lenght")
    assert caught.value.problem.startswith("retriever.min_lenght: unknown option 'min_lenght'")
    assert "the word-overlap retriever takes: min_length, title_weight" in caught.value.problem
    # the command line says the same, before anything is built
    assert run_cli(["--config", str(config), "eval", "--quiet"]) == 2
    assert f"eval.toml:{line_of(config, 'min_lenght')}: retriever.min_lenght: unknown option" in (
        capsys.readouterr().err
    )


def test_a_value_out_of_its_range_is_named_at_its_line(plugin: str, tmp_path: Path) -> None:
    config = project(tmp_path, plugin, "title_weight = 11")
    with pytest.raises(EvalInputError) as caught:
        load_config(config)
    assert caught.value.line == line_of(config, "title_weight")
    assert "option 'title_weight' must be a number from 0 to 10, got 11" in caught.value.problem


def test_an_unknown_part_name_lists_the_registered_ones(plugin: str, tmp_path: Path) -> None:
    config = project(tmp_path, "bm52")
    with pytest.raises(EvalInputError) as caught:
        load_config(config)
    assert caught.value.line == line_of(config, "retriever = ")
    registered = ", ".join(sorted(["bm25", "dense", "http", "hybrid", "qdrant", "tfidf", plugin]))
    assert f"system.retriever: unknown retriever 'bm52'; the registered retrievers: {registered}" in (
        caught.value.problem
    )
    assert "module:function" in caught.value.fix


def test_an_unknown_generator_name_lists_the_registered_ones(tmp_path: Path) -> None:
    config = write_project(tmp_path, config='[system]\ngenerator = "openia"\n\n' + TINY_CONFIG)
    with pytest.raises(EvalInputError) as caught:
        load_config(config)
    assert caught.value.line == 2
    assert "unknown generator 'openia'; the registered generators: openai, stand-in" in caught.value.problem


def test_the_shipped_parts_by_name_give_the_shipped_system_s_results(tmp_path: Path) -> None:
    """`retriever = "bm25"` and `generator = "stand-in"` are the modules the tests build directly."""
    by_name = evaluated(project(tmp_path / "named", "bm25", "k1 = 1.2"))
    direct = project(tmp_path / "direct", "bm25", "k1 = 1.2")
    assert run_cli(["--config", str(direct), "eval", "--quiet"]) == 0
    report = json.loads((direct.parent / "build" / "report.json").read_text(encoding="utf-8"))
    assert by_name["aggregate"] == report["aggregate"]
    assert [q["retrieved"] for q in by_name["questions"]] == [q["retrieved"] for q in report["questions"]]


def test_a_report_records_the_settings_a_shipped_part_ran_with(tmp_path: Path) -> None:
    """What was written and every default it left out: a baseline made with `k1 = 1.2` and
    one made with the default are told apart, and a default that moves shows in the report."""
    report = evaluated(project(tmp_path, "bm25", "k1 = 1.2"))
    recorded = report["settings"]["retriever"]
    assert recorded["name"] == "BM25Retriever"
    assert recorded["options"] == {"k1": 1.2, "b": 0.4, "chunk_size": 0, "chunk_overlap": 0, "history": True}
