"""The pytest plugin: `pytest -m gate` fails exactly when `rag-regress gate` does not pass."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import write_team_project

pytest_plugins = ["pytester"]

SYSTEM = """
import os

from rag_regress.answers import stand_in
from rag_regress.retrieval.retrievers import bm25

def build_retriever(documents, tokenize, options):
    return bm25.build(documents, tokenize, options)

def build_generator(retriever, documents, options):
    inner = stand_in.build(retriever, documents, options)

    class Changed:
        def answer(self, question):
            answer = inner.answer(question)
            return type(answer)(answer.text.replace("PDF", "DOCX"), answer.contexts, answer.abstained)

    return Changed() if os.environ.get("TEAM_MISQUOTE") else inner
"""

GATE_TEST = """
def test_gate(rag_regress_gate):
    rag_regress_gate.check()
"""


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """A tiny project whose [system] names a team module, with a baseline of its own."""
    root = tmp_path / "team"
    write_team_project(root, SYSTEM)
    (root / "test_gate.py").write_text(GATE_TEST, encoding="utf-8")
    return root


def run(pytester: pytest.Pytester, root: Path, *args: str) -> pytest.RunResult:
    os.chdir(root)
    env = {"PYTHONPATH": os.pathsep.join([str(root), *sys.path])}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        return pytester.runpytest_subprocess(*args, str(root / "test_gate.py"), "-p", "no:cacheprovider")


def cli(root: Path, *args: str) -> int:
    from rag_regress.cli import main

    sys.path.insert(0, str(root))
    try:
        return main(["--config", str(root / "eval.toml"), *args])
    finally:
        sys.path.remove(str(root))


def test_the_gate_as_a_test_agrees_with_the_command(team: Path, pytester: pytest.Pytester) -> None:
    assert cli(team, "baseline", "--quiet") == 0
    assert cli(team, "gate") == 0
    run(pytester, team).assert_outcomes(passed=1)
    os.environ["TEAM_MISQUOTE"] = "1"  # the generator now misquotes a key fact
    try:
        assert cli(team, "gate") == 3
        failed = run(pytester, team)
    finally:
        del os.environ["TEAM_MISQUOTE"]
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*gate exit code 3 (quality regressed)*", "*q4*"])


def test_a_gate_that_cannot_run_fails_the_test_with_exit_2(team: Path, pytester: pytest.Pytester) -> None:
    assert cli(team, "gate") == 2  # no baseline yet
    failed = run(pytester, team)
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*gate exit code 2 (the gate could not run)*"])
