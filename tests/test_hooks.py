"""The hooks: answers are validated before anything is written; after, the engine is pinned
and the chosen retriever's baseline is put in place."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import (
    ANSWERS,
    ENGINE,
    ENGINE_VERSION,
    RETRIEVER_EXTRAS,
    ROOT,
    SHIPPED_RETRIEVERS,
    TEMPLATE,
    bake,
    bake_cli,
    engine_pin,
    package_of,
    pin_extras,
    project_files,
    render_hook,
)

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
COMMIT = "0123456789abcdef0123456789abcdef01234567"


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


@pytest.mark.parametrize("retriever", SHIPPED_RETRIEVERS)
def test_post_gen_hook_places_the_chosen_baseline_and_pins_its_extras(tmp_path: Path, retriever: str) -> None:
    """The chosen retriever's shipped baseline becomes evals/baseline.json (the others go);
    retriever.py builds that retriever from the engine, which holds every retriever."""
    project = bake(tmp_path, f"retriever={retriever}")
    shipped = TEMPLATE / "evals" / "baselines" / f"{retriever}.json"
    assert (project / "evals" / "baseline.json").read_bytes() == shipped.read_bytes()
    assert not (project / "evals" / "baselines").exists()
    assert pin_extras(engine_pin(project)) == RETRIEVER_EXTRAS[retriever]
    source = (project / "src" / package_of(project) / "retriever.py").read_text(encoding="utf-8")
    assert f'return retriever("{retriever}").build(documents, tokenize, options)' in source
    registered = tomllib.loads((ENGINE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert retriever in registered["entry-points"]["rag_regress.retrievers"], "the engine registers it"


@pytest.mark.parametrize(
    "answers", [["retriever=http"], ["generator=openai"], ["retriever=http", "generator=openai"]]
)
def test_a_teams_own_service_starts_without_a_baseline_and_says_how_to_make_it(
    tmp_path: Path, answers: list[str]
) -> None:
    result = bake_cli(tmp_path, *answers)
    assert result.returncode == 0, result.stderr
    (project,) = tmp_path.iterdir()
    assert (
        not (project / "evals" / "baseline.json").exists() and not (project / "evals" / "baselines").exists()
    )
    assert "no baseline can ship" in result.stdout and "nox -s baseline -- --fit-floors" in result.stdout
    openai = "generator=openai" in answers
    assert (project / "prompts" / "answer.txt").is_file() == openai
    generator = (project / "src" / package_of(project) / "generator.py").read_text(encoding="utf-8")
    assert ("from rag_regress.adapters import openai\n" in generator) == openai
    settings = (project / "eval.toml").read_text(encoding="utf-8")
    assert ('prompt = "prompts/answer.txt"' in settings) == openai
    # The stand-in's threshold is in the retriever's units: for a service's, --fit-floors finds it.
    assert bool(re.search(r"^min_score = ", settings, re.M)) == (
        not openai and "retriever=http" not in answers
    )


@pytest.mark.parametrize("judge", ["lexical", "nli", "llm"])
def test_post_gen_hook_places_a_baseline_only_for_the_judge_it_was_made_with(
    tmp_path: Path, judge: str
) -> None:
    """The shipped baselines were judged by the lexical judge, so an nli or llm project starts
    without one and says so (the llm judge's, a server to start first); the pin carries the nli
    extra for nli alone."""
    result = bake_cli(tmp_path, f"judge={judge}")
    assert result.returncode == 0, result.stderr
    (project,) = tmp_path.iterdir()
    assert (project / "evals" / "baseline.json").exists() == (judge == "lexical")
    assert not (project / "evals" / "baselines").exists()
    assert ("nli" in pin_extras(engine_pin(project))) == (judge == "nli")
    if judge == "nli":
        assert "judged by the lexical judge; you chose nli" in result.stdout
    if judge == "llm":
        assert "no baseline can ship for the judge llm (your own service). Start it" in result.stdout


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
    before = {p.relative_to(project): p.read_bytes() for p in project_files(project)}
    # The answers cookiecutter handed the hook: the template folder it rendered, as given.
    answers = {**ANSWERS, "retriever": "bm25", "generator": "stand-in", "judge": "lexical", "k": "5"}
    answers |= {"package_name": package_of(project), "_template": str(ROOT), "_repo_dir": str(ROOT)}
    script = tmp_path / "post_gen_again.py"
    script.write_text(render_hook("post_gen_project.py", answers), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)], cwd=project, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    after = {p.relative_to(project): p.read_bytes() for p in project_files(project)}
    assert after == before


def post_gen_hook(answers: dict) -> SimpleNamespace:
    """The post-generation hook rendered with `answers`, its functions loaded (main not run)."""
    namespace: dict = {"__name__": "post_gen_project"}
    exec(compile(render_hook("post_gen_project.py", answers), "post_gen_project.py", "exec"), namespace)
    return SimpleNamespace(**namespace)


@pytest.mark.parametrize(
    ("given", "pin"),
    [
        (
            {"_template": "gh:team/rag-eval-template", "_commit": COMMIT},
            "https://github.com/team/rag-eval-template",
        ),
        ({"_template": "https://git.example.com/t.git", "_commit": COMMIT}, "https://git.example.com/t.git"),
        (
            {"_template": "git@git.example.com:team/t.git", "_commit": COMMIT},
            "git@git.example.com:team/t.git",
        ),
        ({"_template": "git+ssh://git@example.com/t.git", "_commit": COMMIT}, "ssh://git@example.com/t.git"),
        ({"_template": "file:///srv/templates/t", "_commit": COMMIT}, "file:///srv/templates/t"),
        ({"_template": "https://git.example.com/t.git"}, None),  # no commit known
        ({"_template": "https://git.example.com/t.git", "_commit": "main"}, None),  # a branch is no pin
        ({"_template": "/home/me/rag-eval-template", "_commit": COMMIT}, None),  # a path of this machine
        ({}, None),
    ],
)
@pytest.mark.parametrize(
    ("answers", "extras"), [({}, ""), ({"retriever": "hybrid", "judge": "nli"}, "[hybrid,nli]")]
)
def test_the_engine_pin_names_a_commit_of_a_reachable_url_or_the_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: dict, pin: str | None, answers: dict, extras: str
) -> None:
    """A git URL and a 40-hex commit: that commit of that URL; anything less: the release of
    the engine this template carries. Never a path of the machine that bakes. (The extras are
    pyproject.toml's as rendered from the choices: test_bake.py checks them.)"""
    monkeypatch.chdir(tmp_path)  # `_repo_dir` unset: the hook looks at no real folder
    hook = post_gen_hook({**ANSWERS, "retriever": "bm25", "judge": "lexical", **answers, **given})
    expected = f"rag-regress{extras} @ git+{pin}@{COMMIT}#subdirectory=engine" if pin else None
    released = f"rag-regress{extras}=={ENGINE_VERSION}"
    assert hook.engine_requirement(hook.ANSWERS, extras) == (expected or released)


def test_hooks_never_run_git_prompt_or_touch_the_network() -> None:
    """cruft re-runs hooks: they must stay pure file operations on the standard library."""
    forbidden_modules = {"subprocess", "socket", "urllib", "http", "requests", "ftplib", "asyncio"}
    forbidden_calls = {"input", "system", "popen", "exec", "eval", "spawn", "execv", "fork"}
    for hook in (ROOT / "hooks").glob("*.py"):
        tree = ast.parse(render_hook(hook.name, ANSWERS))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                used = {name.split(".")[0] for name in names} & forbidden_modules
                assert not used, f"{hook.name} imports {used}"
                assert all(name.split(".")[0] in sys.stdlib_module_names | {"__future__"} for name in names)
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                assert name not in forbidden_calls, f"{hook.name} calls {name}()"
