"""`sweep` end to end: retrievers built as rarely as possible, a clearly better candidate named
and confirmed on the holdout, a too-small field indistinguishable, the outputs escaped."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, TINY_CONFIG, run_cli, write_jsonl, write_project
from rag_regress.answers import stand_in
from rag_regress.api import Document, Hit, System, Tokenizer
from rag_regress.settings.config import load_config
from rag_regress.sweep.building import memoised
from rag_regress.sweep.command import sweep

TOPICS = 40
CORPUS = [{"id": f"doc-{i}", "title": f"Topic {i}", "text": f"all about word{i}"} for i in range(TOPICS)]
GOLDEN = [{"id": f"q{i}", "question": f"word{i}", "relevant": {f"doc-{i}": 1}} for i in range(TOPICS)]
CONFIG = """
[data]
corpus = "corpus.jsonl"
golden = "golden.jsonl"

[retrieval]
k = 5
depth = 10
metrics = ["mrr", "hit@5"]

[retriever]
shift = 2

[sweep]
metric = "mrr"
"""


@dataclass(frozen=True)
class Options:
    shift: int = 2  # documents ranked above the right one
    size: int = 1  # an index-time option (it changes nothing here)


class Shifted:
    """A retriever that ranks the right document at position `shift` + 1: MRR 1 / (shift + 1).
    `shift` is applied at query time, through `with_options`."""

    query_time_options = ("shift",)

    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: Options):
        self.ids, self.tokenize, self.options = [d.id for d in documents], tokenize, options
        self.index = {
            token: d.id for d in documents for token in tokenize(d.text) if token.startswith("word")
        }

    def with_options(self, options: dict[str, Any]) -> Shifted:
        moved = Shifted.__new__(Shifted)
        moved.ids, moved.tokenize, moved.index = self.ids, self.tokenize, self.index
        moved.options = Options(**options)
        return moved

    def search(self, question: str, depth: int) -> list[Hit]:
        right = next((self.index[t] for t in self.tokenize(question) if t in self.index), None)
        if right is None:
            return []
        others = [doc for doc in self.ids if doc != right][: self.options.shift]
        ranking = [*others, right][:depth]
        return [Hit(doc, float(len(ranking) - rank)) for rank, doc in enumerate(ranking)]


def shifted_system(built: list[dict[str, Any]]) -> System:
    def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> Shifted:
        built.append(dict(options))
        return Shifted(documents, tokenize, Options(**options))

    return System(build, stand_in.build)


def test_a_clearly_better_candidate_is_named_confirmed_and_adoptable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CONFIG + "\n[sweep.retriever]\nshift = [0, 1, 2]\n"
    config_path = write_project(tmp_path, config=text, corpus=CORPUS, golden=GOLDEN)
    assert run_cli(["--config", str(config_path), "sweep"], shifted_system([])) == 0
    out = capsys.readouterr().out
    assert "winner: shift=0, confirmed on the holdout" in out, out
    assert "to adopt the winner, set in eval.toml:\n  [retriever]\n  shift = 0" in out
    assert "seeded split of golden.jsonl: 12 of 40" in out  # holdout_share 0.3 of 40
    assert (tmp_path / "build" / "sweep.md").is_file() and (tmp_path / "build" / "sweep.html").is_file()


def test_a_configured_holdout_confirms_and_every_golden_question_chooses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CONFIG.replace('golden = "golden.jsonl"', 'golden = "golden.jsonl"\nholdout = "holdout.jsonl"')
    config_path = write_project(
        tmp_path, config=text + "\n[sweep.retriever]\nshift = [0, 1]\n", corpus=CORPUS
    )
    write_jsonl(tmp_path / "golden.jsonl", GOLDEN[:30])
    write_jsonl(tmp_path / "holdout.jsonl", GOLDEN[30:])
    assert run_cli(["--config", str(config_path), "sweep"], shifted_system([])) == 0
    out = capsys.readouterr().out
    assert "30 dev questions choose, 10 holdout questions confirm ([data] holdout holdout.jsonl)" in out
    assert "winner: shift=0, confirmed on the holdout" in out, out


def test_query_time_options_reuse_the_index_and_tokenizers_are_shared(tmp_path: Path) -> None:
    """2 tokenizers x 2 index-time sizes need 4 builds, not 2 x 2 x 3 = 12 candidates' worth;
    the current configuration (shift 2, size 1) is one of them, not a 5th."""
    grid = (
        '\n[sweep.tokenizer]\nstemmer = ["none", "porter"]\n'
        "\n[sweep.retriever]\nsize = [1, 2]\nshift = [0, 1, 2]\n"
    )
    config = load_config(write_project(tmp_path, config=CONFIG + grid, corpus=CORPUS, golden=GOLDEN))
    built: list[dict[str, Any]] = []
    result = sweep(config, shifted_system(built))
    assert result.builds == len(built) == 4
    assert {(o.get("size", 1)) for o in built} == {1, 2}
    top = [row for row in result.rows if row.mean == result.rows[0].mean]
    assert len(top) == 4 and all(row.candidate.changes["retriever"]["shift"] == 0 for row in top)
    assert result.winner is None, "four candidates tie at the top: none beats the runner-up"


def test_the_shipped_retriever_with_a_default_spelled_out_is_the_current_configuration(
    tmp_path: Path,
) -> None:
    if not SHIPPED.build_retriever.__module__.endswith(".bm25"):
        pytest.skip("BM25's options; this project ships another retriever")
    grid = "\n[sweep.retriever]\nk1 = [0.9]\nb = [0.4, 0.75]\n"
    result = sweep(load_config(write_project(tmp_path, config=TINY_CONFIG + grid)), SHIPPED)
    same = [row for row in result.rows if row.same_as_current]
    assert [row.candidate.label for row in same] == ["k1=0.9 b=0.4"]
    # b = 0.75 reuses the current configuration's index: BM25 applies k1 and b at query time.
    assert result.builds == 1, "one index, for the current configuration and b = 0.75"


def test_a_field_too_small_to_tell_names_no_winner_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = TINY_CONFIG + '\n[sweep.tokenizer]\nstemmer = ["porter", "english"]\n'
    assert run_cli(["--config", str(write_project(tmp_path, config=text)), "sweep"]) == 0
    out = capsys.readouterr().out
    assert "the field is indistinguishable" in out and "to adopt" not in out


def test_the_reports_escape_what_eval_toml_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = TINY_CONFIG + "\n[sweep.tokenizer]\npattern = ['\\w+', '(?:<b>|[|*])?\\w+']\n"
    assert run_cli(["--config", str(write_project(tmp_path, config=text)), "sweep"]) == 0
    capsys.readouterr()
    page = (tmp_path / "build" / "sweep.html").read_text(encoding="utf-8")
    assert "&lt;b&gt;" in page and "<b>" not in page
    assert "<svg" in page and page.count("<circle") == 3  # the current configuration and both candidates
    markdown = (tmp_path / "build" / "sweep.md").read_text(encoding="utf-8")
    row = next(line for line in markdown.splitlines() if "b\\>" in line)
    assert "\\<b\\>" in row
    header = next(line for line in markdown.splitlines() if line.startswith("| candidate"))
    cells = re.split(r"(?<!\\)\|", row)
    assert len(cells) == len(header.split("|")), "a | in a value does not add a column"


def test_memoised_tokenizer_tokenizes_each_text_once() -> None:
    calls: list[str] = []

    def tokenize(text: str) -> list[str]:
        calls.append(text)
        return text.split()

    cached = memoised(tokenize)
    assert cached("a b") == cached("a b") == ["a", "b"] and calls == ["a b"]
    cached("a b").append("c")
    assert cached("a b") == ["a", "b"], "a caller changing its list changes nothing"
