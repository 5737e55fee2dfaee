"""Answers that are right, in a baked project: the team's generator is swapped for one that
answers from the wrong passage (faithful, but wrong), one that says a key fact in other
words, and one that cites a passage that does not support its sentence; `nox -s gate`
says what each did, naming the questions."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import bake, gate_the_judge, nox, output, package_of

# Appended to the team's generator.py: each wraps the shipped stand-in's answers.
WRONG_PASSAGE = '''

class _WrongPassage:
    """Answers from the second passage, quoting and citing it: faithful, but wrong."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner

    def answer(self, question: str) -> Answer:
        answer = self.inner.answer(question)
        if answer.abstained or len(answer.contexts) < 2:
            return answer
        return Answer(stand_in.cite(answer.contexts[1].text, 2), answer.contexts)
'''
OTHER_WORDS = '''

_SAID = {"60 minutes": "an hour", "12 hours": "twelve hours", "1 year": "12 months", "35 days": "five weeks"}


class _OtherWords:
    """The stand-in's answers with some quantities in other words: the same facts."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner

    def answer(self, question: str) -> Answer:
        answer = self.inner.answer(question)
        text = answer.text
        for written, said in _SAID.items():
            text = text.replace(written, said)
        return Answer(text, answer.contexts, answer.abstained)
'''
MISCITED = '''

class _Miscited:
    """Cites the second passage for the first sentence of one answer."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner

    def answer(self, question: str) -> Answer:
        answer = self.inner.answer(question)
        if question != "turn on 2FA":
            return answer
        return Answer(answer.text.replace("[1]", "[2]", 1), answer.contexts)
'''
WRAP = """

_shipped = build_generator


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
    return {wrapper}(_shipped(retriever, documents, options))
"""


def swap_generator(project: Path, original: str, code: str, wrapper: str) -> None:
    path = project / "src" / package_of(project) / "generator.py"
    path.write_text(original + code + WRAP.format(wrapper=wrapper), encoding="utf-8")


def answers(project: Path, name: str) -> dict[str, dict]:
    report = json.loads((project / name).read_text(encoding="utf-8"))
    return {row["id"]: row["answer"] for row in report["questions"]}


def test_the_gate_fails_a_faithful_wrong_answer_passes_other_words_and_names_a_bad_citation(
    tmp_path: Path,
) -> None:
    project = bake(tmp_path)
    gate_the_judge(project)  # the shipped judge's agreement with people is below min_kappa
    generator = project / "src" / package_of(project) / "generator.py"
    original = generator.read_text(encoding="utf-8")
    baseline = answers(project, "evals/baseline.json")
    golden = [
        json.loads(line) for line in (project / "evals" / "golden.jsonl").read_text("utf-8").splitlines()
    ]
    answerable = [q for q in golden if q["answerable"]]
    assert answerable and all(q.get("reference") and q.get("nuggets") for q in answerable)

    # 1. Faithful but wrong: every sentence is in its passage, and the gate fails on correctness.
    swap_generator(project, original, WRONG_PASSAGE, "_WrongPassage")
    wrong = nox(project, "gate")
    assert wrong.returncode == 3, output(wrong)
    now = answers(project, "build/report.json")
    assert (
        json.loads((project / "build" / "report.json").read_text("utf-8"))["aggregate"]["faithfulness"] == 1.0
    )
    broken = [
        qid
        for qid, answer in now.items()
        if baseline[qid]["correctness"] == 1.0 and answer["correctness"] == 0.0
    ]
    assert len(broken) >= 10
    for qid in broken:
        assert re.search(rf"\[newly failing answer\] {qid} .*correctness 1\.000 -> 0\.000", wrong.stdout), qid
    assert "[regression] correctness" in wrong.stdout and "[floor] correctness" in wrong.stdout
    assert "reference not stated: " in wrong.stdout
    assert re.search(r"  correctness +0\.\d+ +0\.\d+ .*FAIL", wrong.stdout)
    assert re.search(r"  faithfulness +1\.000 +1\.000 .* ok", wrong.stdout)

    # 2. A key fact in other words ("an hour" for "60 minutes") still holds: the gate passes.
    swap_generator(project, original, OTHER_WORDS, "_OtherWords")
    other = nox(project, "gate")
    assert other.returncode == 0, output(other)
    now = answers(project, "build/report.json")
    said = {
        "60 minutes": "an hour",
        "12 hours": "twelve hours",
        "1 year": "12 months",
        "35 days": "five weeks",
    }
    changed = [  # questions whose key fact the answer now says in other words
        q["id"]
        for q in answerable
        for fact in q["must_include"]
        if fact in said and said[fact] in now[q["id"]]["text"]
    ]
    assert len(changed) >= 3
    for qid in changed:
        assert now[qid]["key_facts"] == baseline[qid]["key_facts"] == 1.0, qid
        assert any("(normalised)" in found["why"] for found in now[qid]["matched"]), qid
    evaluated = nox(project, "eval")
    assert evaluated.returncode == 0, output(evaluated)
    assert "'60 minutes' held by 'an hour' (normalised)" in evaluated.stdout

    # 3. A citation of a passage that does not support its sentence: named, and the gate fails.
    swap_generator(project, original, MISCITED, "_Miscited")
    miscited = nox(project, "gate")
    assert miscited.returncode == 3, output(miscited)
    assert re.search(r"\[newly failing answer\] q01 .*citation_precision 1\.000 -> 0\.750", miscited.stdout)
    assert (
        "miscited: 'To turn on 2FA" in miscited.stdout
        and "cites [2] (recover-account-lost-2fa-device)" in miscited.stdout
    )
    summary = (project / "build" / "summary.md").read_text(encoding="utf-8")
    assert "miscited" in summary and "q01" in summary

    generator.write_text(original, encoding="utf-8")
    restored = nox(project, "gate")
    assert restored.returncode == 0, output(restored)
    now = answers(project, "build/report.json")  # the stand-in cites the passage it quotes
    assert all(
        re.search(r" \[1\][.!?]?$", now[q["id"]]["text"]) for q in answerable if not now[q["id"]]["abstained"]
    )
