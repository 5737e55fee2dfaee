"""The gate has the power to see a real drop: the tutorial's two regressions fail a baked
project whose team chose its own, looser guards (issue: "A gate with the power to see a real
drop, and a known hallucination fails it").

Each test bakes the default project, runs its own `nox -s baseline` and `nox -s gate`, as a
team would. Slow: real virtualenvs and installs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import bake, nox
from test_baked_projects import REGRESSION, output

GATED = ("recall@5", "hit@5", "mrr", "ndcg@5")


def drop_tables(text: str, *prefixes: str) -> str:
    """eval.toml without the tables whose header starts with one of `prefixes` (header and body)."""
    kept, dropping = [], False
    for line in text.splitlines(keepends=True):
        header = re.match(r"\s*\[([^\]]+)\]", line)
        if header:
            dropping = header.group(1).strip().startswith(prefixes)
        if not dropping:
            kept.append(line)
    return "".join(kept)


def loosen(project: Path) -> None:
    """A team's own guards: no floors, no slice floors, no per-question checks, no must-pass
    questions; the gated metrics are recall@5, hit@5, mrr and ndcg@5."""
    config = project / "eval.toml"
    text = drop_tables(config.read_text(encoding="utf-8"), "gate.floors", "gate.checks", "gate.slices")
    gated = "metrics = [" + ", ".join(f'"{m}"' for m in GATED) + "]"
    text, count = re.subn(r'(?m)^metrics = \["recall@5".*$', gated, text)  # [gate] metrics
    assert count == 1, "eval.toml's [gate] metrics line"
    config.write_text(text, encoding="utf-8")
    golden = project / "evals" / "golden.jsonl"
    rows = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines() if line.strip()]
    golden.write_text(
        "".join(json.dumps({**row, "must_pass": False}) + "\n" for row in rows), encoding="utf-8"
    )


def test_tokenizer_regression_fails_a_gate_without_floors_checks_or_must_pass(tmp_path: Path) -> None:
    """min_length = 4 drops the acronyms: with no floor, check or must-pass question left to
    catch it, the drops themselves (each several times the tolerance) fail the gate, named."""
    project = bake(tmp_path)
    loosen(project)
    made = nox(project, "baseline")
    assert made.returncode == 0, output(made)
    unchanged = nox(project, "gate")
    assert unchanged.returncode == 0, output(unchanged)
    assert "GATE PASSED" in unchanged.stdout

    config = project / "eval.toml"
    text = config.read_text(encoding="utf-8")
    assert text.count(REGRESSION[0]) == 1
    config.write_text(text.replace(*REGRESSION), encoding="utf-8")
    result = nox(project, "gate")
    assert result.returncode == 3, output(result)
    for metric in GATED:
        assert re.search(rf"\[regression\] {re.escape(metric)} \d\.\d{{3}} -> \d\.\d{{3}}", result.stdout), (
            metric
        )
    verdict = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))["comparison"]
    regressions = {f["subject"] for f in verdict["failures"] if f["kind"] == "regression" and f["blocking"]}
    assert set(GATED) <= regressions
    assert "floor" not in {f["kind"] for f in verdict["failures"]}  # nothing else left to catch it


GENERATOR = '''"""A generator that misquotes a number: "60 days" where its context says "30 days"."""

from __future__ import annotations

from typing import Any

from .answers import stand_in
from .api import Answer, Document, Generator, Retriever


class SixtyDays:
    def __init__(self, inner: Generator):
        self.inner = inner

    def answer(self, question: str) -> Answer:
        answer = self.inner.answer(question)
        return Answer(answer.text.replace("30 days", "60 days"), answer.contexts, answer.abstained)


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
    return SixtyDays(stand_in.build(retriever, documents, options))
'''


def test_a_generator_that_says_60_days_for_30_days_fails_the_gate(tmp_path: Path) -> None:
    """The tutorial's hallucination: every answer quoting "30 days" now says "60 days". The
    judge flags those sentences; each answer newly fails its faithfulness check, so the gate
    exits 3 naming the questions and the sentences."""
    project = bake(tmp_path)
    made = nox(project, "baseline")
    assert made.returncode == 0, output(made)
    package = next((project / "src").iterdir())
    (package / "generator.py").write_text(GENERATOR, encoding="utf-8")

    result = nox(project, "gate")
    assert result.returncode == 3, output(result)
    report = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    # (The demo corpus itself says "60 days" in places: only the misquoted sentences count.)
    misquoted = {
        row["id"]: [u["claim"] for u in row["answer"]["unsupported"] if "60 days" in u["claim"]]
        for row in report["questions"]
        if row["answer"] and any("60 days" in u["claim"] for u in row["answer"]["unsupported"])
    }
    assert len(misquoted) >= 5, misquoted
    for qid, claims in misquoted.items():
        assert re.search(
            rf"\[[^\]]*newly failing answer[^\]]*\] {qid} .*faithfulness 1\.000 -> ", result.stdout
        ), qid
        for claim in claims:
            assert f"unsupported: {claim!r}" in result.stdout, claim
    verdict = report["comparison"]
    (faithfulness,) = [flips for flips in verdict["flips"] if flips["check"] == "faithfulness"]
    assert set(faithfulness["newly_failing"]) == set(misquoted)
