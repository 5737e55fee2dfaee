"""The hooks: answers are validated before anything is written; options are pruned after."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ANSWERS, ROOT, bake, bake_cli, package_of, render_hook

BAD_ANSWERS = [
    (["project_slug=Bad Slug!"], "project_slug 'Bad Slug!' is not a valid folder"),
    (["project_name=2fa checks"], "package_name '2fa_checks' is not a valid Python package name"),
    (["package_name=class"], "is a Python keyword"),
    (["package_name=json"], "would shadow the module of the same name"),
    (["package_name=numpy"], "would shadow the module of the same name"),
    (["package_name=My-Package"], "is not a valid Python package name"),
    (["k=0"], "k '0' must be a whole number of at least 1"),
    (["k=-3"], "must be a whole number of at least 1"),
    (["k=five"], "must be a whole number of at least 1"),
    (["k=2.5"], "must be a whole number of at least 1"),
]


@pytest.mark.parametrize(("answers", "message"), BAD_ANSWERS)
def test_pre_gen_hook_rejects_bad_answers_with_a_clear_message(
    tmp_path: Path, answers: list[str], message: str
) -> None:
    result = bake_cli(tmp_path, *answers)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Run cookiecutter again with corrected answers." in result.stderr
    assert not any(tmp_path.iterdir()), "nothing may be generated when an answer is invalid"


def test_an_answer_can_never_become_code(tmp_path: Path) -> None:
    """A name built to break out of the hook's string literal is just an invalid name."""
    payload = '"""); import os; os.makedirs("pwned"); ("""'
    result = bake_cli(tmp_path, f"project_slug={payload}")
    assert result.returncode != 0
    assert "is not a valid folder and distribution name" in result.stderr
    assert not (tmp_path / "pwned").exists() and not (ROOT / "pwned").exists()


@pytest.mark.parametrize(
    ("retriever", "kept"),
    [("bm25", []), ("tfidf", []), ("dense", []), ("hybrid", ["bm25.py", "dense.py"])],
)
def test_post_gen_hook_keeps_only_the_chosen_retriever(
    tmp_path: Path, retriever: str, kept: list[str]
) -> None:
    """The chosen module and those it is built from, with their tests; nothing else."""
    project = bake(tmp_path, f"retriever={retriever}")
    modules = sorted(p.name for p in project.glob("src/*/retrieval/retrievers/*.py"))
    assert modules == sorted(["__init__.py", f"{retriever}.py", *kept])
    has_dense = "dense.py" in modules
    tests = project / "tests" / "engine" / "retrieval" / "retrievers"
    assert (tests / "test_dense.py").is_file() == has_dense
    assert (tests / "test_hybrid.py").is_file() == (retriever == "hybrid")
    assert (project / "evals" / "baseline.json").is_file()
    assert not (project / "evals" / "baselines").exists()


@pytest.mark.parametrize("judge", ["lexical", "nli"])
def test_post_gen_hook_keeps_only_the_chosen_judge(tmp_path: Path, judge: str) -> None:
    """The NLI module and its tests ship only with the nli choice; the shipped baselines were
    judged by the lexical judge, so an nli project starts without one and says so."""
    result = bake_cli(tmp_path, f"judge={judge}")
    assert result.returncode == 0, result.stderr
    (project,) = tmp_path.iterdir()
    modules = sorted(p.name for p in project.glob("src/*/answers/judges/*.py"))
    expected = ["__init__.py", "claims.py", "guard.py", "lexical.py", "lexicon.py", "words.py"]
    expected += ["nli.py"] if judge == "nli" else []
    assert modules == sorted(expected)
    assert (project / "tests" / "engine" / "answers" / "test_judge_nli.py").exists() == (judge == "nli")
    assert (project / "evals" / "baseline.json").exists() == (judge == "lexical")
    if judge == "nli":
        assert "judged by the lexical judge; you chose nli" in result.stdout


def test_a_k_without_a_shipped_baseline_starts_without_one_and_says_how_to_make_it(tmp_path: Path) -> None:
    result = bake_cli(tmp_path, "k=3")
    assert result.returncode == 0, result.stderr
    assert "Make yours with `nox -s baseline`" in result.stdout
    (project,) = tmp_path.iterdir()
    assert not (project / "evals" / "baseline.json").exists()
    assert '"recall@3"' in (project / "eval.toml").read_text(encoding="utf-8")


def test_post_gen_hook_is_idempotent(tmp_path: Path) -> None:
    """`cruft update` runs the hook again; a second run changes nothing and succeeds."""
    project = bake(tmp_path / "out")
    before = {p.relative_to(project): p.read_bytes() for p in project.rglob("*") if p.is_file()}
    answers = {**ANSWERS, "retriever": "bm25", "judge": "lexical", "k": "5"}
    answers["package_name"] = package_of(project)
    script = tmp_path / "post_gen_again.py"
    script.write_text(render_hook("post_gen_project.py", answers), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)], cwd=project, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    after = {p.relative_to(project): p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert after == before


def test_hooks_never_run_git_prompt_or_touch_the_network() -> None:
    """cruft re-runs hooks: they must stay pure file operations on the standard library."""
    for hook in (ROOT / "hooks").glob("*.py"):
        source = hook.read_text(encoding="utf-8")
        for forbidden in ("subprocess", "git ", "input(", "urllib", "socket", "requests"):
            assert forbidden not in source, f"{hook.name} uses {forbidden!r}"
