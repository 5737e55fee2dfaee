"""A baseline the gate can trust: it reproduces its own numbers, and it was measured with the
same k and depth as this run. A hand-edited number or a baseline measured another way was
compared without a word before; now each is exit 2 with the fix (`nox -s baseline`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from rag_regress.errors import EvalInputError
from rag_regress.gate.integrity import (
    REL_TOL,
    check_reproduces,
    check_same_measurement,
    mismatches,
)
from rag_regress.inputs.reports import read_report
from rag_regress.settings.config import load_config

Edit = Callable[[dict[str, Any]], None]


def made(project: Path, *command: str) -> Path:
    """Run `baseline` (or `eval`) on the tiny project; the path of the file it wrote."""
    assert run_cli(["--config", str(project), *command]) == 0
    return project.parent / ("baseline.json" if command[0] == "baseline" else "build/report.json")


def edited(path: Path, edit: Edit) -> Path:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def row(data: dict[str, Any], qid: str) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in data["questions"] if r["id"] == qid)
    return found


@pytest.mark.parametrize("command", ["baseline", "eval"])
def test_what_the_tool_writes_reproduces_itself(project: Path, command: str) -> None:
    """Both forms (the compact baseline and the full run report) pass, to the last bit."""
    assert mismatches(read_report(made(project, command))) == []


@pytest.mark.parametrize("part", ["generator", "retriever"])
def test_a_stochastic_baseline_reproduces_itself(project: Path, part: str) -> None:
    """Per-question means over repeats, and their aggregates, are taken the same way (a
    stochastic retriever's per-question means are not a ranking's: those are not redone)."""
    text = project.read_text(encoding="utf-8")
    project.write_text(
        text.replace("tolerance = 0.02", f'tolerance = 0.02\nstochastic = ["{part}"]\nrepeats = 2'),
        encoding="utf-8",
    )
    assert mismatches(read_report(made(project, "baseline"))) == []


def other(value: float) -> float:
    """A share other than `value`: what a hand edit writes, whatever the retriever gave."""
    return 0.125 if value != 0.125 else 0.375


def _aggregate(data: dict[str, Any]) -> None:
    data["aggregate"]["mrr"] = other(data["aggregate"]["mrr"])


def _per_question(data: dict[str, Any]) -> None:
    metrics = row(data, "q4")["metrics"]  # its aggregate no longer follows
    metrics["recall@5"] = other(metrics["recall@5"])


def _evaluated(data: dict[str, Any]) -> None:
    data["counts"]["evaluated"] += 1


def _slice(data: dict[str, Any]) -> None:
    metrics = data["slices"]["billing"]["metrics"]
    metrics["recall@5"] = other(metrics["recall@5"])


def _answer_check(data: dict[str, Any]) -> None:
    answer = row(data, "q5")["answer"]
    answer["abstention"] = 1.0 - answer["abstention"]  # as if q5 had abstained (or not)


def _invented(data: dict[str, Any]) -> None:
    data["aggregate"]["ndcg@10"] = 0.9  # no question has it


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (_aggregate, "aggregate.mrr = "),
        (_per_question, "aggregate.recall@5 = "),
        (_evaluated, "counts.evaluated = 5, its rows give 4"),
        (_slice, "slices.billing.metrics.recall@5 = "),
        (_answer_check, "aggregate.abstention = "),
        (_invented, "aggregate.ndcg@10 = 0.9 has no per-question values"),
    ],
    ids=["aggregate", "per-question", "counts", "slice", "answer-check", "no-rows"],
)
def test_a_hand_edited_baseline_is_refused(project: Path, edit: Edit, named: str) -> None:
    path = edited(made(project, "baseline"), edit)
    with pytest.raises(EvalInputError) as caught:
        check_reproduces(read_report(path), path)
    text = str(caught.value)
    assert "does not reproduce its own numbers" in text and named in text
    assert "baseline.json" in text and "nox -s baseline" in text


def _consistent_edit(data: dict[str, Any]) -> None:
    """Hide q4's miss and raise every number that follows from it: only its ranks disagree."""
    metrics = row(data, "q4")["metrics"]
    metrics["recall@5"] = other(metrics["recall@5"])
    rows = [r["metrics"]["recall@5"] for r in data["questions"] if r["metrics"] is not None]
    data["aggregate"]["recall@5"] = sum(rows) / len(rows)  # what `eval` would compute
    billing = [r["metrics"]["recall@5"] for r in data["questions"] if "billing" in r["tags"] and r["metrics"]]
    data["slices"]["billing"]["metrics"]["recall@5"] = sum(billing) / len(billing)


