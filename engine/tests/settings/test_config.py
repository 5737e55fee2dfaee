"""eval.toml: the shipped file loads; every mistake names the file, the line and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import PROJECT_ROOT, TINY_CONFIG, evaluate_shipped, write_project
from rag_regress.answers.settings import ANSWER_CHECKS
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import load_corpus, load_golden
from rag_regress.retrieval.names import parse_metric
from rag_regress.settings.config import load_config


def config_error(tmp_path: Path, text: str) -> EvalInputError:
    path = tmp_path / "eval.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EvalInputError) as caught:
        load_config(path)
    return caught.value


def line_number(text: str, starts_with: str) -> int:
    """1-based number of the only line of `text` that starts with `starts_with`."""
    numbers = [n for n, line in enumerate(text.splitlines(), start=1) if line.startswith(starts_with)]
    assert len(numbers) == 1, numbers
    return numbers[0]


def assert_points_at(error: EvalInputError, line: int) -> None:
    """`eval.toml:<line>: ...` followed by a fix."""
    assert error.line == line
    assert f"eval.toml:{line}: " in str(error)
    assert "\n  fix: " in str(error)


# -- the shipped file ---------------------------------------------------------------------


def test_shipped_config_and_data_load() -> None:
    """Smoke test: the eval.toml and evals/ files shipped with the project are valid, and
    everything the gate looks at is a computed metric."""
    config = load_config(PROJECT_ROOT / "eval.toml")
    computed = set(config.metrics) | set(ANSWER_CHECKS)
    assert set(config.gate.metrics) <= computed
    assert set(config.gate.floors) <= computed
    assert set(config.gate.checks) <= computed
    assert set(config.gate.answer_checks) <= set(ANSWER_CHECKS)
    assert all(m.k is None or m.k <= config.depth for m in config.metrics)
    assert config.k <= config.depth
    corpus = load_corpus(config.corpus)
    assert load_golden(config.golden, corpus)


def test_tiny_config_values(project: Path) -> None:
    """Values and paths (relative to eval.toml) come through as written."""
    config = load_config(project)
    assert config.k == 5 and config.depth == 10
    assert config.corpus == (project.parent / "corpus.jsonl").resolve()
    assert config.report == (project.parent / "build" / "report.json").resolve()
    assert [str(m) for m in config.gate.metrics] == ["recall@5", "hit@5", "mrr"]
    assert config.gate.tolerance == 0.02
    assert config.gate.floors == {parse_metric("hit@5"): 0.5}
    assert config.gate.checks == {parse_metric("hit@5"): 1.0, parse_metric("recall@5"): 1.0}


def test_metrics_referenced_only_by_the_gate_are_still_computed(tmp_path: Path) -> None:
    """Metrics named only in [gate] metrics, floors or checks are computed and reported."""
    text = (
        TINY_CONFIG.replace(
            'metrics = ["precision@5", "recall@5", "hit@5", "mrr", "ndcg@5", "map", "rprec"]',
            'metrics = ["recall@5"]',
        )
        .replace('metrics = ["recall@5", "hit@5", "mrr"]', 'metrics = ["mrr"]')
        .replace('"hit@5" = 0.5', '"map@3" = 0.1')
        .replace('"hit@5" = 1.0', '"ndcg@3" = 0.5')
    )
    config = load_config(write_project(tmp_path, config=text))
    assert [str(m) for m in config.metrics] == ["recall@5", "mrr", "map@3", "ndcg@3"]
    report = evaluate_shipped(config)
    checks = [name for name in ANSWER_CHECKS if name != "judged"]  # the lexical judge judges every item
    assert list(report["aggregate"]) == ["recall@5", "mrr", "map@3", "ndcg@3", *checks]


def test_aliases_in_config_are_stored_canonically(tmp_path: Path) -> None:
    """P@5 and precision@5 are one metric, listed once."""
    text = TINY_CONFIG.replace(
        'metrics = ["precision@5", "recall@5", "hit@5", "mrr", "ndcg@5", "map", "rprec"]',
        'metrics = ["P@5", "precision@5", "RR"]',
    )
    config = load_config(write_project(tmp_path, config=text))
    assert [str(m) for m in config.metrics][:2] == ["precision@5", "mrr"]


# -- errors --------------------------------------------------------------------------------


def test_unknown_metric_in_gate_metrics(tmp_path: Path) -> None:
    """A typo in [gate] metrics is refused at the [gate] metrics line (not the [retrieval]
    one, which has the same key) with the list of valid names."""
    text = TINY_CONFIG.replace('metrics = ["recall@5", "hit@5", "mrr"]', 'metrics = ["recall@5", "recal@5"]')
    error = config_error(tmp_path, text)
    assert_points_at(error, line_number(text, 'metrics = ["recall@5", "recal@5"]'))
    assert "gate.metrics" in str(error)
    assert "'recal@5'" in str(error)
    assert "known metrics: precision@k" in str(error)


def test_unknown_metric_in_a_gate_table(tmp_path: Path) -> None:
    """A bad metric name as a [gate.floors] key is refused (at that table or its line)."""
    text = TINY_CONFIG.replace('"hit@5" = 0.5', '"hits@5" = 0.5')
    error = config_error(tmp_path, text)
    assert error.line in {line_number(text, "[gate.floors]"), line_number(text, '"hits@5" = 0.5')}
    assert "'hits@5'" in str(error) and "known metrics" in str(error)


def test_unknown_metric_in_retrieval_metrics(tmp_path: Path) -> None:
    """A bad name in [retrieval] metrics points at that line."""
    text = TINY_CONFIG.replace('"map", "rprec"]', '"map", "rprec@5"]')
    error = config_error(tmp_path, text)
    assert_points_at(error, line_number(text, 'metrics = ["precision@5"'))
    assert "takes no cutoff" in str(error)


def test_unknown_key_suggests_the_closest_one(tmp_path: Path) -> None:
    """min_lenght = 4 is caught (and would otherwise be silently ignored)."""
    text = TINY_CONFIG.replace("min_length = 1", "min_lenght = 4")
    error = config_error(tmp_path, text)
    assert_points_at(error, line_number(text, "min_lenght"))
    assert "unknown setting" in str(error)
    assert "did you mean 'min_length'?" in str(error)


def test_unknown_table_suggests_the_closest_one(tmp_path: Path) -> None:
    """[retreival] is caught at its header line with a suggestion."""
    text = TINY_CONFIG.replace("[retrieval]", "[retreival]")
    error = config_error(tmp_path, text)
    assert_points_at(error, line_number(text, "[retreival]"))
    assert "did you mean 'retrieval'?" in str(error)


def test_depth_smaller_than_a_metric_cutoff(tmp_path: Path) -> None:
    """recall@20 cannot be computed from 10 retrieved documents: refused at the depth line."""
    text = TINY_CONFIG.replace('"map", "rprec"]', '"map", "rprec", "recall@20"]')
    error = config_error(tmp_path, text)
    assert_points_at(error, line_number(text, "depth = 10"))
    assert "recall@20" in str(error)
    assert "depth = 20 or more" in str(error)


def test_depth_smaller_than_k(tmp_path: Path) -> None:
    """depth below k is refused at the depth line."""
    text = TINY_CONFIG.replace("depth = 10", "depth = 3")
    assert_points_at(config_error(tmp_path, text), line_number(text, "depth = 3"))


def test_invalid_toml_reports_the_line(tmp_path: Path) -> None:
    """A syntax error is reported at its line (here: a missing closing quote on line 4)."""
    text = TINY_CONFIG.replace('baseline = "baseline.json"', 'baseline = "baseline.json')
    error = config_error(tmp_path, text)
    assert_points_at(error, line_number(text, 'baseline = "baseline.json'))
    assert "not valid TOML" in str(error)


def test_pattern_with_a_capturing_group_is_refused(tmp_path: Path) -> None:
    """re.findall returns groups, not matches, for '(\\w+)': refused with the fix."""
    text = TINY_CONFIG.replace(r"pattern = '\w+'", r"pattern = '(\w)+'")
    error = config_error(tmp_path, text)
    assert_points_at(error, line_number(text, "pattern = "))
    assert "(?:...)" in str(error)


def test_invalid_regular_expression_is_refused(tmp_path: Path) -> None:
    """An unbalanced bracket is reported at the pattern line."""
    text = TINY_CONFIG.replace(r"pattern = '\w+'", r"pattern = '[\w+'")
    assert_points_at(config_error(tmp_path, text), line_number(text, "pattern = "))


@pytest.mark.parametrize("value", ["1.5", "-0.1", "true", '"0.8"', "nan"])
def test_floor_outside_zero_one_is_refused(tmp_path: Path, value: str) -> None:
    """Metrics live in [0, 1]: a floor of 1.5 could never pass, -0.1 never fail."""
    text = TINY_CONFIG.replace('"hit@5" = 0.5', f'"hit@5" = {value}')
    error = config_error(tmp_path, text)
    assert_points_at(error, line_number(text, f'"hit@5" = {value}'))
    assert "between 0 and 1" in str(error)


def test_check_threshold_error_points_at_the_check_line(tmp_path: Path) -> None:
    """A bad [gate.checks] threshold is reported on its own line, not on the [gate.floors]
    line of the same metric."""
    text = TINY_CONFIG.replace('"hit@5" = 0.5', '"recall@5" = 0.5').replace(
        '"recall@5" = 1.0', '"recall@5" = 2'
    )
    assert_points_at(config_error(tmp_path, text), line_number(text, '"recall@5" = 2'))


@pytest.mark.parametrize(
    ("old", "new", "starts_with"),
    [
        ("k = 5", "k = 0", "k = 0"),
        ("min_length = 1", "min_length = 0", "min_length = 0"),
        ("lowercase = true", 'lowercase = "yes"', "lowercase = "),
        ('stopwords = "english"', 'stopwords = "french"', "stopwords = "),
        ('stopwords = "english"', 'stopwords = "english"\nstemmer = "lancaster"', "stemmer = "),
        ("tolerance = 0.02", "tolerance = 2", "tolerance = "),
    ],
)
def test_bad_values_point_at_their_line(tmp_path: Path, old: str, new: str, starts_with: str) -> None:
    """Each invalid setting is reported at its own line with a fix."""
    text = TINY_CONFIG.replace(old, new)
    assert_points_at(config_error(tmp_path, text), line_number(text, starts_with))


def test_missing_config_file(tmp_path: Path) -> None:
    """Running from the wrong folder says how to point at the file."""
    with pytest.raises(EvalInputError, match="--config"):
        load_config(tmp_path / "eval.toml")
