"""Reading a baseline or report back: every field the engine uses is checked, so a
hand-edited, truncated or foreign file is exit 2 naming the field and the fix, never a
traceback (some crashed the gate after its evaluation) nor a silently wrong comparison."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli, write_project
from rag_regress.errors import EvalInputError
from rag_regress.inputs.reports import read_report

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def made_baseline(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The text of a baseline `baseline` wrote for the tiny project (made once)."""
    project = write_project(tmp_path_factory.mktemp("made"))
    assert run_cli(["--config", str(project), "baseline", "--quiet"]) == 0
    return (project.parent / "baseline.json").read_text(encoding="utf-8")


def q(data: dict[str, Any], index: int = 0) -> dict[str, Any]:
    row: dict[str, Any] = data["questions"][index]
    return row


def _set(*keys: str | int, value: object) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        target: Any = data
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return edit


def _delete(*keys: str | int) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        target: Any = data
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return edit


def _duplicate_row(data: dict[str, Any]) -> None:
    data["questions"].append(dict(q(data)))


def _extra_metric(data: dict[str, Any]) -> None:
    q(data)["metrics"]["ndcg@10"] = 0.5


CASES: list[tuple[str, Edit, str]] = [
    ("string-aggregate", _set("aggregate", "mrr", value="0.9"), "aggregate.mrr: must be a number, got '0.9'"),
    ("null-aggregate", _set("aggregate", "mrr", value=None), "aggregate.mrr: must be a number, got None"),
    ("bool-aggregate", _set("aggregate", "mrr", value=True), "aggregate.mrr: must be a number, got True"),
    ("huge-int", _set("aggregate", "mrr", value=10**400), "aggregate.mrr: must be a finite number"),
    ("metric-above-1", _set("questions", 0, "metrics", "mrr", value=1.5), "must be a number from 0 to 1"),
    (
        "negative-check",
        _set("aggregate", "abstention", value=-0.1),
        "aggregate.abstention: must be a number from 0",
    ),
    ("string-metric", _set("questions", 0, "metrics", "mrr", value="1"), "question 'q1'.metrics.mrr"),
    ("null-metrics", _set("questions", 0, "metrics", value=None), "is null, but the question is answerable"),
    (
        "unanswerable-metrics",
        _set("questions", 4, "metrics", value={}),
        "question 'q5'.metrics: must be null",
    ),
    (
        "string-score",
        _set("questions", 0, "retrieved", 0, 1, value="6.47"),
        "retrieved[0][1]: must be a number",
    ),
    ("bool-score", _set("questions", 0, "retrieved", 0, 1, value=True), "retrieved[0][1]: must be a number"),
    ("receipt-list", _set("receipt", value=[1]), "receipt: must be an object, got list"),
    ("row-int", _set("questions", 0, value=5), "questions[0]: must be an object, got int"),
    ("missing-id", _delete("questions", 0, "id"), "questions[0].id: is missing"),
    ("missing-counts", _delete("counts"), "counts: is missing"),
    ("missing-k", _delete("settings", "k"), "settings.k: is missing"),
    ("k-zero", _set("settings", "k", value=0), "settings.k: must be a whole number >= 1"),
    (
        "depth-string",
        _set("settings", "depth", value="10"),
        "settings.depth: must be a whole number, got '10'",
    ),
    ("judge-int", _set("settings", "judge", value=5), "settings.judge: must be an object"),
    ("judge-threshold", _set("settings", "judge", "threshold", value="0.5"), "settings.judge.threshold"),
    ("stochastic-int", _set("settings", "stochastic", value=5), "settings.stochastic: must be an object"),
    ("noise-string", _set("settings", "stochastic", value={"noise": {"mrr": "x"}}), "stochastic.noise.mrr"),
    ("retriever-list", _set("settings", "retriever", value=[]), "settings.retriever: must be an object"),
    ("sha256-int", _set("receipt", "sha256", "corpus", value=5), "receipt.sha256.corpus: must be a string"),
    ("sha256-list", _set("receipt", "sha256", value=[1]), "receipt.sha256: must be an object"),
    (
        "history-role",
        _set("questions", 0, "history", value=[{"role": "system", "content": "x"}]),
        """question 'q1'.history[0].role: must be "user" or "assistant", got 'system'""",
    ),
    (
        "history-content",
        _set("questions", 0, "history", value=[{"role": "user"}]),
        "history[0].content: is missing",
    ),
    (
        "hit-of-three",
        _set("questions", 0, "retrieved", 0, value=["d1", 1.0, 2.0]),
        "retrieved[0]: must be [document id, score]",
    ),
    ("duplicate-row", _duplicate_row, "question 'q1': appears twice"),
    ("extra-metric", _extra_metric, "question 'q1'.metrics: holds"),
]


@pytest.mark.parametrize(
    ("edit", "named"), [(edit, named) for _, edit, named in CASES], ids=[c[0] for c in CASES]
)
def test_a_broken_field_is_named(tmp_path: Path, made_baseline: str, edit: Edit, named: str) -> None:
    data = json.loads(made_baseline)
    edit(data)
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(EvalInputError) as caught:
        read_report(path)
    text = str(caught.value)
    assert named in text and "baseline.json" in text
    assert "fix: make it with `nox -s baseline`" in text


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"format": "rag-eval-report", "format": "x"}', "'format' appears twice"),
        ('{"format": "rag-eval-report", "version": 2, "aggregate": {"mrr": NaN}}', "NaN"),
        ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
        ('{"format": "rag-eval-report",\n "version": 2,,}', "not valid JSON"),
        ("", "not valid JSON"),
    ],
    ids=["duplicate-key", "nan", "deep", "syntax", "empty"],
)
def test_a_file_that_is_not_strict_json_is_refused(tmp_path: Path, text: str, named: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EvalInputError, match="the baseline report is not") as caught:
        read_report(path)
    assert named in str(caught.value)


def test_a_byte_order_mark_is_harmless(tmp_path: Path, made_baseline: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_bytes(b"\xef\xbb\xbf" + made_baseline.encode("utf-8"))
    assert read_report(path).counts.questions == 5


@pytest.mark.parametrize(
    "edit",
    [
        _set("settings", "stochastic", value=5),
        _set("settings", "judge", value=5),
        _set("receipt", "sha256", "corpus", value=5),
        _set("questions", 0, "metrics", value=None),
    ],
    ids=["stochastic", "judge", "sha256", "null-metrics"],
)
def test_the_gate_refuses_a_broken_baseline_before_it_runs(
    project: Path, edit: Edit, capsys: pytest.CaptureFixture[str]
) -> None:
    """These crashed `gate` with a traceback after the evaluation, or (null metrics) left a
    question silently out of the comparison: now exit 2, nothing written."""
    assert run_cli(["--config", str(project), "baseline", "--quiet"]) == 0
    path = project.parent / "baseline.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate"]) == 2
    err = capsys.readouterr().err
    assert "baseline.json" in err and "Traceback" not in err
    assert not (project.parent / "build").exists()