def _moved_rank(data: dict[str, Any]) -> None:
    """q1's relevant document moved to rank 4 in the file: its metrics no longer follow."""
    ranks = row(data, "q1")["relevant_ranks"]
    ranks["sso-setup"] = 4 if ranks["sso-setup"] != 4 else 2


@pytest.mark.parametrize(
    ("edit", "named"),
    [(_consistent_edit, "question 'q4': metrics.recall@5 = "), (_moved_rank, "question 'q1': metrics.")],
    ids=["metric-and-means", "rank"],
)
def test_a_per_question_edit_is_refused_even_with_the_means_fixed(
    project: Path, edit: Edit, named: str
) -> None:
    """Each question's metrics must follow from the ranks of its relevant documents."""
    path = edited(made(project, "baseline"), edit)
    with pytest.raises(EvalInputError) as caught:
        check_reproduces(read_report(path), path)
    assert named in str(caught.value) and "its ranks give" in str(caught.value)


def test_a_number_rewritten_with_fewer_digits_is_within_the_tolerance(project: Path) -> None:
    """A tool that rewrites the file with 12 significant digits changed nothing that matters;
    a change of one question's worth on a million questions (1e-6) is far outside."""
    path = made(project, "baseline")
    mrr = json.loads(path.read_text(encoding="utf-8"))["aggregate"]["mrr"]

    def rounded(data: dict[str, Any]) -> None:
        data["aggregate"]["mrr"] = float(f"{mrr + 1 / 3:.12g}") - 1 / 3

    check_reproduces(read_report(edited(path, rounded)), path)

    def nudged(data: dict[str, Any]) -> None:
        data["aggregate"]["mrr"] = mrr * (1 + 1000 * REL_TOL)

    with pytest.raises(EvalInputError):
        check_reproduces(read_report(edited(path, nudged)), path)


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [("depth = 10", "depth = 9", "depth 10 -> 9"), ("k = 5", "k = 4", "k 5 -> 4")],
)
def test_a_baseline_measured_with_other_settings_is_refused(
    project: Path, old: str, new: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mrr` looks `depth` deep and must-pass reads the top k: the same names, other numbers.
    `gate` exits 2 naming the setting (old -> new) and the fix, and writes nothing."""
    made(project, "baseline")
    text = project.read_text(encoding="utf-8")
    assert old in text
    project.write_text(text.replace(old, new), encoding="utf-8")
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate"]) == 2
    err = capsys.readouterr().err
    assert named in err and "nox -s baseline" in err and "Traceback" not in err
    assert not (project.parent / "build").exists()


def test_measurement_settings_are_compared_as_recorded(project: Path) -> None:
    """Direct: the run's settings (here from eval.toml, before any evaluation) against the
    baseline's; a baseline that does not record depth says so."""
    path = made(project, "baseline")
    settings = load_config(project).settings()
    check_same_measurement(settings, read_report(path), path)  # the same: no error
    edited(path, lambda data: data["settings"].pop("depth"))
    with pytest.raises(EvalInputError, match="depth not recorded -> 10"):
        check_same_measurement(settings, read_report(path), path)


def test_the_gate_refuses_a_hand_edited_baseline(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Through the command line: exit 2 before anything is evaluated or written."""
    edited(made(project, "baseline"), _aggregate)
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate"]) == 2
    err = capsys.readouterr().err
    assert "does not reproduce its own numbers" in err and "Traceback" not in err
    assert not (project.parent / "build" / "report.json").exists()
