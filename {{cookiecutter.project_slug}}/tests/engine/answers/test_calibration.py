# Engine test (the template's: `cruft update` keeps it current). It runs the shipped retriever
# and the stand-in generator, never your retriever.py or generator.py: see tests/conftest.py.
"""`calibrate`: agreement figures defined as documented, labels validated, shipped labels run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, run_cli, write_jsonl

from {{ cookiecutter.package_name }}.answers.calibration import agreement, load_labels
from {{ cookiecutter.package_name }}.errors import EvalInputError


def test_agreement_figures_by_hand() -> None:
    """truth: 2 supported, 2 unsupported. Judge flags one unsupported and one supported.
    accuracy 2/4; precision 1/2; recall 1/2; p_e = 0.5*0.5 + 0.5*0.5 = 0.5 -> kappa 0."""
    figures = agreement([True, True, False, False], [True, False, False, True])
    assert figures == pytest.approx({"accuracy": 0.5, "precision": 0.5, "recall": 0.5, "kappa": 0.0})


def test_perfect_and_constant_judges() -> None:
    assert agreement([True, False], [True, False])["kappa"] == 1.0
    flag_nothing = agreement([True, False, True], [True, True, True])
    assert flag_nothing == pytest.approx({"accuracy": 2 / 3, "precision": 0.0, "recall": 0.0, "kappa": 0.0})
    assert agreement([True, True], [True, True]) == {
        "accuracy": 1.0,
        "precision": 0.0,
        "recall": 1.0,
        "kappa": 1.0,
    }


def test_kappa_below_accuracy_when_chance_agreement_is_high() -> None:
    """9 of 10 supported; a judge that misses the one unsupported claim is 90% accurate, kappa 0."""
    truth = [True] * 9 + [False]
    figures = agreement(truth, [True] * 10)
    assert figures["accuracy"] == pytest.approx(0.9) and figures["kappa"] == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"id": "c1", "claim": "x", "context": "y"}, "missing key(s): supported"),
        ({"id": "c1", "claim": "x", "context": "y", "supported": "yes"}, "'supported' must be true or false"),
        ({"id": "c1", "claim": "", "context": "y", "supported": True}, "'claim' must be a non-empty string"),
        ({"id": "c1", "claim": "x", "context": "y", "supported": True, "label": 1}, "unknown key(s): label"),
    ],
)
def test_bad_labels_name_file_and_line(tmp_path: Path, line: dict, problem: str) -> None:
    path = write_jsonl(
        tmp_path / "labels.jsonl", [{"id": "c0", "claim": "a", "context": "b", "supported": True}, line]
    )
    with pytest.raises(EvalInputError) as caught:
        load_labels(path)
    assert caught.value.line == 2 and problem in str(caught.value)


def test_shipped_labels_are_enough_and_cover_the_hard_kinds() -> None:
    labels = load_labels(PROJECT_ROOT / "evals" / "judge_labels.jsonl")
    kinds = {label.kind for label in labels}
    assert len(labels) >= 40
    assert {
        "number change",
        "unit change",
        "entity swap",
        "negation flip",
        "invented feature",
        "wrong plan",
    } <= kinds
    assert any(label.supported for label in labels) and any(not label.supported for label in labels)


def test_calibrate_prints_the_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The lexical judge on the shipped labels (the NLI judge needs its model: see README)."""
    labels = PROJECT_ROOT / "evals" / "judge_labels.jsonl"
    config = tmp_path / "eval.toml"
    config.write_text(f'[judge]\nbackend = "lexical"\nlabels = "{labels.as_posix()}"\n', encoding="utf-8")
    assert run_cli(["--config", str(config), "calibrate"]) == 0
    out = capsys.readouterr().out
    assert "labelled examples" in out and "accuracy precision recall  kappa" in out
    assert "configured" in out and "best (max kappa)" in out


def test_calibrate_with_broken_labels_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "c1"}) + "\n", encoding="utf-8")
    text = config.replace('labels = "evals/judge_labels.jsonl"', f'labels = "{labels}"')
    assert text != config
    (tmp_path / "eval.toml").write_text(text, encoding="utf-8")
    assert run_cli(["--config", str(tmp_path / "eval.toml"), "calibrate"]) == 2
    assert "labels.jsonl:1: missing key(s)" in capsys.readouterr().err
