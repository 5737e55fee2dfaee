"""The [sweep] grid: what it expands to, the eval.toml lines that adopt a candidate, and the
mistakes refused with exit 2 at their key and line."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from conftest import SHIPPED, TINY_CONFIG, run_cli, write_project
from rag_regress.settings.config import load_config
from rag_regress.sweep.grid import adopt_lines, expand

BM25_ONLY = pytest.mark.skipif(
    not SHIPPED.build_retriever.__module__.endswith(".bm25"),
    reason="BM25's options; this project ships another",
)


def line_starting(text: str, start: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), start=1) if line.startswith(start))


def test_the_grid_is_the_product_of_every_value_in_written_order(tmp_path: Path) -> None:
    grid = (
        '\n[sweep.tokenizer]\nstemmer = ["none", "porter"]\n'
        "\n[sweep.retriever]\nk1 = [0.6, 1.2]\nb = [0.75]\n"
    )
    config = load_config(write_project(tmp_path, config=TINY_CONFIG + grid))
    candidates = expand(config)
    assert [c.label for c in candidates] == [
        'stemmer="none" k1=0.6 b=0.75',
        'stemmer="none" k1=1.2 b=0.75',
        'stemmer="porter" k1=0.6 b=0.75',
        'stemmer="porter" k1=1.2 b=0.75',
    ]
    last = candidates[-1]
    assert last.tokenizer.stemmer == "porter" and last.tokenizer.min_length == config.tokenizer.min_length
    assert last.options == {**config.retriever, "k1": 1.2, "b": 0.75}


def test_the_adopt_lines_are_toml_that_sets_exactly_the_changes(tmp_path: Path) -> None:
    grid = "\n[sweep.tokenizer]\npattern = ['\\w+', '(?:\"x\")?\\w+']\n\n[sweep.retriever]\nk1 = [1.2]\n"
    config = load_config(write_project(tmp_path, config=TINY_CONFIG + grid))
    for candidate in expand(config):
        lines = adopt_lines(candidate)
        assert tomllib.loads("\n".join(lines)) == candidate.changes


def test_no_sweep_table_is_no_grid(tmp_path: Path) -> None:
    assert expand(load_config(write_project(tmp_path))) == []


def test_sweep_without_a_grid_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["--config", str(write_project(tmp_path)), "sweep"]) == 2
    assert "[sweep]: no grid to try" in capsys.readouterr().err


MISTAKES = [  # (what is added to the tiny eval.toml, the line it starts with, what the message says)
    ("[sweep.retriever]\nk1 = 0.9\n", "k1 = 0.9", "sweep.retriever.k1: must be a non-empty list"),
    ("[sweep.retriever]\nk1 = []\n", "k1 = []", "sweep.retriever.k1: must be a non-empty list"),
    (
        '[sweep.tokenizer]\nstemmr = ["porter"]\n',
        "stemmr",
        "sweep.tokenizer.stemmr: 'stemmr' is not a [tokenizer]",
    ),
    (
        '[sweep.tokenizer]\nstemmer = ["none", "klingon"]\n',
        "stemmer = [",
        "sweep.tokenizer.stemmer: 'klingon': unknown",
    ),
    ("[sweep.tokenizer]\nmin_length = [1, 0]\n", "min_length = [", "sweep.tokenizer.min_length: 0:"),
    ('[sweep]\nmetrc = "mrr"\n', "metrc", "sweep.metrc: unknown setting"),
    (
        '[sweep]\nmetric = "ndcg@50"\n[sweep.retriever]\nk1 = [1.0]\n',
        "metric =",
        "sweep.metric: ndcg@50 looks at the top 50",
    ),
    (
        "[sweep]\nmax_candidates = 2\n[sweep.retriever]\nk1 = [1.0, 2.0, 3.0]\n",
        "max_candidates",
        "sweep.max_candidates: the grid has 3",
    ),
]


@pytest.mark.parametrize(("added", "start", "said"), MISTAKES, ids=[m[1] for m in MISTAKES])
def test_bad_sweep_settings_are_exit_2_at_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], added: str, start: str, said: str
) -> None:
    text = TINY_CONFIG + "\n" + added
    assert run_cli(["--config", str(write_project(tmp_path, config=text)), "sweep"]) == 2
    err = capsys.readouterr().err
    assert f"eval.toml:{line_starting(text, start)}: {said}" in err, err
    assert "Traceback" not in err and not (tmp_path / "build").exists()


@BM25_ONLY
@pytest.mark.parametrize(
    ("values", "said"),
    [
        ("k1 = [0.9, -1]", "option 'k1' must be a number of 0 or more, got -1"),
        ("k3 = [1.0]", "unknown option 'k3'"),
    ],
)
def test_a_retriever_option_the_retriever_refuses_is_exit_2_at_its_sweep_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], values: str, said: str
) -> None:
    text = f"{TINY_CONFIG}\n[sweep.retriever]\n{values}\n"
    assert run_cli(["--config", str(write_project(tmp_path, config=text)), "sweep"]) == 2
    err = capsys.readouterr().err
    key = values.split(" = ")[0]
    assert f"eval.toml:{line_starting(text, values)}: sweep.retriever.{key}: {said}" in err, err
