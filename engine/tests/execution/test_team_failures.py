"""The team's code failing, as a user meets it: `python -m rag_regress` in the project, the
team's package under src/ as the template lays it out. A module that cannot be imported
(a syntax error, a NameError, a library that is not installed) or a factory that raises is
exit 2 naming the team's own file and line with the team's frames only, never a traceback
through the engine; and a run that exits 2 leaves no report of an earlier run behind."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_project
from rag_regress.errors import EvalInputError, ExitCode

RETRIEVER = """\
import os

from rag_regress.retrieval.retrievers import bm25


def build_retriever(documents, tokenize, options):
    if os.environ.get("TEAM_ACT") == "raise":
        open_index(options)
    if os.environ.get("TEAM_ACT") == "exit":
        os._exit(0)
    return bm25.build(documents, tokenize, options)


def open_index(options):
    raise ValueError("no index at index/faiss.bin")
"""
RAISING_LINE = 15  # `raise ValueError(...)` above: the innermost line of the team's own code
CALLING_LINE = 8  # `open_index(options)` in build_retriever

GENERATOR = """\
from rag_regress.answers import stand_in


def build_generator(retriever, documents, options):
    return stand_in.build(retriever, documents, options)
"""


def team_package(root: Path, generator: str = GENERATOR) -> Path:
    """The tiny project, its [system] naming teampkg.retriever and teampkg.generator under
    src/ (found there as the template's package is); returns the project folder."""
    config = write_project(root)
    config.write_text(
        '[system]\nretriever = "teampkg.retriever:build_retriever"\n'
        'generator = "teampkg.generator:build_generator"\n\n' + config.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    package = root / "src" / "teampkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "retriever.py").write_text(RETRIEVER, encoding="utf-8")
    (package / "generator.py").write_text(generator, encoding="utf-8")
    return root


def command(root: Path, *args: str, act: str = "") -> subprocess.CompletedProcess[str]:
    """`rag-regress ARGS` run in the project folder, as a user runs it, with the team's act."""
    env = {**{k: v for k, v in os.environ.items() if k != "TEAM_ACT"}, "TEAM_ACT": act}
    return subprocess.run(
        [sys.executable, "-m", "rag_regress", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def assert_only_team_frames(stderr: str) -> None:
    """No traceback of the engine's: neither Python's header nor any frame of rag_regress."""
    assert "Traceback" not in stderr
    assert "rag_regress/" not in stderr and "rag_regress\\" not in stderr
    assert "importlib" not in stderr and "<frozen" not in stderr


BROKEN = {
    # name: (generator.py, its failing line, more that stderr says about it)
    "syntax-error": (
        GENERATOR.replace("options):", "options)"),
        "def build_generator(retriever, documents, options)",
        ["raised SyntaxError: expected ':'", "^"],
    ),
    "name-error": (
        GENERATOR + "\nPROMPT = TEMPLATE.format(tone='plain')\n",
        "PROMPT = TEMPLATE.format(tone='plain')",
        ["raised NameError: name 'TEMPLATE' is not defined", "in <module>"],
    ),
    "missing-library": (
        "import json\nimport llm_sdk_nobody_installed.chat\n" + GENERATOR,
        "import llm_sdk_nobody_installed.chat",
        [
            "raised ModuleNotFoundError: No module named 'llm_sdk_nobody_installed'",
            "install the package that provides 'llm_sdk_nobody_installed'",
        ],
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_generator_that_cannot_be_imported_is_exit_2_at_its_own_line(tmp_path: Path, case: str) -> None:
    source, failing, said = BROKEN[case]
    line = source.splitlines().index(failing) + 1
    root = team_package(tmp_path / "project", source)
    done = command(root, "eval")
    assert done.returncode == ExitCode.INVALID_INPUT, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith(
        f"error: src/teampkg/generator.py:{line}: importing [system] generator "
        "'teampkg.generator:build_generator' raised "
    ), done.stderr
    for text in [f"    {failing}\n", *said]:  # the offending line, as the team wrote it
        assert text in done.stderr
    assert "\n  fix: " in done.stderr
    assert_only_team_frames(done.stderr)


def test_a_factory_that_raises_is_exit_2_at_the_teams_innermost_line(tmp_path: Path) -> None:
    root = team_package(tmp_path / "project")
    done = command(root, "eval", act="raise")
    assert done.returncode == ExitCode.INVALID_INPUT, done.stderr
    assert done.stderr.startswith(
        f"error: src/teampkg/retriever.py:{RAISING_LINE}: build_retriever raised ValueError: "
        "no index at index/faiss.bin\n"
    ), done.stderr
    frames = [line.strip() for line in done.stderr.splitlines() if line.strip().startswith("File ")]
    assert frames == [
        f'File "src/teampkg/retriever.py", line {CALLING_LINE}, in build_retriever',
        f'File "src/teampkg/retriever.py", line {RAISING_LINE}, in open_index',
    ]
    assert "fix: fix build_retriever in retriever.py" in done.stderr
    assert_only_team_frames(done.stderr)


REPORTS = ("report.json", "summary.md", "report.html")


@pytest.fixture
def gated(tmp_path: Path) -> Path:
    """The team's project with its baseline and a passing gate's three reports in build/."""
    root = team_package(tmp_path / "project")
    assert command(root, "baseline", "--quiet").returncode == ExitCode.OK
    assert command(root, "gate", "--quiet").returncode == ExitCode.OK
    assert sorted(path.name for path in (root / "build").iterdir()) == sorted(REPORTS)
    return root


def test_a_gate_that_exits_2_removes_the_last_runs_reports(gated: Path) -> None:
    """The team's factory raises: the child says so, exits 2 and removes the reports of the
    passing gate before it; the baseline, an input, stays as it was."""
    baseline = (gated / "baseline.json").read_bytes()
    done = command(gated, "gate", "--quiet", act="raise")
    assert done.returncode == ExitCode.INVALID_INPUT, done.stderr
    assert "removed build/report.json, build/summary.md, build/report.html" in done.stderr
    assert list((gated / "build").iterdir()) == []
    assert (gated / "baseline.json").read_bytes() == baseline


def test_a_gate_whose_process_ends_early_leaves_no_report_either(gated: Path) -> None:
    """The team's factory ends the child with os._exit(0): the child never gets to clean up,
    so the supervisor, which exits 2 for it, removes the last run's reports."""
    done = command(gated, "gate", "--quiet", act="exit")
    assert done.returncode == ExitCode.INVALID_INPUT, done.stderr
    assert "did not finish" in done.stderr
    assert list((gated / "build").iterdir()) == []
    assert (gated / "baseline.json").is_file()


def test_an_error_with_the_teams_frames_travels_whole() -> None:
    """An error raised on a cluster's worker comes back pickled: the team's frames with it."""
    error = EvalInputError(
        "src/teampkg/retriever.py", "build_retriever raised ValueError: x", "fix it", 15, "  frames"
    )
    again = pickle.loads(pickle.dumps(error))
    assert (again.detail, str(again)) == ("  frames", str(error))
