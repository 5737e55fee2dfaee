"""Baking: every choice renders completely into the team's side only (the engine is a
dependency, not a copy), stays small, and hostile answers still give a valid project."""

from __future__ import annotations

import ast
import json
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import (
    ENGINE,
    RETRIEVER_EXTRAS,
    RETRIEVERS,
    TEMPLATE,
    bake,
    engine_pin,
    package_of,
    pin_extras,
    project_files,
    run,
)

UNRENDERED = re.compile(r"(?<!\$)\{\{|\{%|\{#|cookiecutter\.[a-z_]")  # ${{ }}: GitHub Actions
HOSTILE = {
    "project_name": "Qu\"ote's \\ back\\slash Ünïcødé 検索 🚀",
    "author": 'O\'Brien "The Hammer" \\ Zoë 🦊\nSecond line',
    "description": 'Line one\nline two with "quotes", \\backslashes\\, tabs\tand a 🦄; {single braces}',
}
# Every file of a default bake, PACKAGE standing for the package's name: the team's side only.
LAYOUT = {
    ".gitattributes",
    ".gitignore",
    ".github/dependabot.yml",
    ".github/workflows/rag-eval.yml",
    ".github/workflows/template-update.yml",
    "README.md",
    "eval.toml",
    "evals/baseline.json",
    "evals/corpus.jsonl",
    "evals/golden.jsonl",
    "evals/judge_labels.jsonl",
    "noxfile.py",
    "pyproject.toml",
    "src/PACKAGE/__init__.py",
    "src/PACKAGE/generator.py",
    "src/PACKAGE/retriever.py",
    "tests/test_judge.py",
    "tests/test_metric_properties.py",
    "tests/test_quality_gate.py",
    "tox.ini",
}
MAX_FILES, MAX_PYTHON_LINES, MAX_FILE_BYTES = 30, 2_000, 300 * 1024
MAX_EVAL_TOML_LINES = 120  # read in the ten minutes a newcomer gives the project


def text_files(project: Path) -> list[Path]:
    return [p for p in project_files(project) if p.suffix != ".pyc"]


def layout(project: Path) -> set[str]:
    package = package_of(project)
    return {
        re.sub(rf"^src/{re.escape(package)}/", "src/PACKAGE/", str(p.relative_to(project)))
        for p in project_files(project)
    }


# Wording about the template's build machine or history, which means nothing to a team.
NOT_THE_TEAMS = re.compile(
    r"uv does not see|local CPU wheel|downloaded here|\bseeds? \d{3}\b|\bseeds? \d+\.\.|tutorial|grew from"
    r"|(?:this|the) template's (?:own )?(?:CI|tests|import check)|retrievers this template ships",
    re.IGNORECASE,
)
README_SECTION = re.compile(r"""README(?:'s)?[,:]?\s+"([^"]+)\"""")  # README, "Installing torch"
DOCS_PAGE = re.compile(r"\bdocs(?:/|, )([a-z_]+\.md)\b")  # docs/statistics.md; the rag-regress docs, gate.md


def assert_speaks_of_the_project_only(project: Path) -> None:
    """No generated file (its data aside) speaks of the template's build machine or history,
    every `README, "Section"` reference names a section this project's README has (its
    title, or the start of it: searching the README for the words finds the section), and
    every docs page named is one of the engine's docs (engine/docs: the bake has none)."""
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
        problems += [
            f"{name}: no docs page {m.group(0)!r} in the engine"
            for m in DOCS_PAGE.finditer(text)
            if not (ENGINE / "docs" / m.group(1)).is_file()
        ]
    assert not problems, "\n".join(problems)


def torch_pins(project: Path) -> tuple[list[str], bool]:
    """What the project's noxfile pins torch as (its module-level TORCH, computed from the
    engine pin's extras and [judge] backend) and whether tox.ini pins it."""
    script = "import runpy, json; print(json.dumps(runpy.run_path('noxfile.py')['TORCH']))"
    result = run(project, sys.executable, "-c", script)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), "torch==2.13.0" in (project / "tox.ini").read_text("utf-8")


