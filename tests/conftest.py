"""Shared helpers for the template's own tests: bake the template, run commands in a bake."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "{{cookiecutter.project_slug}}"
ANSWERS = json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))
RETRIEVERS: list[str] = ANSWERS["retriever"]
# Choices that need torch and a sentence-transformers model: slow to install, so their
# end-to-end checks live together in test_baked_dense.py.
EMBEDDING_RETRIEVERS = ["dense", "hybrid"]
KEYWORD_RETRIEVERS = [r for r in RETRIEVERS if r not in EMBEDDING_RETRIEVERS]

# Runs that must never reach a model hub, and a nox that reuses nothing between bakes.
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
# A real test collection beside the template (BEIR SciFact, read-only): the baked projects'
# import test runs on it when it is there.
SCIFACT = ROOT.parent / "shared" / "datasets" / "scifact"
if SCIFACT.is_dir():
    ENV.setdefault("SCIFACT_DIR", str(SCIFACT))


def bake_cli(output: Path, *answers: str) -> subprocess.CompletedProcess[str]:
    """Run the cookiecutter command line as a user would, with `key=value` answers."""
    command = [sys.executable, "-m", "cookiecutter", "--no-input", str(ROOT), "-o", str(output), *answers]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, check=False)


def bake(output: Path, *answers: str) -> Path:
    """Bake into `output`; return the generated project folder. Fails the test on error."""
    result = bake_cli(output, *answers)
    assert result.returncode == 0, f"bake failed:\n{result.stdout}\n{result.stderr}"
    (project,) = [p for p in output.iterdir() if p.is_dir()]
    return project


def run(project: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run a command in a baked project, capturing its output."""
    return subprocess.run(list(command), cwd=project, capture_output=True, text=True, env=ENV, check=False)


def nox(project: Path, *sessions: str) -> subprocess.CompletedProcess[str]:
    """Run the baked project's own nox sessions (real virtualenvs, real installs)."""
    return run(project, sys.executable, "-m", "nox", "--non-interactive", "-s", *sessions)


def render_hook(name: str, answers: dict) -> str:
    """Render a hook as cookiecutter does. Its only Jinja is the answers-as-JSON literal."""
    source = (ROOT / "hooks" / name).read_text(encoding="utf-8")
    placeholder = "{{ cookiecutter | tojson }}"
    assert source.count("{{") == source.count(placeholder) == 1, "hooks read answers in one place only"
    return source.replace(placeholder, json.dumps(answers))


def package_of(project: Path) -> str:
    (package,) = [p.name for p in (project / "src").iterdir() if p.is_dir()]
    return package


@pytest.fixture(scope="session")
def default_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One bake with every default answer, shared by read-only tests."""
    return bake(tmp_path_factory.mktemp("default"))


def baseline_form(run: dict) -> dict:
    """A run report's JSON in the form `baseline` commits: the top k of each ranking, the ranks
    of the relevant documents, the answers without their text, and none of the run's own
    counts (the `run` section: calls made, outputs cached); see the generated project's
    inputs/reports.py."""
    k = run["settings"]["k"]
    for row in run["questions"]:
        ranked = [doc_id for doc_id, _ in row["retrieved"]]
        row["relevant_ranks"] = {d: ranked.index(d) + 1 if d in ranked else None for d in row["relevant"]}
        row["retrieved"] = row["retrieved"][:k]
        if row.get("answer"):
            row["answer"]["text"] = ""
    run.pop("holdout", None)
    run.pop("run", None)
    return run


def assert_ships_its_true_baseline(project: Path) -> None:
    """The report the gate just wrote, in the baseline's form, equals the shipped baseline,
    except for the gate's own verdict and where and with which library versions each ran."""
    fresh = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    shipped = json.loads((project / "evals" / "baseline.json").read_text(encoding="utf-8"))
    assert fresh.pop("comparison")["passed"] is True  # the gate's verdict: only in its report
    fresh = baseline_form(fresh)
    for report in (fresh, shipped):
        del report["receipt"]["git_commit"], report["receipt"]["versions"]
    # An embedding model's float32 scores move in the 6th decimal between builds of torch and
    # its libraries; the ranking (ids, in order) and every metric must not move at all.
    for now, then in zip(fresh["questions"], shipped["questions"], strict=True):
        assert [h[0] for h in now["retrieved"]] == [h[0] for h in then["retrieved"]], now["id"]
        pairs = zip(now["retrieved"], then["retrieved"], strict=True)
        drift = max((abs(a[1] - b[1]) for a, b in pairs), default=0.0)
        assert drift <= 5e-6, f"{now['id']}: scores moved by {drift}"
        now["retrieved"] = then["retrieved"]
    assert fresh == shipped, "stale shipped baseline: run `nox -s baselines` at the template root"
