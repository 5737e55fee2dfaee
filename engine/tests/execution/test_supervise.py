"""Nothing the team's code does to its process makes a command report success: every way of
ending the process early, or after a failing gate, ends in a non-zero exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_team_project
from rag_regress.errors import ExitCode
from rag_regress.execution.supervise import verdict

# A team module: the shipped system, with one hostile act chosen by the environment.
SYSTEM = """
import atexit, os, signal, sys, threading

from rag_regress.answers import stand_in
from rag_regress.retrieval.retrievers import bm25

ACT = os.environ.get("TEAM_ACT", "")

def hostile(where):
    if ACT == where + ":exit":
        os._exit(0)
    if ACT == where + ":sys.exit":
        sys.exit(0)
    if ACT == where + ":signal":  # a handler set up earlier that exits 0
        os.kill(os.getpid(), signal.SIGTERM)
    if ACT == where + ":thread":
        # a thread of the team's that ends the process while the engine works
        threading.Thread(target=lambda: os._exit(0)).start()
        threading.Event().wait(5)

class Retriever:
    def __init__(self, inner):
        self.inner = inner

    def search(self, question, depth):
        hostile("search")
        return self.inner.search(question, depth)

if ACT.endswith(":signal"):  # set up when the module is imported, on the main thread
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))

def build_retriever(documents, tokenize, options):
    hostile("build_retriever")
    if ACT == "close-stdout":
        os.close(1)
    return Retriever(bm25.build(documents, tokenize, options))

def build_generator(retriever, documents, options):
    inner = stand_in.build(retriever, documents, options)
    if ACT == "atexit":
        atexit.register(os._exit, 0)

    class Generator:
        def answer(self, question):
            hostile("answer")
            answer = inner.answer(question)
            if os.environ.get("TEAM_MISQUOTE"):
                return type(answer)(answer.text.replace("PDF", "DOCX"), answer.contexts, answer.abstained)
            return answer

    return Generator()
"""


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny project whose [system] names the team module above, with its baseline made."""
    root = tmp_path_factory.mktemp("team")
    write_team_project(root, SYSTEM)
    assert command(root, "baseline", "--quiet").returncode == 0
    return root


def command(
    root: Path, *args: str, act: str = "", misquote: bool = False
) -> subprocess.CompletedProcess[str]:
    """`rag-regress --config root/eval.toml ARGS` as a user runs it, with the team's act."""
    env = {k: v for k, v in os.environ.items() if k not in ("TEAM_ACT", "TEAM_MISQUOTE")}
    env.update({"TEAM_ACT": act, **({"TEAM_MISQUOTE": "1"} if misquote else {})})
    return subprocess.run(
        [sys.executable, "-m", "rag_regress", "--config", str(root / "eval.toml"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_unharmed_gate_passes_and_a_misquote_fails(team: Path) -> None:
    assert command(team, "gate").returncode == ExitCode.OK
    failed = command(team, "gate", misquote=True)
    assert failed.returncode == ExitCode.REGRESSION
    assert "q4" in failed.stdout


@pytest.mark.parametrize(
    "act",
    [
        "search:exit",
        "answer:exit",
        "build_retriever:exit",
        "search:signal",
        "search:thread",
    ],
)
def test_ending_the_process_early_is_never_a_pass(team: Path, act: str) -> None:
    done = command(team, "gate", act=act)
    assert done.returncode != ExitCode.OK
    assert done.returncode == ExitCode.INVALID_INPUT
    assert "did not finish" in done.stderr


@pytest.mark.parametrize("where", ["search", "answer"])
def test_sys_exit_in_the_system_names_the_question(team: Path, where: str) -> None:
    done = command(team, "gate", act=f"{where}:sys.exit")
    assert done.returncode == ExitCode.INVALID_INPUT
    assert "sys.exit(0)" in done.stderr and "question 'q1'" in done.stderr


def test_an_atexit_exit_0_after_a_failing_gate_keeps_the_failure(team: Path) -> None:
    done = command(team, "gate", act="atexit", misquote=True)
    assert done.returncode == ExitCode.REGRESSION


def test_an_atexit_exit_0_after_a_passing_gate_is_still_a_pass(team: Path) -> None:
    assert command(team, "gate", act="atexit").returncode == ExitCode.OK


def test_a_closed_stdout_is_never_a_pass(team: Path) -> None:
    assert command(team, "gate", act="close-stdout").returncode != ExitCode.OK


def test_a_baseline_cut_short_is_not_written_and_not_a_pass(team: Path) -> None:
    baseline = team / "baseline.json"
    before = baseline.read_bytes()
    done = command(team, "baseline", "--quiet", act="search:exit")
    assert done.returncode == ExitCode.INVALID_INPUT
    assert baseline.read_bytes() == before


def test_eval_cut_short_is_not_a_pass(team: Path) -> None:
    assert command(team, "eval", act="answer:exit").returncode == ExitCode.INVALID_INPUT


@pytest.mark.parametrize(
    ("record", "status", "expected"),
    [
        (0, 0, 0),  # finished and passed
        (3, 0, 3),  # a failed gate, then exit 0 from the team's clean-up: still failed
        (2, 0, 2),
        (0, 1, 1),  # finished, then failed on the way out
        (None, 1, 1),  # a traceback
        (None, 0, 2),  # ended early with status 0: not a pass
        (0, -15, 143),  # killed by SIGTERM
        (None, -9, 137),
    ],
)
def test_the_verdict_table(record: int | None, status: int, expected: int) -> None:
    assert verdict(record, status, "gate") == expected
