"""Trust measured on a team's own answers, in a baked project. As shipped, the lexical judge's
agreement with people (on the demo's held-out labels) is below [judge] min_kappa, so an answer
that invents a sentence is reported in every view and the gate passes. The team grades 60
sentences of its own answers on the page in real headless Chromium, merges them, calibrates.
Labels read the other way put kappa below min_kappa: the answer is advisory again. With the
grades as given, the judge agrees with its people, its checks gate, and the same answer fails
the gate, with faithfulness corrected by those labels and its interval shown."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conftest import BAKE_ENV, NEEDS_A_BROWSER, bake, gate_the_judge, nox, output, package_of, run, venv_bin

if TYPE_CHECKING:
    from playwright.sync_api import Page


INVENTED = "Tidemark was founded in 1987 by forty engineers in Lisbon."
# Appended to the team's generator.py: the shipped stand-in's answers, with a sentence no
# passage says added to the answers of QUESTIONS (every other answer when it is empty).
INVENTING = """

_QUESTIONS: set[str] = {questions!r}


class _Inventing:
    def __init__(self, inner: Generator) -> None:
        self.inner = inner

    def answer(self, question: str) -> Answer:
        answer = self.inner.answer(question)
        chosen = question in _QUESTIONS if _QUESTIONS else len(question) % 2 == 0
        if answer.abstained or not chosen:
            return answer
        return Answer(answer.text + " {invented}", answer.contexts)


_shipped = build_generator


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
    return _Inventing(_shipped(retriever, documents, options))
