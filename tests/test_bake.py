"""Baking: every choice renders completely, and hostile answers still give a valid project."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import RETRIEVERS, TEMPLATE, bake, nox, package_of, run

UNRENDERED = re.compile(r"(?<!\$)\{\{|\{%|\{#|cookiecutter\.[a-z_]")  # ${{ }}: GitHub Actions
HOSTILE = {
    "project_name": "Qu\"ote's \\ back\\slash Ünïcødé 検索 🚀",
    "author": 'O\'Brien "The Hammer" \\ Zoë 🦊\nSecond line',
    "description": 'Line one\nline two with "quotes", \\backslashes\\, tabs\tand a 🦄; {single braces}',
}


def text_files(project: Path) -> list[Path]:
    return [p for p in project.rglob("*") if p.is_file() and p.suffix != ".pyc"]


# Wording about the template's build machine or history, which means nothing to a team.
NOT_THE_TEAMS = re.compile(
    r"uv does not see|local CPU wheel|downloaded here|\bseeds? \d{3}\b|\bseeds? \d+\.\.|tutorial|grew from"
    r"|(?:this|the) template's (?:own )?(?:CI|tests|import check)|retrievers this template ships",
    re.IGNORECASE,
)
README_SECTION = re.compile(r"""README(?:'s)?[,:]?\s+"([^"]+)\"""")  # README, "Installing torch"


def assert_speaks_of_the_project_only(project: Path) -> None:
    """No generated file (its data aside) speaks of the template's build machine or history,
    and every `README, "Section"` reference names a section this project's README has (its
    title, or the start of it: searching the README for the words finds the section)."""
    readme = (project / "README.md").read_text(encoding="utf-8")
    sections = {m.group(1).strip() for m in re.finditer(r"^#+\s+(.+)$", readme, re.MULTILINE)}
    problems = []
    for path in text_files(project):
        name = path.relative_to(project)
        if name.parts[0] == "evals":  # the team's data: any words at all
            continue
        text = path.read_text(encoding="utf-8")
        problems += [f"{name}: {m.group(0)!r}" for m in NOT_THE_TEAMS.finditer(text)]
        joined = re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)  # a reference wrapped over comment lines
        problems += [
            f"{name}: README has no section {m.group(1)!r}"
            for m in README_SECTION.finditer(joined)
            if not any(section.startswith(m.group(1)) for section in sections)
        ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("retriever", RETRIEVERS)
def test_every_choice_renders_completely(tmp_path: Path, retriever: str) -> None:
    project = bake(tmp_path, f"retriever={retriever}")
    leftovers = [
        f"{path.relative_to(project)}: {line.strip()}"
        for path in text_files(project)
        for line in path.read_text(encoding="utf-8").splitlines()
        if UNRENDERED.search(line)
    ]
    assert not leftovers, "unrendered template syntax:\n" + "\n".join(leftovers)
    for path in project.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"] == {package_of(project): f"{package_of(project)}.cli:main"}
    needs_sklearn = any("scikit-learn" in dep for dep in pyproject["project"]["dependencies"])
    assert needs_sklearn == (retriever == "tfidf"), "scikit-learn only where TF-IDF needs it"
    needs_torch = any("sentence-transformers" in dep for dep in pyproject["project"]["dependencies"])
    assert needs_torch == (retriever in {"dense", "hybrid"}), "torch only where embeddings need it"
    noxfile = (project / "noxfile.py").read_text(encoding="utf-8")
    assert f"RETRIEVER_NEEDS_TORCH = {needs_torch}" in noxfile, "torch is installed only where it is needed"
    assert 'TORCH = ["torch==2.13.0"] if' in noxfile, "when it is, pinned in the same pip command"
    assert ("# the retriever embeds" in noxfile) == needs_torch
    assert_speaks_of_the_project_only(project)


def test_nli_choice_renders_its_extra_and_settings(tmp_path: Path) -> None:
    project = bake(tmp_path, "judge=nli")
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["optional-dependencies"] == {
        "dask": ["dask[distributed]>=2024.8"],
        "nli": ["sentence-transformers>=3.0"],
    }
    assert not any("torch" in dep for dep in pyproject["project"]["dependencies"]), "torch: pinned by nox"
    judge = tomllib.loads((project / "eval.toml").read_text(encoding="utf-8"))["judge"]
    assert judge["backend"] == "nli" and judge["model"] == "cross-encoder/nli-deberta-v3-small"
    assert_speaks_of_the_project_only(project)
    lexical = bake(tmp_path / "default")
    default = tomllib.loads((lexical / "pyproject.toml").read_text(encoding="utf-8"))
    extras = default["project"]["optional-dependencies"]
    assert extras == {"dask": ["dask[distributed]>=2024.8"]}, "the lexical judge needs no extra"


@pytest.mark.parametrize("choice", [f"retriever={r}" for r in RETRIEVERS] + ["judge=nli"])
def test_generated_python_is_lint_clean_formatted_and_typechecks(tmp_path: Path, choice: str) -> None:
    """Checked after rendering, with the generated project's own ruff settings, then its own
    `nox -s typecheck` (mypy --strict, settings in its pyproject.toml; installs no torch)."""
    project = bake(tmp_path, choice)
    for command in (["check", "."], ["format", "--check", "."]):
        result = run(project, sys.executable, "-m", "ruff", *command)
        assert result.returncode == 0, result.stdout + result.stderr
    result = nox(project, "typecheck")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Success: no issues found" in output, output


def test_hostile_answers_bake_into_a_valid_project(tmp_path: Path) -> None:
    answers = [f"{key}={value}" for key, value in HOSTILE.items()]
    project = bake(tmp_path, *answers)
    assert project.name == "qu-ote-s-back-slash-unicode-jian-suo"
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["description"] == HOSTILE["description"]
    assert pyproject["project"]["authors"] == [{"name": HOSTILE["author"]}]
    for path in project.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    assert HOSTILE["project_name"] in (project / "README.md").read_text(encoding="utf-8")


def test_data_files_are_copied_byte_for_byte(default_project: Path) -> None:
    """The corpus and golden set may contain braces: they must never pass through Jinja."""
    for name in ("corpus.jsonl", "golden.jsonl"):
        assert (default_project / "evals" / name).read_bytes() == (TEMPLATE / "evals" / name).read_bytes()


def test_workflows_gate_pull_requests_with_least_privilege(default_project: Path) -> None:
    """The pull-request workflow runs the tests and the gate, reads the repository and nothing
    more, keeps no credentials, and cancels a run a newer push makes obsolete; both workflows
    have least-privilege permissions, and dependabot watches actions and pip."""
    folder = default_project / ".github"
    workflow = yaml.safe_load((folder / "workflows" / "rag-eval.yml").read_text(encoding="utf-8"))
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key `on` as a boolean
    steps = workflow["jobs"]["rag-eval"]["steps"]
    assert any(step.get("run") == "nox -s tests gate" for step in steps)
    checkout = next(step for step in steps if step.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["persist-credentials"] is False
    assert workflow["concurrency"]["cancel-in-progress"] is True
    assert "${{ github.workflow }}" in workflow["concurrency"]["group"]
    for name in ("rag-eval.yml", "template-update.yml"):
        assert yaml.safe_load((folder / "workflows" / name).read_text("utf-8"))["permissions"] == {
            "contents": "read"
        }
    dependabot = yaml.safe_load((folder / "dependabot.yml").read_text(encoding="utf-8"))
    assert {update["package-ecosystem"] for update in dependabot["updates"]} == {"github-actions", "pip"}
