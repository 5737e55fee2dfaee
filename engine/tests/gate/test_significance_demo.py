"""Noise or regression? The gate's statistics on the shipped demo (eval.toml and evals/).

Each test copies the demo into tmp_path, makes a baseline with the real retriever, then
changes the retriever's *output* (a wrapper around build_retriever) or a setting, and runs
`gate` as CI would. Nothing here states a result: what breaks is chosen from the baseline.

If you replace the demo data these tests keep working while your golden set can show the
effect; the one that needs a group of questions says so and skips when there are too few.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import PROJECT_ROOT, SHIPPED, run_cli
from rag_regress.api import History, System
from rag_regress.gate.stats import min_changed_questions
from rag_regress.settings.config import load_config


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo project with its own fresh baseline; returns its eval.toml."""
    config = load_config(PROJECT_ROOT / "eval.toml")
    # The answers' judge plays no part here; the lexical one needs no model files.
    text = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8")
    (tmp_path / "eval.toml").write_text(
        re.sub(r'(?m)^backend = "nli"', 'backend = "lexical"', text), encoding="utf-8"
    )
    for path in (config.corpus, config.golden):
        target = tmp_path / path.relative_to(PROJECT_ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    assert run_cli(["--config", str(tmp_path / "eval.toml"), "baseline"]) == 0
    return tmp_path / "eval.toml"


def rows_of(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["questions"]


def change_output(edit: Callable[[str, list], list]) -> System:
    """The shipped system, its retriever's results passed through `edit(question, hits)`."""
    build = SHIPPED.build_retriever

    class Edited:
        def __init__(self, inner: Any):
            self.inner = inner

        def search(self, query: str, depth: int, history: History = ()) -> list:
            return edit(query, self.inner.search(query, depth, history=history))

    return System(lambda *a, **kw: Edited(build(*a, **kw)), SHIPPED.build_generator)


def gate(
    config_path: Path, capsys: pytest.CaptureFixture[str], system: System = SHIPPED
) -> tuple[int, dict[str, Any], str]:
    capsys.readouterr()
    code = run_cli(["--config", str(config_path), "gate"], system)
    report = json.loads(load_config(config_path).report.read_text(encoding="utf-8"))
    return code, report["comparison"], capsys.readouterr().out


def overall(comparison: dict[str, Any], metric: str) -> dict[str, Any]:
    (test,) = [t for t in comparison["tests"] if t["scope"] == "all questions" and t["metric"] == metric]
    return test


def test_one_flipped_question_fails_by_default_and_passes_when_one_flip_is_allowed(
    demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One question (not must-pass) loses all its results. Its p is 0.5 (one question is no
    evidence of anything beyond the golden set), but the system is deterministic: the question
    really broke, so by default the flip fails the gate, named. Allowing one flip per check
    ([gate.allowed_flips]) lets it through, listed: a drop of one question in ~50 stays within
    the tolerance of 0.02."""
    config = load_config(demo)
    k = config.k
    victim = next(
        row for row in rows_of(config.baseline) if row["metrics"] and not row["must_pass"] and row["found"]
    )
    system = change_output(lambda query, hits: [] if query == victim["question"] else hits)

    code, comparison, out = gate(demo, capsys, system)

    hit = overall(comparison, f"hit@{k}")
    assert hit["p"] == 0.5 and not hit["significant"]
    assert code == 3, out
    assert "GATE FAILED" in out and re.search(rf"\[newly failing[^\]]*\] {victim['id']} ", out)
    assert victim["id"] in {f["subject"] for f in comparison["failures"] if f["blocking"]}

    text = demo.read_text(encoding="utf-8")
    checks = [str(name) for name in config.gate.all_checks]
    allowed = "\n[gate.allowed_flips]\n" + "".join(f'"{name}" = 1\n' for name in checks)
    demo.write_text(text + allowed, encoding="utf-8")
    code, comparison, out = gate(demo, capsys, system)
    assert code == 0, out
    assert "GATE PASSED" in out and "within [gate.allowed_flips]" in out
    assert all(not failure["blocking"] for failure in comparison["failures"])


def test_a_consistent_group_of_broken_questions_fails_with_a_small_p(
    demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A change that keeps only the first result: every question that found two or more
    relevant documents in the top k loses recall. A regression on the golden set whatever its
    p; this consistent group also makes it significant after the max-T correction over the
    gated metrics, so it would generalise beyond these questions: exit 3."""
    config = load_config(demo)
    k, alpha = config.k, config.stats.alpha
    group = [row for row in rows_of(config.baseline) if row["metrics"] and len(row["found"]) >= 2]
    needed = min_changed_questions(alpha / len(config.gate.metrics))  # at worst, Bonferroni's
    if len(group) < needed:
        pytest.skip(
            f"only {len(group)} questions find 2+ relevant documents; the demonstration needs {needed}"
        )
    system = change_output(lambda query, hits: hits[:1])

    code, comparison, out = gate(demo, capsys, system)

    recall = overall(comparison, f"recall@{k}")
    assert recall["delta"] < -config.gate.tolerance and recall["ci_high"] < 0
    assert recall["p_adjusted"] <= alpha and recall["rule"] == "change", recall
    assert code == 3, out
    regressions = [f for f in comparison["failures"] if f["kind"] == "regression" and f["blocking"]]
    assert f"recall@{k}" in {f["subject"] for f in regressions}
    assert f"[regression] recall@{k} " in out and "GATE FAILED" in out
    assert "Westfall-Young max-T" in comparison["correction"]
