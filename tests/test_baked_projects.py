"""End to end: each baked project's own nox sessions, as a team would run them.

These create real virtual environments and install the project's dependencies from PyPI (uv
when present), the engine from this clone (RAG_REGRESS_ENGINE, see conftest.py).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from conftest import (
    KEYWORD_RETRIEVERS,
    assert_ships_its_true_baseline,
    bake,
    nox,
    output,
    package_of,
    run,
    venv_bin,
)
from test_bake import HOSTILE

REGRESSION = ("min_length = 1 ", "min_length = 4 ")  # seed 000: drop tokens shorter than 4
# A team's own settings for its services, which nothing may call while the tests run.
SERVICE_SETTINGS = {
    "[retriever]": 'url = "http://127.0.0.1:9/search"',
    "[generation]": 'url = "http://127.0.0.1:9/v1"\nmodel = "m"',
}
TESTS_SECONDS = 90  # `nox -s tests` in a fresh bake, warm package caches


@pytest.mark.parametrize("retriever", KEYWORD_RETRIEVERS)  # dense, hybrid: test_baked_dense.py
def test_baked_project_passes_its_tests_and_gate_and_ships_its_true_baseline(
    tmp_path: Path, retriever: str
) -> None:
    project = bake(tmp_path, f"retriever={retriever}")
    result = nox(project, "tests", "gate")
    assert result.returncode == 0, output(result)
    assert "GATE PASSED" in result.stdout
    # The gate wrote a fresh report: the shipped baseline is exactly what this retriever produces.
    assert_ships_its_true_baseline(project)
    assert (project / "build" / "summary.md").read_text(encoding="utf-8").startswith("## ✅ GATE PASSED")
    assert "<svg" in (project / "build" / "report.html").read_text(encoding="utf-8")
    # The pytest form of the gate passes too, and the eval session prints the readable table.
    tests_venv_python = str(venv_bin(project, "tests") / "python")
    gate_as_tests = run(
        project, tests_venv_python, "-m", "pytest", "-m", "gate", "-q", "-p", "no:cacheprovider"
    )
    assert gate_as_tests.returncode == 0, output(gate_as_tests)
    table = nox(project, "eval", "--", "--all")
    assert table.returncode == 0, output(table)
    assert re.search(r"^HIT\s+q01\s", table.stdout, re.MULTILINE)
    assert "unanswerable left out" in table.stdout and "Slices by tag" in table.stdout
    # Unchanged answers: every verdict comes from the cache, no judge call at all.
    assert re.search(r"Verdict cache: [1-9]\d* hits, 0 misses; sentences judged this run: 0", table.stdout)
    # The README lists `nox -s sweep`: a fresh project's grid runs and writes its report.
    swept = nox(project, "sweep")
    assert swept.returncode == 0, output(swept)
    assert (project / "build" / "sweep.md").is_file()


def test_seed_000_regression_fails_the_gate_and_names_the_broken_questions(tmp_path: Path) -> None:
    """Dropping tokens shorter than 4 characters loses SSO, 2FA, API...: exit 3, named."""
    project = bake(tmp_path)
    config = project / "eval.toml"
    text = config.read_text(encoding="utf-8")
    assert text.count(REGRESSION[0]) == 1, "the README's one-line change must exist in eval.toml"
    config.write_text(text.replace(*REGRESSION), encoding="utf-8")

    result = nox(project, "gate")
    assert result.returncode == 3, output(result)
    assert "GATE FAILED" in result.stdout

    before = json.loads((project / "evals" / "baseline.json").read_text(encoding="utf-8"))
    after = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    for metric in ("recall@5", "mrr", "hit@5"):
        assert after["aggregate"][metric] < before["aggregate"][metric], metric
    # Every question whose hit@5 went from 1 to 0 is named, with its before/after numbers.
    old = {row["id"]: row for row in before["questions"] if row["metrics"]}
    broken = [
        row["id"]
        for row in after["questions"]
        if row["metrics"] and old[row["id"]]["metrics"]["hit@5"] == 1.0 and row["metrics"]["hit@5"] == 0.0
    ]
    assert broken, "the regression must break at least one question outright"
    for qid in broken:
        # listed once, with its answer's failures when it has some too
        label = r"\[(must-pass, )?newly failing(, newly failing answer)?\]"
        assert re.search(rf"{label} {qid} .*hit@5 1\.000 -> 0\.000", result.stdout), qid
    # ...and the broken ones are the short-acronym questions, including a must-pass one.
    tags = {row["id"]: row["tags"] for row in after["questions"]}
    assert all("acronym" in tags[qid] for qid in broken)
    assert re.search(r"\[must-pass, newly failing[^\]]*\] q\d+ ", result.stdout)

    config.write_text(text, encoding="utf-8")
    restored = nox(project, "gate")
    assert restored.returncode == 0, output(restored)


def test_seed_002_regression_refusing_answerable_questions_fails_on_answers_only(tmp_path: Path) -> None:
    """Raising the abstention threshold: exit 3 naming refused questions on abstention and
    key facts, while every retrieval metric stays exactly as in the baseline."""
    project = bake(tmp_path)
    config = project / "eval.toml"
    text = config.read_text(encoding="utf-8")
    assert text.count("min_score = 3.35 ") == 1, "the README's one-line change must exist in eval.toml"
    config.write_text(text.replace("min_score = 3.35 ", "min_score = 8.0 "), encoding="utf-8")
    result = nox(project, "gate")
    assert result.returncode == 3, output(result)
    before = json.loads((project / "evals" / "baseline.json").read_text(encoding="utf-8"))
    after = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    for metric in before["settings"]["metrics"]:
        assert after["aggregate"][metric] == before["aggregate"][metric], metric
    refused = [
        row["id"]
        for row, old in zip(after["questions"], before["questions"], strict=True)
        if row["answer"]["abstained"] and not old["answer"]["abstained"] and row["answerable"]
    ]
    assert len(refused) >= 5
    for qid in refused:
        assert re.search(rf"\[newly failing answer\] {qid} .*abstention 1\.000 -> 0\.000", result.stdout), qid
    assert "[regression] abstention" in result.stdout and "[regression] key_facts" in result.stdout
    assert "[regression] recall" not in result.stdout and "[floor] mrr" not in result.stdout


def test_gate_exits_2_without_a_baseline_and_passes_once_one_is_made(tmp_path: Path) -> None:
    project = bake(tmp_path, "k=3")
    missing = nox(project, "gate")
    assert missing.returncode == 2, output(missing)
    said = missing.stdout + missing.stderr
    assert "evals/baseline.json: the baseline report file does not exist" in said
    assert "nox -s baseline" in said
    assert nox(project, "baseline").returncode == 0
    made = nox(project, "gate")
    assert made.returncode == 0, output(made)
    assert "recall@3" in made.stdout


def test_hostile_answers_bake_a_project_that_installs_and_passes_its_gate_tests(tmp_path: Path) -> None:
    """Quotes, backslashes and new lines in its metadata: the project still builds and installs,
    and the gate as tests imports the team's system by the package name eval.toml names."""
    project = bake(tmp_path, *(f"{key}={value}" for key, value in HOSTILE.items()))
    assert package_of(project) == "qu_ote_s_back_slash_unicode_jian_suo"
    result = nox(project, "tests", "--", "-m", "gate", "-p", "no:cacheprovider")
    assert result.returncode == 0, output(result)
    assert re.search(r"\b1 passed\b", result.stdout), output(result)


def add_settings(config: Path, settings: dict[str, str]) -> None:
    """Add lines under tables of eval.toml (each table's header occurs once)."""
    text = config.read_text(encoding="utf-8")
    for header, lines in settings.items():
        assert text.count(f"\n{header}\n") == 1, header
        text = text.replace(f"\n{header}\n", f"\n{header}\n{lines}\n")
    config.write_text(text, encoding="utf-8")


def test_a_teams_service_settings_keep_the_tests_green_and_quick(tmp_path: Path) -> None:
    """The team points [retriever] and [generation] at its services (here a port nothing
    listens on): `nox -s tests` still passes, offline, well within CI's patience; the tests
    call no service (the gate is `-m gate`)."""
    project = bake(tmp_path)
    add_settings(project / "eval.toml", SERVICE_SETTINGS)
    started = time.monotonic()
    result = nox(project, "tests")
    took = time.monotonic() - started
    assert result.returncode == 0, output(result)
    assert re.search(r"\b\d+ passed\b", result.stdout) and " failed" not in result.stdout, output(result)
    assert took < TESTS_SECONDS, f"`nox -s tests` took {took:.0f} s"
