"""Inputs rewritten while a run reads them are refused (exit 2, nothing written), and two
outputs configured to one file are refused before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, run_cli, write_project
from rag_regress.api import System
from rag_regress.errors import ExitCode


def rewriting(target: Path) -> System:
    """The shipped system, whose retriever appends a line to `target` while it is built."""

    def build_retriever(documents: Any, tokenize: Any, options: Any) -> Any:
        with target.open("a", encoding="utf-8") as handle:
            handle.write('{"id": "planted", "title": "", "text": "planted"}\n')
        return SHIPPED.build_retriever(documents, tokenize, options)

    return System(build_retriever, SHIPPED.build_generator)


@pytest.mark.parametrize("command", ["eval", "baseline", "gate"])
def test_a_corpus_rewritten_during_the_run_is_refused(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_project(tmp_path)
    assert run_cli(["--config", str(config), "baseline", "--quiet"]) == ExitCode.OK
    baseline = (tmp_path / "baseline.json").read_bytes()
    capsys.readouterr()
    code = run_cli(
        ["--config", str(config), command, *(["--quiet"] if command != "gate" else [])],
        rewriting(tmp_path / "corpus.jsonl"),
    )
    assert code == ExitCode.INVALID_INPUT
    error = capsys.readouterr().err
    assert "corpus.jsonl" in error and "changed while the run was evaluating" in error
    assert (tmp_path / "baseline.json").read_bytes() == baseline  # nothing written
    assert not (tmp_path / "build" / "report.json").exists()


def test_eval_toml_rewritten_during_the_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_project(tmp_path)
    assert run_cli(["--config", str(config), "eval", "--quiet"], rewriting(config)) == ExitCode.INVALID_INPUT
    assert "the settings file changed" in capsys.readouterr().err


def test_report_and_summary_on_one_file_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_project(tmp_path)
    text = config.read_text(encoding="utf-8").replace(
        'report = "build/report.json"', 'report = "build/out.json"\nsummary = "build/./out.json"'
    )
    config.write_text(text, encoding="utf-8")
    assert run_cli(["--config", str(config), "eval", "--quiet"]) == ExitCode.INVALID_INPUT
    error = capsys.readouterr().err
    assert "[data] report and [data] summary are the same file" in error
    assert "eval.toml:6" in error  # the line of the second setting
