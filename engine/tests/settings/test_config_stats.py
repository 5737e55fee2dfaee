"""eval.toml settings of the statistics ([stats]), slice floors ([gate.slices]) and the
report paths ([data] holdout, summary, html): defaults, values, and errors with lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import PROJECT_ROOT, TINY_CONFIG, run_cli, write_project
from rag_regress.errors import EvalInputError
from rag_regress.retrieval.names import parse_metric
from rag_regress.settings.config import StatsSettings, load_config

STATS = """
[stats]
alpha = 0.01
confidence = 0.9
resamples = 2000
exact_limit = 12
seed = 7
min_slice_size = 3

[gate.slices.acronym]
"hit@5" = 0.75
"""


def error_of(tmp_path: Path, text: str) -> EvalInputError:
    with pytest.raises(EvalInputError) as caught:
        load_config(write_project(tmp_path, config=text))
    return caught.value


def test_defaults_without_a_stats_table(project: Path) -> None:
    config = load_config(project)
    assert config.stats == StatsSettings()
    assert config.gate.slice_floors == {}
    assert config.holdout is None
    assert config.summary == (project.parent / "build" / "summary.md").resolve()
    assert config.html == (project.parent / "build" / "report.html").resolve()


def test_values_come_through_and_are_recorded_in_the_settings(tmp_path: Path) -> None:
    config = load_config(write_project(tmp_path, config=TINY_CONFIG + STATS))
    assert config.stats == StatsSettings(0.01, 0.9, 2000, 12, 7, 3)
    assert config.gate.slice_floors == {"acronym": {parse_metric("hit@5"): 0.75}}
    assert config.settings()["stats"]["alpha"] == 0.01


def test_shipped_stats_settings_are_usable() -> None:
    """Whatever tags, floors and must-pass questions your data has (`baseline --fit-floors`
    may remove the demo's slice floors): the statistics settings stay usable."""
    config = load_config(PROJECT_ROOT / "eval.toml")
    assert 0 < config.stats.alpha < 1 and config.stats.resamples >= 1000


@pytest.mark.parametrize(
    ("old", "new", "key", "line_starts"),
    [
        ("alpha = 0.01", "alpha = 1", "stats.alpha", "alpha"),
        ("alpha = 0.01", "alpha = 0", "stats.alpha", "alpha"),
        ("resamples = 2000", "resamples = 10", "stats.resamples", "resamples"),
        ("exact_limit = 12", "exact_limit = 30", "stats.exact_limit", "exact_limit"),
        ('"hit@5" = 0.75', '"hit@5" = 2', "gate.slices.acronym.hit@5", '"hit@5" = 2'),
        ('"hit@5" = 0.75', '"hits@5" = 0.5', "gate.slices.acronym", "[gate.slices.acronym]"),
        ("seed = 7", "sed = 7", "stats.sed", "sed"),
    ],
)
def test_bad_stats_settings_name_the_key_and_line(
    tmp_path: Path, old: str, new: str, key: str, line_starts: str
) -> None:
    text = TINY_CONFIG + STATS.replace(old, new)
    error = error_of(tmp_path, text)
    assert f": {key}: " in str(error)
    (line,) = [n for n, row in enumerate(text.splitlines(), start=1) if row.startswith(line_starts)]
    assert error.line == line, str(error)


def test_slice_floor_on_a_tag_no_question_has_is_invalid_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in [gate.slices.<tag>] would otherwise never be enforced: exit 2, at its line."""
    text = TINY_CONFIG + STATS.replace("[gate.slices.acronym]", "[gate.slices.acronyms]")
    config_path = write_project(tmp_path, config=text)
    assert run_cli(["--config", str(config_path), "baseline"]) == 0
    capsys.readouterr()
    assert run_cli(["--config", str(config_path), "gate"]) == 2
    err = capsys.readouterr().err
    line = text.splitlines().index("[gate.slices.acronyms]") + 1
    assert f"eval.toml:{line}: [gate.slices.acronyms]: no answerable question" in err
    assert "use one of: acronym, billing, security" in err