"""


def inventing(project: Path, original: str, questions: set[str]) -> None:
    path = project / "src" / package_of(project) / "generator.py"
    path.write_text(original + INVENTING.format(questions=questions, invented=INVENTED), encoding="utf-8")


def rag(project: Path, *args: str) -> Any:
    """The engine's command, from the gate session's environment."""
    return run(project, str(venv_bin(project, "gate") / "rag-regress"), *args, env=BAKE_ENV)


def views(project: Path) -> tuple[str, str]:
    build = project / "build"
    return (build / "summary.md").read_text(encoding="utf-8"), (build / "report.html").read_text(
        encoding="utf-8"
    )


@NEEDS_A_BROWSER[0]
@NEEDS_A_BROWSER[1]
def test_the_judge_gates_only_once_it_agrees_with_the_teams_own_grades(tmp_path: Path, page: Page) -> None:
    project = bake(tmp_path)
    generator = project / "src" / package_of(project) / "generator.py"
    original = generator.read_text(encoding="utf-8")
    shipped = json.loads((project / "evals" / "baseline.json").read_text(encoding="utf-8"))
    target = next(
        row
        for row in shipped["questions"]
        if row["answer"] and not row["answer"]["abstained"] and row["answer"]["faithfulness"] == 1.0
    )
    qid = target["id"]

    # 1. As shipped: kappa 0.25 on the demo's 112 held-out labels, below min_kappa 0.4. The
    #    invented sentence is named in every view, faithfulness is advisory, the gate passes.
    inventing(project, original, {target["question"]})
    shipped_gate = nox(project, "gate")
    assert shipped_gate.returncode == 0, output(shipped_gate)
    out = shipped_gate.stdout
    assert "Judge lexical 2.2: kappa 0.25 (95% 0.07 to 0.43) on 112 held-out labels" in out
    assert "below min_kappa 0.4; its checks are advisory" in out
    assert re.search(r"  faithfulness +1\.000 +0\.9\d\d .* ok \(advisory\)", out), out
    assert re.search(r"faithfulness: 1 newly failing.*\(advisory, listed and not counted", out)
    assert re.search(rf"{qid} .*faithfulness 1\.000 -> 0\.\d+", out)
    assert INVENTED in out and "GATE PASSED" in out
    summary, html = views(project)
    for view in (summary, html):
        assert "its checks are advisory" in view and "ok (advisory)" in view and qid in view
        assert "(advisory, listed and not counted" in view

    # 2. The team's grades: every other answer invents a sentence; 60 sentences of the report
    #    graded on the page, a person's way (the invented sentence is not supported).
    inventing(project, original, set())
    assert rag(project, "eval", "--quiet").returncode == 0
    page_file = project / "build" / "answers.html"
    graded = rag(project, "grade", "--answers", "--count", "60", "--output", str(page_file))
    assert graded.returncode == 0, output(graded)
    page.goto(page_file.as_uri())
    page.locator("#name").press_sequentially("Ana")
    page.keyboard.press("Escape")
    said = []
    for _ in range(60):
        unsupported = INVENTED in (page.text_content("#claim") or "")
        said.append(unsupported)
        page.keyboard.press("u" if unsupported else "s")
    assert page.text_content("#progress") == "60 of 60 graded (60 by you)"
    assert 5 <= sum(said) <= 55, "the sample holds both verdicts"
    download = project / "build" / "labels-ana.jsonl"
    with page.expect_download() as started:
        page.click("#download")
    started.value.save_as(download)

    # Into a labels file of the team's own; its held-out half (about 30) measures the judge.
    config = project / "eval.toml"
    text = config.read_text(encoding="utf-8")
    text = text.replace('labels = "evals/judge_labels.jsonl"', 'labels = "evals/team_labels.jsonl"')
    assert "\nmin_labels = 50\n" in text
    config.write_text(text.replace("\nmin_labels = 50\n", "\nmin_labels = 20\n"), encoding="utf-8")
    assert tomllib.loads(config.read_text(encoding="utf-8"))["judge"]["min_labels"] == 20
    merged = rag(project, "add-labels", str(download))
    assert merged.returncode == 0, output(merged)
    assert "60 label(s) added" in merged.stdout
    calibrated = rag(project, "calibrate")
    assert calibrated.returncode == 0, output(calibrated)
    domains = re.findall(r"^  (\S+) +\d+ +[01]\.\d{3} ", calibrated.stdout, re.M)
    assert domains and domains[0] == "team", calibrated.stdout

    # 3. Graders who read every sentence the other way: kappa on their labels is below
    #    min_kappa, and the same invented sentence is advisory again.
    inventing(project, original, {target["question"]})
    team = project / "evals" / "team_labels.jsonl"
    kept = team.read_bytes()
    lines = [json.loads(line) for line in kept.decode("utf-8").splitlines()]
    team.write_text(
        "".join(json.dumps({**line, "supported": not line["supported"]}) + "\n" for line in lines)
    )
    contrary = rag(project, "gate")
    assert contrary.returncode == 0, output(contrary)
    below = r"Judge lexical \d+\.\d+: kappa -[01]\.\d\d .* below min_kappa 0\.4; its checks are advisory"
    assert re.search(below, contrary.stdout), contrary.stdout
    assert "GATE PASSED" in contrary.stdout and qid in contrary.stdout
    team.write_bytes(kept)

    # 4. The judge agrees with the team: its checks gate, and the same answer fails.
    gate = rag(project, "gate")
    assert gate.returncode == 3, output(gate)
    out = gate.stdout
    agrees = r"Judge lexical \d+\.\d+: kappa 1\.00 \(95% 1\.00 to 1\.00\) on \d\d held-out labels"
    assert re.search(agrees, out), out
    assert "reaches min_kappa 0.4; its checks gate" in out
    assert re.search(rf"\[newly failing answer\] {qid} .*faithfulness 1\.000 -> 0\.\d+", out), out
    corrected = re.search(
        r"faithfulness corrected by (\d+) labels of your own answers: "
        r"(0\.\d+) \(95% (0\.\d+) to (1\.000|0\.\d+)\)",
        out,
    )
    assert corrected, out
    low, estimate, high = map(float, corrected.group(3, 2, 4))
    assert low < estimate <= high and int(corrected.group(1)) >= 20
    summary, html = views(project)
    for view in (summary, html):
        assert "its checks gate" in view and "faithfulness corrected by" in view and qid in view
    report = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    calibration = report["receipt"]["calibration"]
    assert calibration["status"] == "gates" and calibration["labels"] == "evals/team_labels.jsonl"
    assert calibration["faithfulness"]["labelled"] == int(corrected.group(1))


def test_gate_unmeasured_gates_the_judge_and_says_so(tmp_path: Path) -> None:
    """A team may gate the judge's checks before it has measured the judge: every view says so."""
    project = bake(tmp_path)
    generator = project / "src" / package_of(project) / "generator.py"
    shipped = json.loads((project / "evals" / "baseline.json").read_text(encoding="utf-8"))
    target = next(row for row in shipped["questions"] if row["answer"] and not row["answer"]["abstained"])
    inventing(project, generator.read_text(encoding="utf-8"), {target["question"]})
    gate_the_judge(project)
    gate = nox(project, "gate")
    assert gate.returncode == 3, output(gate)
    assert "gated anyway ([judge] gate_unmeasured = true); its checks gate" in gate.stdout
    summary, html = views(project)
    assert "gated anyway" in summary and "gated anyway" in html
