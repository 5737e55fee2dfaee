"""The hidden holdout: `eval` never looks at it, `gate` reports the dev - holdout gap, and a
question in both splits is refused (exit 2, naming the holdout file and line)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, run_cli, write_jsonl
from rag_regress import run
from rag_regress.api import System
from rag_regress.settings.config import load_config

HOLDOUT = [
    {"id": "h1", "question": "API key", "relevant": {"api-keys": 3}, "tags": ["acronym"]},
    {"id": "h2", "question": "export projects", "relevant": {"export-data": 3}, "tags": ["data"]},
    {"id": "h3", "question": "SAML", "relevant": {"sso-setup": 3, "password-policy": 1}},
]


def with_holdout(project: Path, rows: list) -> Path:
    write_jsonl(project.parent / "holdout.jsonl", rows)
    text = project.read_text(encoding="utf-8")
    line = 'report = "build/report.json"\n'
    project.write_text(text.replace(line, f'{line}holdout = "holdout.jsonl"\n'), encoding="utf-8")
    assert load_config(project).holdout == (project.parent / "holdout.jsonl").resolve()
    return project


def report_of(project: Path) -> dict:
    return json.loads((project.parent / "build" / "report.json").read_text(encoding="utf-8"))


def test_gate_reports_the_dev_holdout_gap_and_eval_ignores_the_holdout(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_holdout(project, HOLDOUT)
    assert run_cli(["--config", str(project), "eval", "--quiet"]) == 0
    assert "holdout" not in report_of(project)  # tuning sees the dev split only

    assert run_cli(["--config", str(project), "baseline"]) == 0
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate"]) == 0
    out = capsys.readouterr().out
    report = report_of(project)
    holdout = report["holdout"]
    assert holdout["counts"]["evaluated"] == 3
    for name, gap in holdout["gap"].items():
        assert gap == pytest.approx(report["aggregate"][name] - holdout["aggregate"][name])
    assert "Holdout holdout.jsonl: 3 evaluated (dev: 4); gap = dev - holdout" in out
    assert "holdout" in report["receipt"]["sha256"]
    summary = (project.parent / "build" / "summary.md").read_text(encoding="utf-8")
    assert "### Holdout (3 evaluated questions)" in summary


@pytest.mark.parametrize(
    ("twin", "dev_id", "dev_line"),
    [
        ({"id": "q3", "question": "API keys please", "relevant": {"api-keys": 3}}, "q3", 3),
        ({"id": "h9", "question": "  download   INVOICES ", "relevant": {"invoices": 3}}, "q4", 4),
    ],
    ids=["same-id", "same-text-up-to-case-and-spaces"],
)
def test_question_in_both_splits_is_an_error(
    project: Path, capsys: pytest.CaptureFixture[str], twin: dict, dev_id: str, dev_line: int
) -> None:
    with_holdout(project, [HOLDOUT[0], twin])
    assert run_cli(["--config", str(project), "baseline"]) == 0
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate"]) == 2
    err = capsys.readouterr().err
    assert "holdout.jsonl:2:" in err and "must not be in the dev split" in err
    assert f"as {dev_id!r} on line {dev_line} of golden.jsonl" in err
    assert not (project.parent / "build" / "report.json").exists()


def test_a_gate_run_reads_each_input_once_and_builds_the_system_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a holdout, one `gate` run reads the corpus once and each golden file once, and
    builds the retriever and the generator once for both splits."""
    with_holdout(project, HOLDOUT)
    assert run_cli(["--config", str(project), "baseline"]) == 0
    reads: Counter[str] = Counter()
    for name in ("load_corpus", "load_golden"):
        original = getattr(run, name)

        def counted(path: Path, *args: Any, _original: Any = original) -> Any:
            reads[path.name] += 1
            return _original(path, *args)

        monkeypatch.setattr(run, name, counted)
    builds: Counter[str] = Counter()

    def build_retriever(*args: Any) -> Any:
        builds["retriever"] += 1
        return SHIPPED.build_retriever(*args)

    def build_generator(*args: Any) -> Any:
        builds["generator"] += 1
        return SHIPPED.build_generator(*args)

    assert run_cli(["--config", str(project), "gate"], System(build_retriever, build_generator)) == 0
    assert reads == {"corpus.jsonl": 1, "golden.jsonl": 1, "holdout.jsonl": 1}
    assert builds == {"retriever": 1, "generator": 1}
    assert report_of(project)["holdout"]["counts"]["evaluated"] == 3
