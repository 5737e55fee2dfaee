"""`nox -s gate` and `pytest -m gate` (the engine's pytest plugin, in the project's
tests/test_quality_gate.py) agree: each fails exactly when the other does.

One default bake, three systems in turn: the shipped one (both pass), a generator that
changes one number in one answer (the gate exits 3, the tests fail, both naming the
question), and no baseline at all (the gate exits 2, the tests fail).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import bake, gate_the_judge, nox, output, package_of, run, venv_bin

ONE_NUMBER_CHANGED = '''"""The shipped stand-in, except that one answer says 31 where its passage says 30."""

from __future__ import annotations

import re
from typing import Any

from rag_regress import Answer, Document, Generator, Retriever
from rag_regress.answers import stand_in

QUESTION = QUESTION_TEXT


class OneNumberChanged:
    def __init__(self, inner: Generator):
        self.inner = inner

    def answer(self, question: str) -> Answer:
        answer = self.inner.answer(question)
        if question != QUESTION:
            return answer
        return Answer(re.sub(r"\\b30\\b", "31", answer.text, count=1), answer.contexts, answer.abstained)


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
    return OneNumberChanged(stand_in.build(retriever, documents, options))
'''


def gate_tests(project: Path):
    """`pytest -m gate` with the project's tests environment (made by `nox -s tests`)."""
    python = str(venv_bin(project, "tests") / "python")
    return run(project, python, "-m", "pytest", "-m", "gate", "-q", "-p", "no:cacheprovider")


def test_the_gate_command_and_the_gate_tests_fail_together(tmp_path: Path) -> None:
    project = bake(tmp_path)
    gate_the_judge(project)  # the changed number is the judge's to find: let its checks gate

    # The shipped system: both pass.
    gate = nox(project, "gate")
    assert gate.returncode == 0, output(gate)
    tests = nox(project, "tests", "--", "-m", "gate", "-p", "no:cacheprovider")
    assert tests.returncode == 0, output(tests)
    assert re.search(r"\b1 passed\b", tests.stdout), output(tests)

    # One number in one answer: 31 for 30, in the first answerable question whose answer says 30.
    report = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    row = next(
        row
        for row in report["questions"]
        if row["answerable"] and row["answer"] and re.search(r"\b30\b", row["answer"]["text"])
    )
    source = ONE_NUMBER_CHANGED.replace("QUESTION_TEXT", json.dumps(row["question"]))
    (project / "src" / package_of(project) / "generator.py").write_text(source, encoding="utf-8")
    gate = nox(project, "gate")
    assert gate.returncode == 3, output(gate)
    assert re.search(rf"\[[^\]]*newly failing answer[^\]]*\] {row['id']} ", gate.stdout), output(gate)
    changed = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    answers = {r["id"]: r["answer"]["text"] for r in changed["questions"] if r["answer"]}
    was = {r["id"]: r["answer"]["text"] for r in report["questions"] if r["answer"]}
    assert {qid for qid in answers if answers[qid] != was[qid]} == {row["id"]}, "exactly one answer changed"
    tests = gate_tests(project)
    assert tests.returncode != 0, output(tests)
    assert "gate exit code 3 (quality regressed)" in tests.stdout and row["id"] in tests.stdout, output(tests)

    # No baseline: the gate cannot run (2), and the tests say so.
    (project / "evals" / "baseline.json").unlink()
    gate = nox(project, "gate")
    assert gate.returncode == 2, output(gate)
    tests = gate_tests(project)
    assert tests.returncode != 0, output(tests)
    assert "gate exit code 2 (the gate could not run)" in tests.stdout, output(tests)