@pytest.mark.parametrize(
    "choice", [f"retriever={r}" for r in RETRIEVERS] + ["judge=nli", "judge=llm", "generator=openai"]
)
def test_every_choice_renders_completely_and_lint_clean(tmp_path: Path, choice: str) -> None:
    """Nothing left unrendered, exactly the team's files, the engine pinned with the extras
    the choice needs, and the generated Python passes the project's own ruff settings."""
    project = bake(tmp_path, choice)
    leftovers = [
        f"{path.relative_to(project)}: {line.strip()}"
        for path in text_files(project)
        for line in path.read_text(encoding="utf-8").splitlines()
        if UNRENDERED.search(line)
    ]
    assert not leftovers, "unrendered template syntax:\n" + "\n".join(leftovers)
    for path in project.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    # The shipped baselines were judged by the lexical judge: an nli or llm project starts without one.
    # So was none made for a team's own service or LLM; only the LLM generator has a prompt.
    own = choice in ("judge=nli", "judge=llm", "retriever=http", "generator=openai")
    expected = LAYOUT - {"evals/baseline.json"} if own else LAYOUT
    expected |= {"prompts/answer.txt"} if choice == "generator=openai" else set()
    assert layout(project) == expected
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert len(pyproject["dependencies"]) == 1 and "scripts" not in pyproject, "the engine is the command"
    retriever = choice.removeprefix("retriever=") if choice.startswith("retriever=") else "bm25"
    extras = RETRIEVER_EXTRAS[retriever] | ({"nli"} if choice == "judge=nli" else set())
    assert pin_extras(engine_pin(project)) == extras
    for command in (["check", "--no-cache", "."], ["format", "--no-cache", "--check", "."]):
        result = run(project, sys.executable, "-m", "ruff", *command)
        assert result.returncode == 0, result.stdout + result.stderr
    assert_speaks_of_the_project_only(project)
    # The day-one eval.toml holds what a new team edits; docs/settings.md holds the rest.
    settings = (project / "eval.toml").read_text(encoding="utf-8").splitlines()
    assert len(settings) <= MAX_EVAL_TOML_LINES, f"eval.toml has {len(settings)} lines"


@pytest.mark.parametrize(
    ("answers", "extras"),
    [
        ([], set()),
        (["retriever=tfidf"], {"tfidf"}),
        (["retriever=dense"], {"dense"}),
        (["retriever=hybrid", "judge=nli"], {"hybrid", "nli"}),
        (["retriever=qdrant"], {"qdrant"}),
        (["retriever=http", "generator=openai"], set()),
        (["judge=nli"], {"nli"}),
    ],
)
def test_torch_is_pinned_exactly_where_sentence_transformers_comes_in(
    tmp_path: Path, answers: list[str], extras: set[str]
) -> None:
    """The engine's extras bring sentence-transformers for dense, hybrid and nli: there the
    noxfile and tox.ini pin torch (never resolved freely), and nowhere else; a team that
    switches [judge] backend to nli later gets the pin from nox too."""
    project = bake(tmp_path, *answers)
    assert pin_extras(engine_pin(project)) == extras
    needs_torch = bool(extras & {"dense", "hybrid", "qdrant", "nli"})
    assert torch_pins(project) == ((["torch==2.13.0"] if needs_torch else []), needs_torch)
    if not needs_torch:
        config = project / "eval.toml"
        config.write_text(
            config.read_text("utf-8").replace('backend = "lexical"', 'backend = "nli"'), "utf-8"
        )
        assert torch_pins(project)[0] == ["torch==2.13.0"]


def test_nli_choice_renders_its_settings(tmp_path: Path) -> None:
    project = bake(tmp_path, "judge=nli")
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["optional-dependencies"] == {"dask": ["rag-regress[dask]"]}
    judge = tomllib.loads((project / "eval.toml").read_text(encoding="utf-8"))["judge"]
    assert judge["backend"] == "nli" and judge["model"] == "cross-encoder/nli-deberta-v3-small"
    assert_speaks_of_the_project_only(project)


def test_default_bake_is_small(default_project: Path) -> None:
    """A newcomer reads the whole project: few files, little Python, no large file."""
    files = project_files(default_project)
    assert len(files) <= MAX_FILES, [str(p.relative_to(default_project)) for p in files]
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files if p.suffix == ".py")
    assert lines <= MAX_PYTHON_LINES, f"{lines} lines of Python"
    large = {str(p.relative_to(default_project)): p.stat().st_size for p in files}
    assert not {name: size for name, size in large.items() if size > MAX_FILE_BYTES}


def test_no_module_of_the_engine_is_copied_into_a_bake(default_project: Path) -> None:
    """The engine's modules, tests, tools and docs live in engine/ only: a bake holds none."""
    engine_modules = {p.name for p in (ENGINE / "src" / "rag_regress").glob("*.py")} - {"__init__.py"}
    baked = {p.name for p in (default_project / "src" / package_of(default_project)).iterdir()}
    assert baked == {"__init__.py", "retriever.py", "generator.py"}
    assert not baked & engine_modules
    for folder in ("tests/engine", "tools", "docs"):
        assert not (default_project / folder).exists(), folder


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
    system = tomllib.loads((project / "eval.toml").read_text(encoding="utf-8"))["system"]
    package = package_of(project)
    assert system == {
        "retriever": f"{package}.retriever:build_retriever",
        "generator": f"{package}.generator:build_generator",
    }


def test_data_files_are_copied_byte_for_byte(default_project: Path) -> None:
    """The corpus, golden set and judge labels may contain braces: never through Jinja."""
    for name in ("corpus.jsonl", "golden.jsonl", "judge_labels.jsonl"):
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
