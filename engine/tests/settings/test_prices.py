"""[prices] and [run] max_cost: validated like every other table (settings/schema.py), each
error at its line of eval.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY_CONFIG, write_project
from rag_regress.errors import EvalInputError
from rag_regress.settings.config import load_config


def test_prices_are_read_per_model(tmp_path: Path) -> None:
    text = (
        TINY_CONFIG
        + '\n[prices]\n"gpt-4o-mini" = { input = 0.15, output = 0.6 }\nlocal = { input = 0, output = 0 }\n'
    )
    config = load_config(write_project(tmp_path, text + "\n[run]\nmax_cost = 2\n"))
    assert config.prices["gpt-4o-mini"].input == 0.15 and config.prices["gpt-4o-mini"].output == 0.6
    assert config.prices["local"].output == 0.0
    assert config.run.max_cost == 2.0
    assert load_config(write_project(tmp_path / "none", TINY_CONFIG)).run.max_cost is None


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ('"m" = { input = -1, output = 2 }', "prices.m.input: must be a number between 0 and"),
        ('"m" = { input = 1, output = 2, cached = 1 }', "prices.m.cached: unknown setting"),
        ('"m" = { input = 1 }', "prices.m.output"),
        ('"m" = { input = "cheap", output = 2 }', "prices.m.input"),
    ],
)
def test_a_bad_price_is_refused_at_its_line(tmp_path: Path, entry: str, said: str) -> None:
    text = TINY_CONFIG + "\n[prices]\n" + entry + "\n"
    line = text.splitlines().index(entry) + 1
    with pytest.raises(EvalInputError) as raised:
        load_config(write_project(tmp_path, text))
    assert said in str(raised.value) and f"eval.toml:{line}:" in str(raised.value)


def test_a_negative_max_cost_is_refused_at_its_line(tmp_path: Path) -> None:
    text = TINY_CONFIG + "\n[run]\nmax_cost = -1.0\n"
    with pytest.raises(EvalInputError) as raised:
        load_config(write_project(tmp_path, text))
    line = text.splitlines().index("max_cost = -1.0") + 1
    assert "run.max_cost" in str(raised.value) and f"eval.toml:{line}:" in str(raised.value)
